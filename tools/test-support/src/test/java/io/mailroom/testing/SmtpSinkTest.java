package io.mailroom.testing;

import io.mailroom.testing.SmtpSink.Faults;
import io.mailroom.testing.SmtpSink.Outcome;
import io.mailroom.testing.SmtpSink.Settings;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** The fake mail server of the tools, spoken to over a raw socket. */
class SmtpSinkTest {

    record Heard(Outcome outcome, String messageId, String recipient) {
    }

    private final BlockingQueue<Heard> heard = new LinkedBlockingQueue<>();
    private final List<SmtpSink> sinks = new ArrayList<>();

    @AfterEach
    void closeSinks() {
        sinks.forEach(SmtpSink::close);
    }

    private SmtpSink start(Settings settings) throws IOException {
        SmtpSink sink = SmtpSink.start(settings, (o, id, rcpt) -> heard.add(new Heard(o, id, rcpt)));
        sinks.add(sink);
        return sink;
    }

    @Test
    void acceptsAMessageAndTellsTheListenerBeforeTheReply() throws Exception {
        SmtpSink sink = start(Settings.plain(0));
        try (Client c = new Client(sink.port())) {
            assertThat(c.read()).startsWith("220 ");
            assertThat(c.command("EHLO client")).contains("250 SIZE").doesNotContain("AUTH");
            assertThat(c.command("MAIL FROM:<shop@example.com>")).startsWith("250 ");
            assertThat(c.command("RCPT TO:<ada@example.com>")).startsWith("250 ");
            assertThat(c.command("DATA")).startsWith("354 ");
            assertThat(c.command("Message-ID: <k-1@mailroom>\r\nSubject: hi\r\n\r\nMessage-ID: <not-a-header>\r\n.")).isEqualTo("250 2.0.0 queued as q1");
            assertThat(heard.poll()).isEqualTo(new Heard(Outcome.DELIVERED, "<k-1@mailroom>", "<ada@example.com>"));

            // a second message on the same connection, 8-bit body, no Message-ID: refused, not counted as delivered
            c.command("MAIL FROM:<shop@example.com>");
            c.command("RCPT TO:<bob@example.com>");
            c.command("DATA");
            assertThat(c.command("Subject: \u00e9t\u00e9\r\n\r\nbody\r\n.")).startsWith("554 ");
            assertThat(heard.poll()).isEqualTo(new Heard(Outcome.REFUSED_NO_MESSAGE_ID, null, "<bob@example.com>"));
            assertThat(c.command("NOOP")).startsWith("250 ");
            assertThat(c.command("VRFY ada")).startsWith("502 ");
            assertThat(c.command("QUIT")).startsWith("221 ");
        }
        assertThat(heard).isEmpty();
    }

    @Test
    void withPipeliningItAdvertisesItAndAnswersAGroupOfCommandsInOrder() throws Exception {
        SmtpSink plain = start(Settings.plain(0));
        try (Client c = new Client(plain.port())) {
            c.read();
            assertThat(c.command("EHLO client")).doesNotContain("PIPELINING");
        }
        SmtpSink sink = start(Settings.plain(0).withPipelining(true));
        try (Client c = new Client(sink.port())) {
            c.read();
            assertThat(c.command("EHLO client")).contains("250-PIPELINING");
            for (int i = 1; i <= 2; i++) {
                c.write("MAIL FROM:<shop@example.com>\r\nRCPT TO:<ada@example.com>\r\nDATA");
                assertThat(List.of(c.read(), c.read(), c.read())).satisfiesExactly(
                        mail -> assertThat(mail).startsWith("250 2.1.0"),
                        rcpt -> assertThat(rcpt).startsWith("250 2.1.5"),
                        data -> assertThat(data).startsWith("354 "));
                assertThat(c.command("Message-ID: <k-" + i + "@mailroom>\r\n\r\nhello\r\n.")).isEqualTo("250 2.0.0 queued as q" + i);
                assertThat(heard.poll()).isEqualTo(new Heard(Outcome.DELIVERED, "<k-" + i + "@mailroom>", "<ada@example.com>"));
            }
            c.write("RSET\r\nNOOP\r\nQUIT");
            assertThat(List.of(c.read(), c.read(), c.read())).containsExactly("250 2.0.0 ok", "250 2.0.0 ok", "221 2.0.0 bye");
        }
    }

    @Test
    void aReplyDelayChangesNothingButWhenRepliesLeave() throws Exception {
        for (boolean pipelining : new boolean[]{false, true}) {
            SmtpSink sink = start(Settings.plain(0).withPipelining(pipelining).withReplyDelay(Duration.ofMillis(1)));
            try (Client c = new Client(sink.port())) {
                assertThat(c.read()).startsWith("220 ");
                assertThat(c.command("EHLO client")).contains("250 SIZE");
                assertThat(c.send("<d-" + pipelining + "@mailroom>", "<ada@example.com>")).startsWith("250 2.0.0 queued as q1");
            }
            assertThat(heard.poll()).isEqualTo(new Heard(Outcome.DELIVERED, "<d-" + pipelining + "@mailroom>", "<ada@example.com>"));
        }
    }

    @Test
    void authIsOfferedOnlyWithCredentialsAndChecksThem() throws Exception {
        SmtpSink open = start(Settings.plain(0));
        try (Client c = new Client(open.port())) {
            c.read();
            assertThat(c.command("AUTH PLAIN " + plain("mailer", "secret"))).startsWith("502 ");
        }
        SmtpSink guarded = start(new Settings(0, Faults.NONE, "mailer", "s3cret pass"));
        try (Client c = new Client(guarded.port())) {
            c.read();
            assertThat(c.command("EHLO client")).contains("AUTH PLAIN LOGIN");
            assertThat(c.command("AUTH PLAIN " + plain("mailer", "wrong"))).startsWith("535 ");
            assertThat(c.command("AUTH PLAIN")).isEqualTo("334 ");
            assertThat(c.command(plain("mailer", "s3cret pass"))).startsWith("235 ");
            assertThat(c.command("AUTH LOGIN")).startsWith("334 ");
            assertThat(c.command(b64("mailer"))).startsWith("334 ");
            assertThat(c.command(b64("s3cret pass"))).startsWith("235 ");
            assertThat(c.command("AUTH CRAM-MD5")).startsWith("504 ");
        }
    }

    @Test
    void faultsDropBeforeDataDeferOrDeliverWithoutAnswering() throws Exception {
        SmtpSink dropBefore = start(new Settings(0, new Faults(1, 1, 0, 0), null, null));
        try (Client c = new Client(dropBefore.port())) {
            c.read();
            assertThat(c.command("MAIL FROM:<shop@example.com>")).as("connection closed").isNull();
        }
        assertThat(heard.poll()).isEqualTo(new Heard(Outcome.DROPPED_BEFORE_DATA, null, null));

        SmtpSink defer = start(new Settings(0, new Faults(1, 0, 1, 0), null, null));
        try (Client c = new Client(defer.port())) {
            c.read();
            assertThat(c.send("<k-2@mailroom>", "<ada@example.com>")).startsWith("451 ");
        }
        assertThat(heard.poll()).isEqualTo(new Heard(Outcome.DEFERRED_451, "<k-2@mailroom>", "<ada@example.com>"));

        SmtpSink dropAfter = start(new Settings(0, new Faults(1, 0, 0, 1), null, null));
        try (Client c = new Client(dropAfter.port())) {
            c.read();
            assertThat(c.send("<k-3@mailroom>", "<ada@example.com>")).as("delivered, never answered").isNull();
        }
        assertThat(heard.poll()).isEqualTo(new Heard(Outcome.DELIVERED_DROPPED, "<k-3@mailroom>", "<ada@example.com>"));
    }

    @Test
    void theSameSeedGivesTheSameFaults() throws Exception {
        assertThat(outcomes(42)).isEqualTo(outcomes(42)).contains(Outcome.DELIVERED, Outcome.DEFERRED_451);
    }

    private List<Outcome> outcomes(long seed) throws Exception {
        SmtpSink sink = start(new Settings(0, new Faults(seed, 0, 0.5, 0), null, null));
        List<Outcome> seen = new ArrayList<>();
        try (Client c = new Client(sink.port())) {
            c.read();
            for (int i = 0; i < 30; i++) {
                c.send("<k-" + i + "@mailroom>", "<ada@example.com>");
                seen.add(heard.poll().outcome());
            }
        }
        return seen;
    }

    @Test
    void badSettingsAreRefusedNamingWhatIsWrong() {
        assertThatThrownBy(() -> new Faults(1, -0.1, 0, 0)).hasMessageContaining("pDropBeforeData=-0.1");
        assertThatThrownBy(() -> new Faults(1, 0.5, 0.3, 0.3)).hasMessageContaining("sum to at most 1");
        assertThatThrownBy(() -> new Faults(1, Double.NaN, 0, 0)).hasMessageContaining("NaN");
        assertThatThrownBy(() -> new Settings(0, Faults.NONE, "mailer", null)).hasMessageContaining("together");
        assertThatThrownBy(() -> Settings.plain(70000)).hasMessageContaining("port must be 0..65535");
        assertThatThrownBy(() -> Settings.plain(0).withReplyDelay(Duration.ofMillis(-1))).hasMessageContaining("replyDelay");
    }

    private static String plain(String user, String password) {
        return b64("\0" + user + "\0" + password);
    }

    private static String b64(String s) {
        return Base64.getEncoder().encodeToString(s.getBytes(StandardCharsets.UTF_8));
    }

    /** A line-at-a-time SMTP client; a reply is read to its last line, null when the server closed. */
    private static final class Client implements AutoCloseable {
        private final Socket socket;
        private final BufferedReader in;
        private final OutputStream out;

        Client(int port) throws IOException {
            socket = new Socket(InetAddress.getLoopbackAddress(), port);
            socket.setSoTimeout(10_000);
            in = new BufferedReader(new InputStreamReader(socket.getInputStream(), StandardCharsets.ISO_8859_1));
            out = socket.getOutputStream();
        }

        String read() throws IOException {
            StringBuilder reply = new StringBuilder();
            String line;
            while ((line = in.readLine()) != null) {
                reply.append(reply.isEmpty() ? "" : "\n").append(line);
                if (line.length() < 4 || line.charAt(3) != '-') {
                    return reply.toString();
                }
            }
            return reply.isEmpty() ? null : reply.toString();
        }

        String command(String line) throws IOException {
            write(line);
            return read();
        }

        /** Writes lines (CRLF-separated) in one write, without waiting for any reply. */
        void write(String lines) throws IOException {
            out.write((lines + "\r\n").getBytes(StandardCharsets.ISO_8859_1));
            out.flush();
        }

        /** One whole transaction; the reply to the end of the data. */
        String send(String messageId, String recipient) throws IOException {
            command("MAIL FROM:<shop@example.com>");
            command("RCPT TO:" + recipient);
            command("DATA");
            return command("Message-ID: " + messageId + "\r\n\r\nhello\r\n.");
        }

        @Override
        public void close() throws IOException {
            socket.close();
        }
    }
}
