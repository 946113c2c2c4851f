package io.mailroom.bench;

import io.mailroom.email.transport.smtp.MessageIds;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.util.Locale;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;

/**
 * The loopback SMTP server of scenario 4, in a process of its own: enough SMTP for Jakarta Mail
 * without TLS or authentication (EHLO/HELO, MAIL, RCPT, DATA, RSET, NOOP, QUIT), accepting every
 * message and counting it by its {@code Message-ID} (which the SMTP transport derives from the
 * idempotency key, {@link MessageIds}). A message is counted when its data has arrived in full,
 * before the {@code 250} reply. Nothing is parsed beyond the headers' Message-ID, nothing is kept.
 *
 * <p>Why not GreenMail (a dependency of the email dispatcher's demo): it parses and stores every
 * message in memory, which at thousands of messages per second would measure GreenMail.
 *
 * <p>Argument: the loopback port (0 or none: any free one). Talks with the parent as
 * {@link Acceptances} describes.
 */
public final class SmtpSinkMain {

    private final Acceptances acceptances = new Acceptances();

    private SmtpSinkMain() {
    }

    public static void main(String[] args) throws Exception {
        Logging.configure();
        SmtpSinkMain sink = new SmtpSinkMain();
        ServerSocket server = new ServerSocket();
        int port = args.length > 0 ? Integer.parseInt(args[0]) : 0;
        server.bind(new InetSocketAddress(InetAddress.getLoopbackAddress(), port), 200);
        ExecutorService sessions = Executors.newVirtualThreadPerTaskExecutor();
        Thread.ofPlatform().name("smtp-sink-accept").daemon().start(() -> {
            while (!server.isClosed()) {
                try {
                    Socket socket = server.accept();
                    sessions.execute(() -> sink.session(socket));
                } catch (IOException e) {
                    // closed: the process is stopping
                }
            }
        });
        try {
            sink.acceptances.serve(server.getLocalPort());
        } finally {
            server.close();
            sessions.shutdownNow();
        }
    }

    private void session(Socket socket) {
        try (socket) {
            socket.setTcpNoDelay(true);
            // ISO-8859-1: every byte is one char, so 8-bit content passes through unharmed
            BufferedReader in = new BufferedReader(new InputStreamReader(socket.getInputStream(), StandardCharsets.ISO_8859_1));
            OutputStream out = socket.getOutputStream();
            reply(out, "220 bench-sink ESMTP");
            String line;
            while ((line = in.readLine()) != null) {
                String verb = line.length() >= 4 ? line.substring(0, 4).toUpperCase(Locale.ROOT) : line.toUpperCase(Locale.ROOT);
                switch (verb) {
                    case "EHLO" -> reply(out, "250-bench-sink\r\n250 SIZE 52428800");
                    case "HELO" -> reply(out, "250 bench-sink");
                    case "MAIL" -> reply(out, "250 2.1.0 ok");
                    case "RCPT" -> reply(out, "250 2.1.5 ok");
                    case "DATA" -> {
                        reply(out, "354 end data with <CR><LF>.<CR><LF>");
                        String messageId = readData(in);
                        if (messageId == null) {
                            return; // the client went away mid-DATA: nothing delivered
                        }
                        if (messageId.isEmpty()) {
                            acceptances.refuse();
                            reply(out, "554 5.6.0 no Message-ID header");
                        } else {
                            acceptances.accept(messageId);
                            reply(out, "250 2.0.0 accepted");
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
        } catch (IOException e) {
            // the client closed the connection, or it broke: the session is over
        }
    }

    /** Reads message data up to the lone dot; returns its Message-ID ("" if none), or null if the stream ended first. */
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

    private static void reply(OutputStream out, String text) throws IOException {
        out.write((text + "\r\n").getBytes(StandardCharsets.US_ASCII));
        out.flush();
    }
}
