package io.mailroom.email.service;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * A TCP forwarder in front of the test's PostgreSQL, on a fixed loopback port, that a test can shut
 * (the port refuses connections and every forwarded session is cut, as when the server is down or
 * restarting) and open again. The dispatcher under test is pointed at {@link #jdbcUrl(String)}.
 */
final class TcpGate implements AutoCloseable {

    private static final Pattern HOST_PORT = Pattern.compile("^jdbc:postgresql://([^/:?]+)(?::(\\d+))?(/.*)$");

    private final String targetHost;
    private final int targetPort;
    private final int port;
    private final List<Socket> sessions = new CopyOnWriteArrayList<>();
    private ServerSocket listener;

    private TcpGate(String targetHost, int targetPort) throws IOException {
        this.targetHost = targetHost;
        this.targetPort = targetPort;
        this.listener = bind(0);
        this.port = listener.getLocalPort();
        acceptLoop(listener);
    }

    /** A gate, open, in front of the server that {@code jdbcUrl} names. */
    static TcpGate inFrontOf(String jdbcUrl) throws IOException {
        Matcher m = HOST_PORT.matcher(jdbcUrl);
        if (!m.matches()) {
            throw new IllegalArgumentException("not a jdbc:postgresql://host[:port]/... URL: " + jdbcUrl);
        }
        return new TcpGate(m.group(1), m.group(2) == null ? 5432 : Integer.parseInt(m.group(2)));
    }

    /** {@code jdbcUrl} with its host and port replaced by this gate's. */
    String jdbcUrl(String jdbcUrl) {
        Matcher m = HOST_PORT.matcher(jdbcUrl);
        if (!m.matches()) {
            throw new IllegalArgumentException("not a jdbc:postgresql://host[:port]/... URL: " + jdbcUrl);
        }
        return "jdbc:postgresql://127.0.0.1:" + port + m.group(3);
    }

    int port() {
        return port;
    }

    /** Refuses new connections and cuts every forwarded one. */
    synchronized void shut() throws IOException {
        if (listener != null) {
            listener.close();
            listener = null;
        }
        for (Socket s : sessions) {
            closeQuietly(s);
        }
        sessions.clear();
    }

    /** Accepts connections again, on the same port. */
    synchronized void open() throws IOException {
        if (listener == null) {
            listener = bind(port);
            acceptLoop(listener);
        }
    }

    @Override
    public void close() throws IOException {
        shut();
    }

    private static ServerSocket bind(int port) throws IOException {
        ServerSocket s = new ServerSocket();
        s.setReuseAddress(true);
        s.bind(new InetSocketAddress(InetAddress.getLoopbackAddress(), port));
        return s;
    }

    private void acceptLoop(ServerSocket server) {
        Thread.ofPlatform().daemon().name("tcp-gate-" + port).start(() -> {
            while (!server.isClosed()) {
                try {
                    Socket client = server.accept();
                    Socket upstream;
                    try {
                        upstream = new Socket(targetHost, targetPort);
                    } catch (IOException e) {
                        closeQuietly(client);
                        continue;
                    }
                    synchronized (this) {
                        if (server.isClosed()) { // shut while this one was being connected
                            closeQuietly(client);
                            closeQuietly(upstream);
                            continue;
                        }
                        sessions.add(client);
                        sessions.add(upstream);
                    }
                    pump(client, upstream);
                    pump(upstream, client);
                } catch (IOException e) {
                    // shut
                }
            }
        });
    }

    private void pump(Socket from, Socket to) {
        Thread.ofVirtual().start(() -> {
            byte[] buffer = new byte[16 * 1024];
            try (InputStream in = from.getInputStream(); OutputStream out = to.getOutputStream()) {
                for (int n; (n = in.read(buffer)) >= 0; ) {
                    out.write(buffer, 0, n);
                    out.flush();
                }
            } catch (IOException e) {
                // cut
            } finally {
                closeQuietly(from);
                closeQuietly(to);
                sessions.remove(from);
                sessions.remove(to);
            }
        });
    }

    private static void closeQuietly(Socket s) {
        try {
            s.close();
        } catch (IOException ignored) {
            // already closed
        }
    }
}
