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
import java.util.Locale;
import java.util.concurrent.CopyOnWriteArrayList;

/**
 * A line-based SMTP server that behaves as Postfix with {@code smtpd_helo_required = yes} and
 * {@code reject_non_fqdn_helo_hostname}: the session is opened whatever the EHLO name, but every
 * {@code RCPT TO} of a session whose EHLO name has no dot is answered
 * {@code 504 5.5.2 <name>: Helo command rejected: need fully-qualified hostname}. Other sessions
 * are accepted; each message received is kept with the EHLO name it came under. No PIPELINING, no
 * AUTH, no TLS: what a plain relay on port 25 offers.
 */
final class StrictHeloSmtpServer implements AutoCloseable {

    record Received(String helo, String rcpt, String data) {
    }

    private final ServerSocket server;
    private final Thread acceptor;
    final List<Received> received = new CopyOnWriteArrayList<>();
    final List<String> helos = new CopyOnWriteArrayList<>();
    final java.util.concurrent.atomic.AtomicInteger refusedRcpts = new java.util.concurrent.atomic.AtomicInteger();

    StrictHeloSmtpServer() throws IOException {
        server = new ServerSocket(0, 50, InetAddress.getLoopbackAddress());
        acceptor = Thread.ofPlatform().daemon().name("strict-helo-smtp").start(this::acceptLoop);
    }

    int port() {
        return server.getLocalPort();
    }

    private void acceptLoop() {
        while (!server.isClosed()) {
            try {
                Socket s = server.accept();
                Thread.ofVirtual().start(() -> session(s));
            } catch (IOException e) {
                return;
            }
        }
    }

    private void session(Socket socket) {
        try (socket) {
            BufferedReader in = new BufferedReader(new InputStreamReader(socket.getInputStream(), StandardCharsets.US_ASCII));
            OutputStream out = socket.getOutputStream();
            reply(out, "220 relay.test ESMTP");
            String helo = null;
            String rcpt = null;
            String line;
            while ((line = in.readLine()) != null) {
                String verb = line.length() >= 4 ? line.substring(0, 4).toUpperCase(Locale.ROOT) : line.toUpperCase(Locale.ROOT);
                switch (verb) {
                    case "EHLO", "HELO" -> {
                        helo = line.substring(4).strip();
                        helos.add(helo);
                        reply(out, "250-relay.test\r\n250 8BITMIME");
                    }
                    case "MAIL" -> reply(out, "250 2.1.0 Ok");
                    case "RCPT" -> {
                        if (helo == null || !helo.contains(".")) {
                            refusedRcpts.incrementAndGet();
                            reply(out, "504 5.5.2 <" + helo + ">: Helo command rejected: need fully-qualified hostname");
                        } else {
                            rcpt = line.substring(line.indexOf(':') + 1).strip();
                            reply(out, "250 2.1.5 Ok");
                        }
                    }
                    case "DATA" -> {
                        if (rcpt == null) {
                            reply(out, "554 5.5.1 Error: no valid recipients");
                            continue;
                        }
                        reply(out, "354 End data with <CR><LF>.<CR><LF>");
                        StringBuilder data = new StringBuilder();
                        String d;
                        while ((d = in.readLine()) != null && !d.equals(".")) {
                            data.append(d).append('\n');
                        }
                        received.add(new Received(helo, rcpt, data.toString()));
                        rcpt = null;
                        reply(out, "250 2.0.0 Ok: queued as " + received.size());
                    }
                    case "RSET" -> {
                        rcpt = null;
                        reply(out, "250 2.0.0 Ok");
                    }
                    case "NOOP" -> reply(out, "250 2.0.0 Ok");
                    case "QUIT" -> {
                        reply(out, "221 2.0.0 Bye");
                        return;
                    }
                    default -> reply(out, "502 5.5.2 Error: command not recognized");
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
    }
}
