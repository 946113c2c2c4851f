package io.mailroom.email.transport.smtp;

import javax.net.ssl.SSLContext;
import javax.net.ssl.SSLException;
import javax.net.ssl.SSLSocket;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.SocketException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * A minimal SMTP server for tests whose replies are scripted, so each reply code and the "no final
 * reply after DATA" case can be produced on demand (GreenMail always accepts). It records the
 * connections and commands it saw, and which network read brought each command ({@link #batches()}),
 * so a test can tell pipelined commands (one read) from commands sent one at a time.
 *
 * <p>It keeps the transaction state a real server keeps: {@code RCPT} without an accepted
 * {@code MAIL} is answered {@code 503}, a second {@code MAIL} in an open transaction too, and
 * {@code DATA} without an accepted recipient {@code 554} (RFC 2920 has the server refuse it so a
 * pipelining client sends no message data).
 */
final class ScriptedSmtpServer implements AutoCloseable {

    private final ServerSocket server;
    private final List<Socket> sockets = new CopyOnWriteArrayList<>();
    final AtomicInteger connections = new AtomicInteger();
    final List<String> commands = new CopyOnWriteArrayList<>();
    final AtomicInteger messagesCompleted = new AtomicInteger();
    /** Each completed message as received: CRLF line ends, dot-stuffing undone (ASCII, as Jakarta Mail sends). */
    final List<String> messages = new CopyOnWriteArrayList<>();
    /** Per command, in order: the number of the network read (counted over all connections) that completed it. */
    final List<Integer> commandReads = new CopyOnWriteArrayList<>();
    private final AtomicInteger reads = new AtomicInteger();

    /** Advertise PIPELINING (RFC 2920) in the EHLO answer. */
    volatile boolean pipelining;

    volatile String greeting = "220 scripted ESMTP";
    /** A 421 closes the connection after it is sent, as the code says. */
    volatile String mailFromReply = "250 2.1.0 OK";
    volatile String rcptReply = "250 2.1.5 OK";
    /** Replies to RCPT for particular mailboxes (lower-case address), over {@link #rcptReply}. */
    final Map<String, String> rcptReplyByMailbox = new ConcurrentHashMap<>();
    volatile String dataReply = "354 End data with <CR><LF>.<CR><LF>";
    /** null: never answer after the final dot (the client must time out). */
    volatile String finalReply = "250 2.0.0 OK queued as Q123";
    /** Close the connection right after answering the final dot, like a server with a short idle timeout. */
    volatile boolean closeAfterMessage;
    /** Close the connection once the final dot arrived, without any reply (the message may have been queued). */
    volatile boolean dropAfterData;

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

    /** The commands grouped by the network read that brought them, in order; message data is left out. */
    List<List<String>> batches() {
        List<List<String>> batches = new ArrayList<>();
        int last = -1;
        for (int i = 0; i < commands.size(); i++) {
            int read = commandReads.get(i);
            if (read != last) {
                batches.add(new ArrayList<>());
                last = read;
            }
            batches.getLast().add(commands.get(i));
        }
        return batches;
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
            Lines in = new Lines(socket.getInputStream());
            OutputStream out = socket.getOutputStream();
            boolean offerStartTls = tls != null && !implicitTls;
            boolean mailAccepted = false;
            int recipientsAccepted = 0;
            reply(out, greeting);
            if (!greeting.startsWith("2")) {
                return;
            }
            String line;
            while ((line = in.readLine()) != null) {
                commands.add(line);
                commandReads.add(in.lastRead);
                String verb = line.length() >= 4 ? line.substring(0, 4).toUpperCase(Locale.ROOT) : line;
                switch (verb) {
                    case "EHLO", "HELO" -> reply(out, ehlo(offerStartTls));
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
                        in = new Lines(socket.getInputStream());
                        out = socket.getOutputStream();
                        offerStartTls = false;
                    }
                    case "MAIL" -> {
                        if (mailAccepted) {
                            reply(out, "503 5.5.1 nested MAIL command");
                        } else {
                            String answer = mailFromReply;
                            mailAccepted = answer.startsWith("2");
                            recipientsAccepted = 0;
                            reply(out, answer);
                            if (answer.startsWith("421")) {
                                return; // "closing transmission channel"
                            }
                        }
                    }
                    case "RCPT" -> {
                        if (!mailAccepted) {
                            reply(out, "503 5.5.1 need MAIL command");
                        } else {
                            String answer = rcptReplyByMailbox.getOrDefault(mailbox(line), rcptReply);
                            if (answer.startsWith("2")) {
                                recipientsAccepted++;
                            }
                            reply(out, answer);
                        }
                    }
                    case "DATA" -> {
                        if (recipientsAccepted == 0) {
                            reply(out, mailAccepted ? "554 5.5.1 no valid recipients" : "503 5.5.1 need MAIL command");
                            continue;
                        }
                        reply(out, dataReply);
                        if (dataReply.startsWith("354")) {
                            String dataLine;
                            StringBuilder received = new StringBuilder();
                            while ((dataLine = in.readLine()) != null && !dataLine.equals(".")) {
                                received.append(dataLine.startsWith(".") ? dataLine.substring(1) : dataLine).append("\r\n");
                            }
                            if (dataLine == null) {
                                return; // the client went away mid-data: nothing was delivered
                            }
                            messages.add(received.toString());
                            messagesCompleted.incrementAndGet();
                            mailAccepted = false;
                            String answer = finalReply;
                            if (dropAfterData) {
                                return;
                            }
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
                    case "RSET" -> {
                        mailAccepted = false;
                        recipientsAccepted = 0;
                        reply(out, "250 OK");
                    }
                    case "NOOP" -> reply(out, "250 OK");
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

    private String ehlo(boolean offerStartTls) {
        List<String> lines = new ArrayList<>();
        lines.add("scripted");
        if (offerStartTls) {
            lines.add("STARTTLS");
        }
        if (pipelining) {
            lines.add("PIPELINING");
        }
        StringBuilder b = new StringBuilder();
        for (int i = 0; i < lines.size(); i++) {
            b.append(i > 0 ? "\r\n" : "").append(i < lines.size() - 1 ? "250-" : "250 ").append(lines.get(i));
        }
        return b.toString();
    }

    /**
     * Reads CRLF-terminated lines straight from the socket's stream, noting which of this server's
     * network reads completed the last line returned (a BufferedReader would hide the reads).
     */
    private final class Lines {
        private final InputStream in;
        private final byte[] buffer = new byte[8192];
        private int position;
        private int limit;
        private int currentRead = -1;
        int lastRead = -1;

        Lines(InputStream in) {
            this.in = in;
        }

        String readLine() throws IOException {
            ByteArrayOutputStream line = new ByteArrayOutputStream();
            while (true) {
                if (position == limit) {
                    limit = in.read(buffer);
                    position = 0;
                    if (limit <= 0) {
                        limit = 0;
                        return null;
                    }
                    currentRead = reads.incrementAndGet();
                }
                byte b = buffer[position++];
                if (b == '\n') {
                    lastRead = currentRead;
                    byte[] bytes = line.toByteArray();
                    int length = bytes.length > 0 && bytes[bytes.length - 1] == '\r' ? bytes.length - 1 : bytes.length;
                    return new String(bytes, 0, length, StandardCharsets.US_ASCII);
                }
                line.write(b);
            }
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
