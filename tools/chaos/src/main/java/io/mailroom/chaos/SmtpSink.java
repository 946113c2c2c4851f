package io.mailroom.chaos;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.SocketException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.security.MessageDigest;
import java.util.Base64;
import java.util.Locale;
import java.util.Random;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.atomic.AtomicLong;

/**
 * A loopback SMTP server that keeps nothing but a record of what it accepted, and fails on purpose.
 * It speaks enough SMTP for Jakarta Mail (EHLO/HELO, AUTH PLAIN and LOGIN, MAIL, RCPT, DATA, RSET,
 * NOOP, QUIT) without TLS.
 *
 * <p>Faults, drawn from a seeded {@link Random}: {@code pDropBeforeData} closes the connection at
 * {@code MAIL FROM} (nothing delivered, the client knows); {@code p451} answers the end of the
 * message data with {@code 451} (not delivered, the client is told to try later);
 * {@code pDropAfterData} <b>delivers</b> the message and closes the connection without the final
 * reply, so the client cannot tell whether it went out: the SMTP form of "accepted but never
 * answered". Killing the process while a client is in DATA gives the same uncertainty without a
 * delivery.
 *
 * <p>Each delivery is recorded (time, Message-ID, kind, recipient) with an unbuffered append before
 * any reply is written, so the record is complete even after a {@code kill -9}.
 */
public final class SmtpSink implements AutoCloseable {

    /** Behaviour of the sink; rates are probabilities per message. */
    public record Settings(int port, long seed, double pDropBeforeData, double p451, double pDropAfterData,
                           String username, String password, Path record) {
        public Settings {
            if (pDropBeforeData < 0 || p451 < 0 || pDropAfterData < 0 || pDropBeforeData + p451 + pDropAfterData > 1) {
                throw new IllegalArgumentException("fault rates must be >= 0 and sum to at most 1");
            }
        }
    }

    private final Settings settings;
    private final ServerSocket server;
    private final ExecutorService threads = Executors.newVirtualThreadPerTaskExecutor();
    private final Random random;
    private final RecordWriter record;
    private final AtomicLong queued = new AtomicLong();
    private volatile boolean running = true;

    private SmtpSink(Settings settings) throws IOException {
        this.settings = settings;
        this.random = new Random(settings.seed());
        this.record = new RecordWriter(settings.record());
        this.server = new ServerSocket();
        server.setReuseAddress(true);
        server.bind(new InetSocketAddress(InetAddress.getLoopbackAddress(), settings.port()), 100);
        Thread.ofPlatform().name("smtp-sink-accept").daemon().start(this::acceptLoop);
    }

    public static SmtpSink start(Settings settings) throws IOException {
        return new SmtpSink(settings);
    }

    public int port() {
        return server.getLocalPort();
    }

    @Override
    public void close() {
        running = false;
        try {
            server.close();
        } catch (IOException ignored) {
            // stopping
        }
        threads.shutdownNow();
        record.close();
    }

    private void acceptLoop() {
        while (running) {
            try {
                Socket socket = server.accept();
                threads.execute(() -> session(socket));
            } catch (IOException e) {
                if (!running) {
                    return;
                }
            }
        }
    }

    private void session(Socket socket) {
        try (socket) {
            socket.setSoTimeout(60_000);
            BufferedReader in = new BufferedReader(new InputStreamReader(socket.getInputStream(), StandardCharsets.UTF_8));
            OutputStream out = socket.getOutputStream();
            reply(out, "220 chaos-sink ESMTP");
            String recipient = null;
            String line;
            while ((line = in.readLine()) != null) {
                String upper = line.toUpperCase(Locale.ROOT);
                if (upper.startsWith("EHLO")) {
                    reply(out, "250-chaos-sink\r\n250-8BITMIME\r\n250-AUTH PLAIN LOGIN\r\n250 SIZE 52428800");
                } else if (upper.startsWith("HELO")) {
                    reply(out, "250 chaos-sink");
                } else if (upper.startsWith("AUTH PLAIN")) {
                    String encoded = line.length() > 11 ? line.substring(11).trim() : null;
                    if (encoded == null || encoded.isEmpty()) {
                        reply(out, "334 ");
                        encoded = in.readLine();
                    }
                    String[] parts = decode(encoded).split("\0", -1);
                    boolean ok = parts.length == 3 && credentialsMatch(parts[1], parts[2]);
                    reply(out, ok ? "235 2.7.0 authenticated" : "535 5.7.8 authentication failed");
                } else if (upper.startsWith("AUTH LOGIN")) {
                    reply(out, "334 VXNlcm5hbWU6");
                    String user = decode(in.readLine());
                    reply(out, "334 UGFzc3dvcmQ6");
                    String password = decode(in.readLine());
                    reply(out, credentialsMatch(user, password) ? "235 2.7.0 authenticated" : "535 5.7.8 authentication failed");
                } else if (upper.startsWith("MAIL FROM")) {
                    if (draw() < settings.pDropBeforeData()) {
                        record.append(System.currentTimeMillis(), null, "dropped-before-data", null);
                        return; // closes the connection: nothing was delivered
                    }
                    reply(out, "250 2.1.0 ok");
                } else if (upper.startsWith("RCPT TO")) {
                    recipient = line.substring(line.indexOf(':') + 1).trim();
                    reply(out, "250 2.1.5 ok");
                } else if (upper.equals("DATA")) {
                    reply(out, "354 end data with <CR><LF>.<CR><LF>");
                    String messageId = readData(in);
                    if (messageId == null) {
                        return; // the client went away mid-DATA: nothing delivered
                    }
                    double d = draw();
                    if (d < settings.p451()) {
                        record.append(System.currentTimeMillis(), messageId, "deferred-451", recipient);
                        reply(out, "451 4.3.0 try again later");
                    } else if (d < settings.p451() + settings.pDropAfterData()) {
                        record.append(System.currentTimeMillis(), messageId, "delivered-dropped", recipient);
                        return; // delivered, but the client never hears so
                    } else {
                        record.append(System.currentTimeMillis(), messageId, "delivered", recipient);
                        reply(out, "250 2.0.0 queued as q" + queued.incrementAndGet());
                    }
                } else if (upper.startsWith("RSET") || upper.startsWith("NOOP")) {
                    reply(out, "250 2.0.0 ok");
                } else if (upper.startsWith("QUIT")) {
                    reply(out, "221 2.0.0 bye");
                    return;
                } else {
                    reply(out, "502 5.5.2 command not implemented");
                }
            }
        } catch (SocketException e) {
            // the client closed the connection
        } catch (IOException e) {
            // read timeout or broken pipe: the session is over
        }
    }

    /** Reads the message data up to the lone dot; returns its Message-ID, or null if the stream ended first. */
    private static String readData(BufferedReader in) throws IOException {
        String messageId = "(none)";
        boolean inHeaders = true;
        String line;
        while ((line = in.readLine()) != null) {
            if (line.equals(".")) {
                return messageId;
            }
            if (inHeaders) {
                if (line.isEmpty()) {
                    inHeaders = false;
                } else if (line.regionMatches(true, 0, "Message-ID:", 0, 11)) {
                    messageId = line.substring(11).trim();
                }
            }
        }
        return null;
    }

    private boolean credentialsMatch(String user, String password) {
        if (settings.username() == null) {
            return true;
        }
        // constant time, like any credential check should be
        return MessageDigest.isEqual(user.getBytes(StandardCharsets.UTF_8), settings.username().getBytes(StandardCharsets.UTF_8))
                & MessageDigest.isEqual(password.getBytes(StandardCharsets.UTF_8), settings.password().getBytes(StandardCharsets.UTF_8));
    }

    private double draw() {
        synchronized (random) {
            return random.nextDouble();
        }
    }

    private static String decode(String b64) {
        if (b64 == null) {
            return "";
        }
        try {
            return new String(Base64.getDecoder().decode(b64.trim()), StandardCharsets.UTF_8);
        } catch (IllegalArgumentException e) {
            return "";
        }
    }

    private static void reply(OutputStream out, String text) throws IOException {
        out.write((text + "\r\n").getBytes(StandardCharsets.UTF_8));
        out.flush();
    }

    /**
     * {@code SmtpSink --port N --record FILE --port-file FILE [--seed N] [--p-drop-before 0.02] [--p451 0.02]
     * [--p-drop-after 0.02] [--username U --password P]}: runs until killed.
     */
    public static void main(String[] args) throws Exception {
        Args a = Args.parse(args);
        SmtpSink sink = start(new Settings(a.integer("port", 0), a.longValue("seed", 1), a.decimal("p-drop-before", 0.02),
                a.decimal("p451", 0.02), a.decimal("p-drop-after", 0.02), a.string("username", null),
                a.string("password", null), Path.of(a.required("record"))));
        Runtime.getRuntime().addShutdownHook(new Thread(sink::close, "smtp-sink-stop"));
        Path portFile = Path.of(a.required("port-file"));
        Path tmp = portFile.resolveSibling(portFile.getFileName() + ".tmp");
        Files.writeString(tmp, Integer.toString(sink.port()));
        Files.move(tmp, portFile, StandardCopyOption.ATOMIC_MOVE);
        System.out.println("SMTP sink listening on 127.0.0.1:" + sink.port());
        Thread.currentThread().join();
    }
}
