package io.mailroom.email.transport.smtp;

import io.mailroom.email.TestEmails;
import io.mailroom.email.transport.SendResult;
import jakarta.mail.Address;
import jakarta.mail.Message;
import jakarta.mail.MessagingException;
import jakarta.mail.SendFailedException;
import jakarta.mail.Session;
import jakarta.mail.internet.InternetAddress;
import jakarta.mail.internet.MimeMessage;
import org.eclipse.angus.mail.smtp.SMTPAddressFailedException;
import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

/**
 * Every test of {@link SmtpTransportTest} against a server that advertises PIPELINING (so each
 * classification holds for pipelined replies too), and what pipelining itself promises: the
 * envelope and DATA in one network read, many messages per connection, RSET only after a refused
 * transaction, no message data after a refusal, and an unknown outcome when the connection drops
 * after the final dot.
 */
class PipelinedSmtpTransportTest extends SmtpTransportTest {

    static final List<String> ENVELOPE = List.of("MAIL FROM:<shop@example.com>", "RCPT TO:<ann@example.com>", "DATA");

    @Override
    boolean pipelining() {
        return true;
    }

    @Test
    void theEnvelopeAndDataArriveInOneReadAndManyMessagesShareOneConnection() {
        for (int i = 0; i < 5; i++) {
            assertThat(transport.send(TestEmails.sample(), "email-order-" + i)).isInstanceOf(SendResult.Sent.class);
        }

        List<List<String>> batches = server.batches();
        assertThat(batches.getFirst().getFirst()).startsWith("EHLO");
        // one read per message for MAIL FROM, RCPT TO and DATA; the data came in reads of its own
        assertThat(batches.subList(1, batches.size())).hasSize(5).allSatisfy(batch -> assertThat(batch).isEqualTo(ENVELOPE));
        assertThat(server.messagesCompleted.get()).isEqualTo(5);
        assertThat(server.connections.get()).isEqualTo(1);
        // a completed transaction needs no RSET before the next one
        assertThat(server.count("RSET")).isZero();
    }

    @Test
    void aVerpReturnPathIsThePipelinedMailFromOfEachMessage() {
        transport.close();
        Verp verp = Verp.parse("bounces+{key}@shop.example");
        transport = new SmtpTransport(config(server.port()).verp(verp).build());

        assertThat(transport.send(TestEmails.sample(), "email-order-1")).isInstanceOf(SendResult.Sent.class);
        assertThat(transport.send(TestEmails.sample(), "email-order-2")).isInstanceOf(SendResult.Sent.class);

        List<List<String>> batches = server.batches();
        assertThat(batches.subList(1, batches.size())).containsExactly(
                List.of("MAIL FROM:<" + verp.addressFor("email-order-1") + ">", "RCPT TO:<ann@example.com>", "DATA"),
                List.of("MAIL FROM:<" + verp.addressFor("email-order-2") + ">", "RCPT TO:<ann@example.com>", "DATA"));
        assertThat(verp.keyOf(verp.addressFor("email-order-2"))).isEqualTo("email-order-2");
    }

    @Test
    void withoutPipeliningInTheEhloAnswerEachCommandWaitsForItsReply() {
        server.pipelining = false;
        assertThat(transport.send(TestEmails.sample(), "k1")).isInstanceOf(SendResult.Sent.class);

        List<List<String>> batches = server.batches();
        assertThat(batches.subList(1, batches.size())).containsExactly(
                List.of(ENVELOPE.get(0)), List.of(ENVELOPE.get(1)), List.of(ENVELOPE.get(2)));
    }

    @Test
    void aRefusedRecipientSendsNoDataAndOneRsetReadiesTheSessionForTheNextMessage() {
        server.rcptReplyByMailbox.put("gone@example.com", "550 5.1.1 <gone@example.com>: user unknown");

        SendResult refused = transport.send(TestEmails.to("gone@example.com"), "k1");
        SendResult next = transport.send(TestEmails.sample(), "k2");

        assertThat(refused).isInstanceOf(SendResult.Permanent.class);
        assertThat(((SendResult.Permanent) refused).code()).isEqualTo("smtp-550");
        assertThat(next).isInstanceOf(SendResult.Sent.class);
        List<List<String>> batches = server.batches();
        assertThat(batches.subList(1, batches.size())).containsExactly(
                List.of("MAIL FROM:<shop@example.com>", "RCPT TO:<gone@example.com>", "DATA"),
                List.of("RSET"),
                ENVELOPE);
        assertThat(server.messagesCompleted.get()).isEqualTo(1);
        assertThat(server.connections.get()).isEqualTo(1);
    }

    @Test
    void aSenderRefusedWhileRecipientsAndDataWereAlreadySentIsClassifiedByTheMailFromReply() {
        server.mailFromReply = "550 5.7.1 sender refused";
        SendResult result = transport.send(TestEmails.sample(), "k1");

        // our envelope sender refused (the same for every email): about the session, decided by MAIL FROM's reply
        assertThat(result).isInstanceOfSatisfying(SendResult.Transient.class, t -> {
            assertThat(t.code()).isEqualTo("smtp-550");
            assertThat(t.scope()).isEqualTo(SendResult.Scope.SESSION);
        });
        // the server refused RCPT and DATA as well (503, no transaction); no message data followed
        assertThat(server.commands).containsSubsequence(ENVELOPE);
        assertThat(server.messagesCompleted.get()).isZero();
    }

    @Test
    void aServerThatAnswers421ToMailFromAndClosesIsTransientAboutTheProvider() {
        server.mailFromReply = "421 4.3.2 shutting down";
        SendResult result = transport.send(TestEmails.sample(), "k1");

        // the replies to RCPT and DATA never come; the one to MAIL FROM decides, as unpipelined
        assertThat(result).isInstanceOf(SendResult.Transient.class);
        SendResult.Transient t = (SendResult.Transient) result;
        assertThat(t.code()).isEqualTo("smtp-421");
        assertThat(t.scope()).isEqualTo(SendResult.Scope.PROVIDER);
        assertThat(server.messagesCompleted.get()).isZero();

        server.mailFromReply = "250 OK";
        assertThat(transport.send(TestEmails.sample(), "k2")).isInstanceOf(SendResult.Sent.class);
        assertThat(server.connections.get()).isEqualTo(2);
    }

    @Test
    void data4xxIsTransientAboutTheEmailAndNoMessageDataIsSent() {
        server.dataReply = "451 4.3.0 queue full";
        SendResult result = transport.send(TestEmails.sample(), "k1");

        assertThat(result).isInstanceOf(SendResult.Transient.class);
        SendResult.Transient t = (SendResult.Transient) result;
        assertThat(t.code()).isEqualTo("smtp-451");
        assertThat(t.scope()).isEqualTo(SendResult.Scope.EMAIL);
        assertThat(server.messagesCompleted.get()).isZero();
    }

    @Test
    void aConnectionDroppedAfterTheFinalDotIsAnUnknownOutcome() {
        server.dropAfterData = true;
        SendResult result = transport.send(TestEmails.sample(), "k1");

        assertThat(result).isInstanceOf(SendResult.Ambiguous.class);
        assertThat(result.mayHaveBeenDelivered()).isTrue();
        assertThat(server.messagesCompleted.get()).isEqualTo(1);
        // not retried on another connection: the server may have queued it
        assertThat(server.connections.get()).isEqualTo(1);
    }

    @Test
    void amongSeveralRecipientsEachRefusalIsReportedForItsRecipientAndNoDataIsSent() throws Exception {
        server.rcptReplyByMailbox.put("gone@example.com", "550 5.1.1 user unknown");
        server.rcptReplyByMailbox.put("full@example.com", "452 4.2.2 mailbox full");
        try (Connected c = connected()) {
            SendFailedException e = catchThrowableOfType(SendFailedException.class,
                    () -> c.transport.sendMessage(c.message, addresses("ann@example.com", "gone@example.com", "full@example.com")));

            List<SMTPAddressFailedException> failures = addressFailures(e);
            assertThat(failures).extracting(f -> f.getAddress().getAddress(), SMTPAddressFailedException::getReturnCode)
                    .containsExactly(org.assertj.core.groups.Tuple.tuple("gone@example.com", 550),
                            org.assertj.core.groups.Tuple.tuple("full@example.com", 452));
            assertThat(e.getInvalidAddresses()).extracting(a -> ((InternetAddress) a).getAddress()).containsExactly("gone@example.com");
            assertThat(e.getValidUnsentAddresses()).extracting(a -> ((InternetAddress) a).getAddress())
                    .containsExactly("ann@example.com", "full@example.com");
            // one recipient was accepted, so the server answered DATA with 354 and waits for data:
            // none is sent, and that session cannot be reset, so it is closed
            assertThat(server.batches().getLast()).containsExactly("MAIL FROM:<shop@example.com>", "RCPT TO:<ann@example.com>",
                    "RCPT TO:<gone@example.com>", "RCPT TO:<full@example.com>", "DATA");
            assertThat(server.messagesCompleted.get()).isZero();
            assertThat(c.transport.hasOpenConnection()).isFalse();
        }
    }

    @Test
    void whenEveryRecipientIsRefusedTheServerRefusesDataAndTheSessionIsResetAndKept() throws Exception {
        server.rcptReply = "550 5.1.1 user unknown";
        try (Connected c = connected()) {
            SendFailedException e = catchThrowableOfType(SendFailedException.class,
                    () -> c.transport.sendMessage(c.message, addresses("gone@example.com", "left@example.com")));

            assertThat(addressFailures(e)).hasSize(2);
            assertThat(server.batches().getLast()).containsExactly("RSET");
            assertThat(c.transport.hasOpenConnection()).isTrue();

            server.rcptReply = "250 OK";
            c.transport.sendMessage(c.message, addresses("ann@example.com"));
            assertThat(server.messagesCompleted.get()).isEqualTo(1);
        }
    }

    /** A pipelining transport straight on the session SmtpTransport builds, for messages with several recipients. */
    private Connected connected() throws MessagingException {
        SmtpConfig config = config(server.port()).build();
        Session session = Session.getInstance(SmtpTransport.sessionProperties(config));
        PipeliningSmtpTransport t = (PipeliningSmtpTransport) session.getTransport(PipeliningSmtpTransport.PROVIDER);
        t.connect(config.host(), config.port(), null, null);
        assertThat(t.pipelines()).isTrue();
        MimeMessage m = new MimeMessage(session);
        m.setFrom("shop@example.com");
        m.setRecipients(Message.RecipientType.TO, "ann@example.com");
        m.setSubject("several recipients");
        m.setText("hello");
        m.saveChanges();
        return new Connected(t, m);
    }

    private record Connected(PipeliningSmtpTransport transport, MimeMessage message) implements AutoCloseable {
        @Override
        public void close() throws MessagingException {
            transport.close();
        }
    }

    private static Address[] addresses(String... mailboxes) throws MessagingException {
        Address[] a = new Address[mailboxes.length];
        for (int i = 0; i < mailboxes.length; i++) {
            a[i] = new InternetAddress(mailboxes[i], true);
        }
        return a;
    }

    private static List<SMTPAddressFailedException> addressFailures(MessagingException e) {
        List<SMTPAddressFailedException> found = new ArrayList<>();
        for (Exception next = e.getNextException(); next != null;
             next = next instanceof MessagingException me ? me.getNextException() : null) {
            if (next instanceof SMTPAddressFailedException f) {
                found.add(f);
            }
        }
        return found;
    }
}
