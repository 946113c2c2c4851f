package io.mailroom.email.transport.smtp;

import javax.net.ssl.SSLContext;
import javax.net.ssl.SSLException;
import javax.net.ssl.SSLSocket;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.SocketException;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * A minimal SMTP server for tests whose replies are scripted, so each reply code and the "no final
 * reply after DATA" case can be produced on demand (GreenMail always accepts). It records the
 * connections and commands it saw.
 */
final class ScriptedSmtpServer implements AutoCloseable {

    private final ServerSocket server;
    private final List<Socket> sockets = new CopyOnWriteArrayList<>();
    final AtomicInteger connections = new AtomicInteger();
    final List<String> commands = new CopyOnWriteArrayList<>();
    final AtomicInteger messagesCompleted = new AtomicInteger();

    volatile String greeting = "220 scripted ESMTP";
    volatile String mailFromReply = "250 2.1.0 OK";
    volatile String rcptReply = "250 2.1.5 OK";
    /** Replies to RCPT for particular mailboxes (lower-case address), over {@link #rcptReply}. */
    final Map<String, String> rcptReplyByMailbox = new ConcurrentHashMap<>();
    volatile String dataReply = "354 End data with <CR><LF>.<CR><LF>";
    /** null: never answer after the final dot (the client must time out). */
    volatile String finalReply = "250 2.0.0 OK queued as Q123";
    /** Close the connection right after answering the final dot, like a server with a short idle timeout. */
    volatile boolean closeAfterMessage;

    /** Server side of TLS (implicit, or after STARTTLS), or null for plain text only. */
    private final SSLContext tls;
    private final boolean implicitTls;
    /** TLS handshakes the client broke off (it did not trust the certificate, or it named another host). */
    final AtomicInteger tlsHandshakesFailed = new AtomicInteger();

    private ScriptedSmtpServer(SSLContext tls, boolean implicitTls) throws IOException {
        this.tls = tls;
        this.implicitTls = implicitTls;
        server = implicitTls
                ? tls.getServerSocketFactory().createServerSocket(0, 50, InetAddress.getLoopbackAddress())
                : new ServerSocket(0, 50, InetAddress.getLoopbackAddress());
        Thread.ofVirtual().name("scripted-smtp-accept").start(this::acceptLoop);
    }

    static ScriptedSmtpServer start() throws IOException {
        return new ScriptedSmtpServer(null, false);
    }

    /** SMTPS: TLS from the first byte, with the server certificate of {@code tls}. */
    static ScriptedSmtpServer startImplicitTls(SSLContext tls) throws IOException {
        return new ScriptedSmtpServer(tls, true);
    }

    /** Plain text that offers STARTTLS in its EHLO answer and upgrades with {@code tls}. */
    static ScriptedSmtpServer startStartTls(SSLContext tls) throws IOException {
        return new ScriptedSmtpServer(tls, false);
    }

    int port() {
        return server.getLocalPort();
    }

    long count(String verb) {
        return commands.stream().filter(c -> c.toUpperCase(Locale.ROOT).startsWith(verb)).count();
    }

    /** RCPT commands seen for one mailbox. */
    long rcptCount(String mailbox) {
        return commands.stream().filter(c -> c.toUpperCase(Locale.ROOT).startsWith("RCPT") && mailbox.equals(mailbox(c))).count();
    }

    // "RCPT TO:<Ann@Example.com> NOTIFY=..." -> "ann@example.com"
    private static String mailbox(String command) {
        int open = command.indexOf('<');
        int close = command.indexOf('>', open + 1);
        return open < 0 || close < 0 ? "" : command.substring(open + 1, close).toLowerCase(Locale.ROOT);
    }

    private void acceptLoop() {
        while (!server.isClosed()) {
            try {
                Socket socket = server.accept();
                connections.incrementAndGet();
                sockets.add(socket);
                Thread.ofVirtual().start(() -> serve(socket));
            } catch (IOException e) {
                return;
            }
        }
    }

    private void serve(Socket plain) {
        Socket socket = plain;
        try (plain) {
            BufferedReader in = new BufferedReader(new InputStreamReader(socket.getInputStream(), StandardCharsets.US_ASCII));
            OutputStream out = socket.getOutputStream();
            boolean offerStartTls = tls != null && !implicitTls;
            reply(out, greeting);
            if (!greeting.startsWith("2")) {
                return;
            }
            String line;
            while ((line = in.readLine()) != null) {
                commands.add(line);
                String verb = line.length() >= 4 ? line.substring(0, 4).toUpperCase(Locale.ROOT) : line;
                switch (verb) {
                    case "EHLO", "HELO" -> reply(out, offerStartTls ? "250-scripted\r\n250 STARTTLS" : "250 scripted");
                    case "STAR" -> {
                        if (!offerStartTls) {
                            reply(out, "502 not implemented");
                            continue;
                        }
                        reply(out, "220 2.0.0 ready to start TLS");
                        SSLSocket upgraded = (SSLSocket) tls.getSocketFactory().createSocket(socket, null, socket.getPort(), true);
                        upgraded.setUseClientMode(false);
                        upgraded.startHandshake();
                        socket = upgraded;
                        sockets.add(upgraded);
                        in = new BufferedReader(new InputStreamReader(socket.getInputStream(), StandardCharsets.US_ASCII));
                        out = socket.getOutputStream();
                        offerStartTls = false;
                    }
                    case "MAIL" -> reply(out, mailFromReply);
                    case "RCPT" -> reply(out, rcptReplyByMailbox.getOrDefault(mailbox(line), rcptReply));
                    case "DATA" -> {
                        reply(out, dataReply);
                        if (dataReply.startsWith("354")) {
                            String dataLine;
                            while ((dataLine = in.readLine()) != null && !dataLine.equals(".")) {
                                // swallow the message
                            }
                            messagesCompleted.incrementAndGet();
                            String answer = finalReply;
                            if (answer == null) {
                                while (in.readLine() != null) {
                                    // never answer; wait for the client to give up and close
                                }
                                return;
                            }
                            reply(out, answer);
                            if (closeAfterMessage) {
                                return;
                            }
                        }
                    }
                    case "RSET", "NOOP" -> reply(out, "250 OK");
                    case "QUIT" -> {
                        reply(out, "221 bye");
                        return;
                    }
                    default -> reply(out, "502 not implemented");
                }
            }
        } catch (SocketException e) {
            // client went away
        } catch (SSLException e) {
            tlsHandshakesFailed.incrementAndGet();
        } catch (IOException e) {
            throw new RuntimeException(e);
        }
    }

    private static void reply(OutputStream out, String line) throws IOException {
        out.write((line + "\r\n").getBytes(StandardCharsets.US_ASCII));
        out.flush();
    }

    @Override
    public void close() throws IOException {
        server.close();
        for (Socket s : sockets) {
            s.close();
        }
    }
}
