package io.mailroom.email.service;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * A loopback SMTP server that fails on purpose, and counts what reached it.
 *
 * <ul>
 *   <li>{@link Mode#REFUSE_SESSION}: answers the greeting with {@code 554} and closes; nothing is
 *       ever accepted, and the client knows it;</li>
 *   <li>{@link Mode#SILENT_AFTER_DATA}: takes the envelope and the message data, then never answers
 *       the final dot (the connection stays open): the client cannot tell whether it was accepted.</li>
 * </ul>
 */
final class FaultySmtpServer implements AutoCloseable {

    enum Mode { REFUSE_SESSION, SILENT_AFTER_DATA }

    private final ServerSocket server;
    private final Mode mode;
    private final List<Socket> open = new CopyOnWriteArrayList<>();
    final AtomicInteger sessions = new AtomicInteger();
    /** Messages whose data ended with the final dot (which was never answered). */
    final AtomicInteger messagesReceived = new AtomicInteger();

    FaultySmtpServer(Mode mode) throws IOException {
        this.mode = mode;
        this.server = new ServerSocket(0, 50, InetAddress.getLoopbackAddress());
        Thread accept = new Thread(this::acceptLoop, "faulty-smtp");
        accept.setDaemon(true);
        accept.start();
    }

    int port() {
        return server.getLocalPort();
    }

    private void acceptLoop() {
        while (!server.isClosed()) {
            try {
                Socket s = server.accept();
                open.add(s);
                sessions.incrementAndGet();
                Thread t = new Thread(() -> serve(s), "faulty-smtp-session");
                t.setDaemon(true);
                t.start();
            } catch (IOException e) {
                return; // closed
            }
        }
    }

    private void serve(Socket s) {
        try (s) {
            OutputStream out = s.getOutputStream();
            if (mode == Mode.REFUSE_SESSION) {
                reply(out, "554 5.3.2 no service here");
                return;
            }
            BufferedReader in = new BufferedReader(new InputStreamReader(s.getInputStream(), StandardCharsets.US_ASCII));
            reply(out, "220 faulty ESMTP");
            boolean data = false;
            for (String line; (line = in.readLine()) != null; ) {
                if (data) {
                    if (line.equals(".")) {
                        messagesReceived.incrementAndGet();
                        data = false; // and no reply, ever
                    }
                    continue;
                }
                String verb = line.length() >= 4 ? line.substring(0, 4).toUpperCase(java.util.Locale.ROOT) : line;
                switch (verb) {
                    case "EHLO" -> reply(out, "250-faulty\r\n250 8BITMIME");
                    case "HELO", "MAIL", "RCPT", "RSET", "NOOP" -> reply(out, "250 ok");
                    case "DATA" -> {
                        reply(out, "354 go ahead");
                        data = true;
                    }
                    case "QUIT" -> {
                        reply(out, "221 bye");
                        return;
                    }
                    default -> reply(out, "500 unknown");
                }
            }
        } catch (IOException e) {
            // the client went away
        }
    }

    private static void reply(OutputStream out, String text) throws IOException {
        out.write((text + "\r\n").getBytes(StandardCharsets.US_ASCII));
        out.flush();
    }

    @Override
    public void close() throws IOException {
        server.close();
        for (Socket s : open) {
            s.close();
        }
    }
}
