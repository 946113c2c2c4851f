package io.mailroom.testing;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.time.Duration;
import java.util.Base64;
import java.util.Locale;
import java.util.Objects;
import java.util.Random;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.atomic.AtomicLong;

/**
 * A loopback SMTP server that keeps no message: it tells a {@link Listener} what became of each one
 * and can fail on purpose. It speaks enough SMTP for Jakarta Mail without TLS (EHLO/HELO, AUTH
 * PLAIN and LOGIN when credentials are set, MAIL, RCPT, DATA, RSET, NOOP, QUIT). Nothing is parsed
 * beyond the headers' {@code Message-ID}; a message without one is refused with {@code 554}, since
 * nothing could match it to what was sent.
 *
 * <p>The fast path (no faults) draws no random number and takes no lock: the speed benchmarks
 * measure the dispatcher, not the sink. With {@link Faults}, drawn from a seeded {@link Random}:
 * {@code pDropBeforeData} closes the connection at {@code MAIL FROM} (nothing delivered, the client
 * knows); {@code p451} answers the end of the data with {@code 451} (not delivered, try later);
 * {@code pDropAfterData} <b>delivers</b> the message and closes the connection without the final
 * reply, so the client cannot tell whether it went out.
 */
public final class SmtpSink implements AutoCloseable {

    /** What became of a message; the listener hears it before any reply is written. */
    public enum Outcome {
        /** Connection closed at {@code MAIL FROM}: nothing delivered, and the client knows. */
        DROPPED_BEFORE_DATA("dropped-before-data"),
        /** {@code 451} after the data: not delivered. */
        DEFERRED_451("deferred-451"),
        /** Delivered, then the connection closed without the final reply. */
        DELIVERED_DROPPED("delivered-dropped"),
        /** Delivered and answered {@code 250}. */
        DELIVERED("delivered"),
        /** No {@code Message-ID} header: refused with {@code 554}. */
        REFUSED_NO_MESSAGE_ID("refused-no-message-id");

        private final String label;

        Outcome(String label) {
            this.label = label;
        }

        /** The outcome as a record file writes it. */
        public String label() {
            return label;
        }
    }

    /**
     * Hears every message's outcome, from the session's thread (sessions run concurrently), before
     * the client gets a reply: what it records is never behind what the client was told.
     */
    @FunctionalInterface
    public interface Listener {
        /** {@code messageId} and {@code recipient} are null when the outcome came before they were known. */
        void message(Outcome outcome, String messageId, String recipient);
    }

    /** Probabilities per message; all zero is {@link #NONE}. */
    public record Faults(long seed, double pDropBeforeData, double p451, double pDropAfterData) {
        public static final Faults NONE = new Faults(0, 0, 0, 0);

        public Faults {
            if (!(pDropBeforeData >= 0) || !(p451 >= 0) || !(pDropAfterData >= 0)
                    || pDropBeforeData + p451 + pDropAfterData > 1) {
                throw new IllegalArgumentException("fault rates must be >= 0 and sum to at most 1, got pDropBeforeData="
                        + pDropBeforeData + ", p451=" + p451 + ", pDropAfterData=" + pDropAfterData);
            }
        }

        boolean any() {
            return pDropBeforeData > 0 || p451 > 0 || pDropAfterData > 0;
        }
    }

    /**
     * @param port       loopback port, 0 for any free one
     * @param username   with {@code password}, the only credentials AUTH accepts; both null: no AUTH offered
     * @param pipelining advertise {@code PIPELINING} (RFC 2920) in the EHLO answer, and hold replies
     *                   back while more commands are already waiting, flushing them together
     * @param replyDelay waited before each write of replies, standing in for a network round trip
     *                   (a loopback one is a few microseconds); zero for none
     */
    public record Settings(int port, Faults faults, String username, String password, boolean pipelining,
                           Duration replyDelay) {
        public Settings {
            if (port < 0 || port > 65535) {
                throw new IllegalArgumentException("port must be 0..65535, got " + port);
            }
            Objects.requireNonNull(faults, "faults");
            if ((username == null) != (password == null)) {
                throw new IllegalArgumentException("username and password must be given together");
            }
            if (replyDelay == null || replyDelay.isNegative()) {
                throw new IllegalArgumentException("replyDelay must be zero or more, got " + replyDelay);
            }
        }

        /** Without PIPELINING or reply delay. */
        public Settings(int port, Faults faults, String username, String password) {
            this(port, faults, username, password, false, Duration.ZERO);
        }

        /** Any free port, no faults, no AUTH, no PIPELINING. */
        public static Settings plain(int port) {
            return new Settings(port, Faults.NONE, null, null);
        }

        public Settings withPipelining(boolean on) {
            return new Settings(port, faults, username, password, on, replyDelay);
        }

        public Settings withReplyDelay(Duration delay) {
            return new Settings(port, faults, username, password, pipelining, delay);
        }
    }

    private final Settings settings;
    private final Listener listener;
    private final ServerSocket server;
    private final ExecutorService sessions = Executors.newVirtualThreadPerTaskExecutor();
    private final Random random;
    private final boolean faulty;
    private final String ehlo;
    private final AtomicLong queued = new AtomicLong();
    private volatile boolean running = true;

    private SmtpSink(Settings settings, Listener listener) throws IOException {
        this.settings = settings;
        this.listener = Objects.requireNonNull(listener, "listener");
        this.random = new Random(settings.faults().seed());
        this.faulty = settings.faults().any();
        this.ehlo = "250-mailroom-sink\r\n250-8BITMIME\r\n" + (settings.pipelining() ? "250-PIPELINING\r\n" : "")
                + (settings.username() == null ? "" : "250-AUTH PLAIN LOGIN\r\n") + "250 SIZE 52428800";
        this.server = new ServerSocket();
        server.setReuseAddress(true);
        server.bind(new InetSocketAddress(InetAddress.getLoopbackAddress(), settings.port()), 200);
        Thread.ofPlatform().name("smtp-sink-accept").daemon().start(this::acceptLoop);
    }

    /** Listens on the loopback address until {@link #close()}. */
    public static SmtpSink start(Settings settings, Listener listener) throws IOException {
        return new SmtpSink(settings, listener);
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
        sessions.shutdownNow();
    }

    private void acceptLoop() {
        while (running) {
            try {
                Socket socket = server.accept();
                sessions.execute(() -> session(socket));
            } catch (IOException e) {
                if (!running) {
                    return;
                }
            }
        }
    }

    private void session(Socket socket) {
        try (socket) {
            socket.setTcpNoDelay(true);
            socket.setSoTimeout(60_000);
            // ISO-8859-1: every byte is one char, so 8-bit content passes through unharmed
            BufferedReader in = new BufferedReader(new InputStreamReader(socket.getInputStream(), StandardCharsets.ISO_8859_1));
            // Pipelining: replies to a group of commands leave together, flushed once no further
            // command is waiting (as Postfix does); otherwise every reply is flushed at once.
            OutputStream out = settings.pipelining() || settings.replyDelay().isPositive()
                    ? new GroupedReplies(socket.getOutputStream(), in, settings.pipelining(), settings.replyDelay())
                    : socket.getOutputStream();
            try {
                converse(in, out);
            } finally {
                if (out instanceof GroupedReplies grouped) {
                    grouped.flushHeld();
                }
            }
        } catch (IOException e) {
            // the client closed the connection, a read timed out or the pipe broke: the session is over
        }
    }

    private void converse(BufferedReader in, OutputStream out) throws IOException {
        reply(out, "220 mailroom-sink ESMTP");
        String recipient = null;
        String line;
        while ((line = in.readLine()) != null) {
            int space = line.indexOf(' ');
            String verb = (space < 0 ? line : line.substring(0, space)).toUpperCase(Locale.ROOT);
            switch (verb) {
                case "EHLO" -> reply(out, ehlo);
                case "HELO" -> reply(out, "250 mailroom-sink");
                case "AUTH" -> {
                    if (!authenticate(line, in, out)) {
                        return;
                    }
                }
                case "MAIL" -> {
                    if (faulty && draw() < settings.faults().pDropBeforeData()) {
                        listener.message(Outcome.DROPPED_BEFORE_DATA, null, null);
                        return; // closes the connection: nothing was delivered
                    }
                    recipient = null;
                    reply(out, "250 2.1.0 ok");
                }
                case "RCPT" -> {
                    recipient = line.substring(line.indexOf(':') + 1).trim();
                    reply(out, "250 2.1.5 ok");
                }
                case "DATA" -> {
                    reply(out, "354 end data with <CR><LF>.<CR><LF>");
                    String messageId = readData(in);
                    if (messageId == null) {
                        return; // the client went away mid-DATA: nothing delivered
                    }
                    if (!afterData(out, messageId, recipient)) {
                        return;
                    }
                }
                case "RSET", "NOOP" -> reply(out, "250 2.0.0 ok");
                case "QUIT" -> {
                    reply(out, "221 2.0.0 bye");
                    return;
                }
                default -> reply(out, "502 5.5.2 command not implemented");
            }
        }
    }

    /** Tells the listener and answers; false when the connection is to be dropped. */
    private boolean afterData(OutputStream out, String messageId, String recipient) throws IOException {
        if (messageId.isEmpty()) {
            listener.message(Outcome.REFUSED_NO_MESSAGE_ID, null, recipient);
            reply(out, "554 5.6.0 no Message-ID header");
            return true;
        }
        double d = faulty ? draw() : 1;
        Faults f = settings.faults();
        if (d < f.p451()) {
            listener.message(Outcome.DEFERRED_451, messageId, recipient);
            reply(out, "451 4.3.0 try again later");
        } else if (d < f.p451() + f.pDropAfterData()) {
            listener.message(Outcome.DELIVERED_DROPPED, messageId, recipient);
            return false; // delivered, but the client never hears so
        } else {
            listener.message(Outcome.DELIVERED, messageId, recipient);
            reply(out, "250 2.0.0 queued as q" + queued.incrementAndGet());
        }
        return true;
    }

    /** AUTH PLAIN (inline or after 334) and AUTH LOGIN; false when the client went away. */
    private boolean authenticate(String line, BufferedReader in, OutputStream out) throws IOException {
        if (settings.username() == null) {
            reply(out, "502 5.5.1 AUTH not offered");
            return true;
        }
        String[] words = line.trim().split(" +");
        String mechanism = words.length > 1 ? words[1].toUpperCase(Locale.ROOT) : "";
        boolean ok;
        if (mechanism.equals("PLAIN")) {
            String encoded = words.length > 2 ? words[2] : null;
            if (encoded == null) {
                reply(out, "334 ");
                encoded = in.readLine();
                if (encoded == null) {
                    return false;
                }
            }
            String[] parts = decode(encoded).split("\0", -1);
            ok = parts.length == 3 && credentialsMatch(parts[1], parts[2]);
        } else if (mechanism.equals("LOGIN")) {
            reply(out, "334 VXNlcm5hbWU6");
            String user = in.readLine();
            if (user == null) {
                return false;
            }
            reply(out, "334 UGFzc3dvcmQ6");
            String password = in.readLine();
            if (password == null) {
                return false;
            }
            ok = credentialsMatch(decode(user), decode(password));
        } else {
            reply(out, "504 5.5.4 unrecognized authentication type");
            return true;
        }
        reply(out, ok ? "235 2.7.0 authenticated" : "535 5.7.8 authentication failed");
        return true;
    }

    /** Reads the message data up to the lone dot; returns its Message-ID ("" if none), or null if the stream ended first. */
    private static String readData(BufferedReader in) throws IOException {
        String messageId = "";
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
        try {
            return new String(Base64.getDecoder().decode(b64.trim()), StandardCharsets.UTF_8);
        } catch (IllegalArgumentException e) {
            return "";
        }
    }

    /**
     * Buffers replies; grouping, passes a flush on only when the client has sent nothing more yet.
     * Each write that leaves waits the reply delay first.
     */
    private static final class GroupedReplies extends java.io.BufferedOutputStream {
        private final BufferedReader in;
        private final boolean group;
        private final Duration delay;

        GroupedReplies(OutputStream out, BufferedReader in, boolean group, Duration delay) {
            super(out, 4096);
            this.in = in;
            this.group = group;
            this.delay = delay;
        }

        @Override
        public synchronized void flush() throws IOException {
            if (group && in.ready()) {
                return;
            }
            if (delay.isPositive()) {
                try {
                    Thread.sleep(delay);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    throw new java.io.InterruptedIOException("sink stopping");
                }
            }
            super.flush();
        }

        /** Before the connection closes: what is held back is still the client's. */
        void flushHeld() {
            try {
                super.flush();
            } catch (IOException ignored) {
                // the client is gone
            }
        }
    }

    private static void reply(OutputStream out, String text) throws IOException {
        out.write((text + "\r\n").getBytes(StandardCharsets.US_ASCII));
        out.flush();
    }
}
