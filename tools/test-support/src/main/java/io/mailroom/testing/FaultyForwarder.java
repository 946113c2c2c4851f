package io.mailroom.testing;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;

/**
 * A TCP forwarder on a free loopback port that a test can turn into a bad network: {@link Mode#RELAY}
 * carries bytes both ways; {@link Mode#REFUSE} resets every new connection at once (a server that is
 * down); {@link Mode#BLACKHOLE} is a path that drops packets without closing anything (a NAT or
 * firewall that lost its state, a host that vanished): new connections are accepted and then hear
 * nothing, and every connection open when the blackhole began stays silent for good, even after the
 * network is back, as it does when the state that carried it is gone. Nothing is ever closed towards
 * the client by a blackhole: only its own timeouts get it out.
 */
public final class FaultyForwarder implements AutoCloseable {

    public enum Mode { RELAY, REFUSE, BLACKHOLE }

    private final ServerSocket server;
    private final InetSocketAddress upstream;
    private final ExecutorService threads = Executors.newVirtualThreadPerTaskExecutor();
    private final Set<Link> links = ConcurrentHashMap.newKeySet();
    private volatile Mode mode;

    /** One client connection and its upstream; once dead it relays nothing, ever. */
    private static final class Link {
        final Socket client;
        volatile Socket service;
        volatile boolean dead;

        Link(Socket client) {
            this.client = client;
        }
    }

    private FaultyForwarder(InetSocketAddress upstream, Mode mode) throws IOException {
        this.upstream = upstream;
        this.mode = mode;
        this.server = new ServerSocket();
        server.bind(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 200);
        threads.execute(this::accept);
    }

    /** A forwarder to {@code host:port}, starting in {@code mode}. */
    public static FaultyForwarder to(String host, int port, Mode mode) throws IOException {
        return new FaultyForwarder(new InetSocketAddress(host, port), mode);
    }

    public int port() {
        return server.getLocalPort();
    }

    /** {@code jdbcUrl} (jdbc:postgresql://host[:port]/...) pointed at this forwarder instead. */
    public String jdbcUrl(String jdbcUrl) {
        return jdbcUrl.replaceFirst("^jdbc:postgresql://[^/]+/", "jdbc:postgresql://127.0.0.1:" + port() + "/");
    }

    /** From now on: relay, refuse, or blackhole (which also silences, for good, every connection open now). */
    public void mode(Mode next) {
        if (next == Mode.BLACKHOLE) {
            links.forEach(l -> l.dead = true);
        }
        mode = next;
    }

    /** How many client connections are open (relaying or silent). */
    public int openConnections() {
        return links.size();
    }

    @Override
    public void close() {
        try {
            server.close();
        } catch (IOException ignored) {
            // closing anyway
        }
        links.forEach(this::closeLink);
        threads.shutdownNow();
    }

    private void accept() {
        while (!server.isClosed()) {
            Socket client;
            try {
                client = server.accept();
            } catch (IOException e) {
                return; // closed
            }
            threads.execute(() -> open(client));
        }
    }

    private void open(Socket client) {
        Mode now = mode;
        if (now == Mode.REFUSE) {
            try {
                client.setSoLinger(true, 0); // a reset, as from a port nobody listens on
            } catch (IOException ignored) {
                // closing anyway
            }
            closeQuietly(client);
            return;
        }
        Link link = new Link(client);
        links.add(link);
        if (now == Mode.BLACKHOLE) {
            link.dead = true;
            threads.execute(() -> pump(link, client, null)); // read and drop whatever the client says, answer nothing
            return;
        }
        Socket service = new Socket();
        try {
            service.setTcpNoDelay(true);
            client.setTcpNoDelay(true);
            service.connect(upstream, 5_000);
        } catch (IOException e) {
            closeQuietly(service);
            closeLink(link);
            return;
        }
        link.service = service;
        threads.execute(() -> pump(link, client, service));
        threads.execute(() -> pump(link, service, client));
    }

    /** Copies {@code from} to {@code to} while the link lives; drops the bytes once it is dead. */
    private void pump(Link link, Socket from, Socket to) {
        byte[] buffer = new byte[16 * 1024];
        try {
            InputStream in = from.getInputStream();
            OutputStream out = to == null ? null : to.getOutputStream();
            for (int n; (n = in.read(buffer)) >= 0; ) {
                if (!link.dead && out != null) {
                    out.write(buffer, 0, n);
                    out.flush();
                }
            }
        } catch (IOException e) {
            // one side went away
        }
        if (!link.dead || from == link.client) {
            closeLink(link); // a dead link closes only when its client gives up
        }
    }

    private void closeLink(Link link) {
        links.remove(link);
        closeQuietly(link.client);
        Socket service = link.service;
        if (service != null) {
            closeQuietly(service);
        }
    }

    private static void closeQuietly(Socket s) {
        try {
            s.close();
        } catch (IOException ignored) {
            // already gone
        }
    }
}
