package io.mailroom.chaos;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.time.Duration;
import java.util.Arrays;
import java.util.Set;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.locks.LockSupport;

/**
 * A TCP forwarder that holds every chunk going towards the service for an adjustable delay before
 * writing it on, in order, without limiting bandwidth: {@code tc netem delay D} on the client's link,
 * for a kernel without {@code sch_netem}. Answers travel back at once, so a request/answer round trip
 * takes {@code D} longer, as with netem on one side of the link. The delay is read when a chunk
 * arrives, so {@link #delay(Duration)} applies to what comes next, on open connections too.
 *
 * <p>Each connection is two pumps on virtual threads: one reads the client and queues each chunk with
 * its due time, one waits until a chunk is due and writes it upstream; the way back is a plain copy.
 * A closed side is passed on as a half-close, an error closes both sockets.
 */
final class DelayingForwarder implements AutoCloseable {

    private static final Logger log = LoggerFactory.getLogger(DelayingForwarder.class);
    private static final byte[] END = new byte[0];

    private record Chunk(long dueNanos, byte[] bytes) {
    }

    private final ServerSocket server;
    private final InetSocketAddress upstream;
    private final ExecutorService threads = Executors.newVirtualThreadPerTaskExecutor();
    private final Set<Socket> open = ConcurrentHashMap.newKeySet();
    private volatile long delayNanos;

    private DelayingForwarder(InetSocketAddress listen, InetSocketAddress upstream) throws IOException {
        this.upstream = upstream;
        this.server = new ServerSocket();
        server.setReuseAddress(true);
        server.bind(listen, 200);
        threads.execute(this::accept);
    }

    /** Listens on {@code listen} and carries each connection to {@code upstream}, with no delay until told. */
    static DelayingForwarder start(InetSocketAddress listen, InetSocketAddress upstream) throws IOException {
        return new DelayingForwarder(listen, upstream);
    }

    /** The delay of every chunk towards the service from now on. */
    void delay(Duration delay) {
        if (delay.isNegative()) {
            throw new IllegalArgumentException("delay must be >= 0, was " + delay);
        }
        delayNanos = delay.toNanos();
    }

    Duration delay() {
        return Duration.ofNanos(delayNanos);
    }

    int port() {
        return server.getLocalPort();
    }

    @Override
    public void close() {
        try {
            server.close();
        } catch (IOException ignored) {
            // closing anyway
        }
        open.forEach(DelayingForwarder::closeQuietly);
        threads.shutdownNow();
    }

    private void accept() {
        while (!server.isClosed()) {
            Socket client;
            try {
                client = server.accept();
            } catch (IOException e) {
                if (!server.isClosed()) {
                    log.warn("Forwarder on {} stopped accepting: {}", server.getLocalSocketAddress(), e.toString());
                }
                return;
            }
            threads.execute(() -> connect(client));
        }
    }

    private void connect(Socket client) {
        Socket service = new Socket();
        open.add(client);
        open.add(service);
        try {
            client.setTcpNoDelay(true);
            service.setTcpNoDelay(true);
            service.connect(upstream, 5_000);
        } catch (IOException e) {
            log.warn("Forwarder could not reach {}: {}", upstream, e.toString());
            closeBoth(client, service);
            return;
        }
        BlockingQueue<Chunk> towardsService = new LinkedBlockingQueue<>();
        AtomicInteger directionsLeft = new AtomicInteger(2);
        Runnable oneDirectionDone = () -> {
            if (directionsLeft.decrementAndGet() == 0) {
                closeBoth(client, service);
            }
        };
        threads.execute(() -> read(client, service, towardsService));
        threads.execute(() -> writeWhenDue(towardsService, client, service, oneDirectionDone));
        threads.execute(() -> copyBack(service, client, oneDirectionDone));
    }

    private void read(Socket client, Socket service, BlockingQueue<Chunk> queue) {
        byte[] buffer = new byte[64 * 1024];
        try {
            // not closed here: closing a socket's stream closes the socket, and the other way may still run
            InputStream in = client.getInputStream();
            int n;
            while ((n = in.read(buffer)) >= 0) {
                queue.add(new Chunk(System.nanoTime() + delayNanos, Arrays.copyOf(buffer, n)));
            }
        } catch (IOException e) {
            closeBoth(client, service);
        } finally {
            queue.add(new Chunk(System.nanoTime() + delayNanos, END)); // the writer ends on it either way
        }
    }

    private void writeWhenDue(BlockingQueue<Chunk> queue, Socket client, Socket service, Runnable done) {
        try {
            OutputStream out = service.getOutputStream();
            while (true) {
                Chunk c = queue.take();
                long wait;
                while ((wait = c.dueNanos() - System.nanoTime()) > 0) {
                    LockSupport.parkNanos(wait);
                    if (Thread.interrupted()) {
                        throw new InterruptedException();
                    }
                }
                if (c.bytes() == END) {
                    service.shutdownOutput();
                    done.run();
                    return;
                }
                out.write(c.bytes());
                out.flush();
            }
        } catch (IOException | InterruptedException e) {
            closeBoth(client, service);
        }
    }

    private void copyBack(Socket service, Socket client, Runnable done) {
        byte[] buffer = new byte[64 * 1024];
        try {
            InputStream in = service.getInputStream();
            OutputStream out = client.getOutputStream();
            int n;
            while ((n = in.read(buffer)) >= 0) {
                out.write(buffer, 0, n);
                out.flush();
            }
            client.shutdownOutput();
            done.run();
        } catch (IOException e) {
            closeBoth(client, service);
        }
    }

    private void closeBoth(Socket client, Socket service) {
        closeQuietly(client);
        closeQuietly(service);
        open.remove(client);
        open.remove(service);
    }

    private static void closeQuietly(Socket s) {
        try {
            s.close();
        } catch (IOException ignored) {
            // already gone
        }
    }

    /** How many sockets (both ends of every connection) are open now. */
    int openSockets() {
        return open.size();
    }
}
