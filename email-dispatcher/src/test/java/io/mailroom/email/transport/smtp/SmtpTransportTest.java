package io.mailroom.email.transport.smtp;

import io.mailroom.email.TestEmails;
import io.mailroom.email.transport.SendResult;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.time.Duration;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Reply-code classification and connection reuse, against a scripted SMTP server that does not
 * advertise PIPELINING; {@link PipelinedSmtpTransportTest} runs the same tests against one that does.
 */
class SmtpTransportTest {

    ScriptedSmtpServer server;
    SmtpTransport transport;

    /** Whether the scripted server advertises PIPELINING. */
    boolean pipelining() {
        return false;
    }

    @BeforeEach
    void start() throws IOException {
        server = ScriptedSmtpServer.start();
        server.pipelining = pipelining();
        transport = new SmtpTransport(config(server.port()).build());
    }

    @AfterEach
    void stop() throws IOException {
        transport.close();
        server.close();
    }

    static SmtpConfig.Builder config(int port) {
        return SmtpConfig.builder().host("127.0.0.1").port(port).security(SmtpSecurity.NONE).from(TestEmails.SHOP)
                .connectTimeout(Duration.ofSeconds(2)).readTimeout(Duration.ofMillis(500)).writeTimeout(Duration.ofSeconds(2));
    }

    @Test
    void acceptedMessageIsSentWithTheDeterministicIdAndTheServersReply() {
        SendResult result = transport.send(TestEmails.sample(), "email-order-102");

        assertThat(result).isInstanceOf(SendResult.Sent.class);
        SendResult.Sent sent = (SendResult.Sent) result;
        assertThat(sent.providerMessageId()).isEqualTo("<email-order-102.6ab1e78d346f7a0b@example.com>");
        assertThat(sent.detailJson()).contains("\"transport\":\"smtp\"").contains("\"replyCode\":250").contains("queued as Q123");
        assertThat(server.commands).contains("MAIL FROM:<shop@example.com>", "RCPT TO:<ann@example.com>");
    }

    @Test
    void reusesOneConnectionForConsecutiveSends() {
        for (int i = 0; i < 3; i++) {
            assertThat(transport.send(TestEmails.sample(), "email-order-" + i)).isInstanceOf(SendResult.Sent.class);
        }
        assertThat(server.connections.get()).isEqualTo(1);
        assertThat(transport.connectionsOpened()).isEqualTo(1);
        assertThat(server.count("MAIL")).isEqualTo(3);
    }

    @Test
    void opensANewConnectionAfterTheMessageLimitAndAfterAFailureThatLeavesTheSessionUnknown() throws IOException {
        transport.close();
        transport = new SmtpTransport(config(server.port()).maxMessagesPerConnection(2).build());
        for (int i = 0; i < 3; i++) {
            transport.send(TestEmails.sample(), "k" + i);
        }
        assertThat(server.connections.get()).isEqualTo(2);

        server.mailFromReply = "550 5.7.1 sender refused";
        assertThat(transport.send(TestEmails.sample(), "k3")).isInstanceOf(SendResult.Permanent.class);
        server.mailFromReply = "250 OK";
        assertThat(transport.send(TestEmails.sample(), "k4")).isInstanceOf(SendResult.Sent.class);
        assertThat(server.connections.get()).isEqualTo(3);
    }

    @Test
    void aRecipientRefusedAtRcptDoesNotPoisonTheConnection() {
        server.rcptReplyByMailbox.put("gone@example.com", "550 5.1.1 <gone@example.com>: user unknown");
        server.rcptReplyByMailbox.put("full@example.com", "452 4.2.2 mailbox full");
        assertThat(transport.send(TestEmails.sample(), "k1")).isInstanceOf(SendResult.Sent.class);
        assertThat(transport.send(TestEmails.to("gone@example.com"), "k2")).isInstanceOf(SendResult.Permanent.class);
        assertThat(transport.send(TestEmails.to("full@example.com"), "k3")).isInstanceOf(SendResult.Transient.class);
        assertThat(transport.send(TestEmails.sample(), "k4")).isInstanceOf(SendResult.Sent.class);

        // one session for all four: each refused transaction was reset with RSET, the next one began cleanly
        assertThat(server.connections.get()).isEqualTo(1);
        assertThat(transport.connectionsOpened()).isEqualTo(1);
        assertThat(server.count("RSET")).isGreaterThanOrEqualTo(2);
        assertThat(server.count("MAIL")).isEqualTo(4);
        assertThat(server.messagesCompleted.get()).isEqualTo(2);
    }

    @Test
    void theEhloNameIsTheConfiguredOneNotLocalhost() throws IOException {
        transport.close();
        transport = new SmtpTransport(config(server.port()).heloName("mailer.shop.example").build());
        assertThat(transport.send(TestEmails.sample(), "k1")).isInstanceOf(SendResult.Sent.class);
        assertThat(server.commands).contains("EHLO mailer.shop.example").noneMatch(c -> c.equalsIgnoreCase("EHLO localhost"));
    }

    @Test
    void aHeloRefusedAtRcptIsAboutTheSessionAndSaysWhatToChange() {
        server.rcptReply = "504 5.5.2 <localhost>: Helo command rejected: need fully-qualified hostname";
        SendResult result = transport.send(TestEmails.sample(), "k1");
        assertThat(result).isInstanceOfSatisfying(SendResult.Transient.class, t -> {
            assertThat(t.code()).isEqualTo("smtp-504");
            assertThat(t.scope()).isEqualTo(SendResult.Scope.SESSION);
            assertThat(t.retryableInAttempt()).isFalse();
            assertThat(t.error()).contains("504 5.5.2").contains("set MAILROOM_SMTP_HELO_NAME");
        });
    }

    @Test
    void relayDeniedAndAuthenticationRequiredAtRcptAreAboutTheSession() {
        server.rcptReply = "554 5.7.1 <ann@example.com>: Relay access denied";
        assertThat(transport.send(TestEmails.sample(), "k1")).isInstanceOfSatisfying(SendResult.Transient.class,
                t -> assertThat(t.scope()).isEqualTo(SendResult.Scope.SESSION));
        server.rcptReply = "530 5.7.0 Authentication required";
        assertThat(transport.send(TestEmails.sample(), "k2")).isInstanceOfSatisfying(SendResult.Transient.class, t -> {
            assertThat(t.scope()).isEqualTo(SendResult.Scope.SESSION);
            assertThat(t.error()).contains("MAILROOM_SMTP_USERNAME");
        });
    }

    @Test
    void aPolicyRefusalOfOneRecipientWhileOthersAreAcceptedIsThatRecipientsFailure() {
        // not "the same 5xx for every recipient": the server took ann, so 5.7.1 for eve is about eve
        server.rcptReplyByMailbox.put("eve@example.com", "550 5.7.1 <eve@example.com>: Recipient address rejected: Access denied");
        assertThat(transport.send(TestEmails.sample(), "k1")).isInstanceOf(SendResult.Sent.class);
        assertThat(transport.send(TestEmails.to("eve@example.com"), "k2")).isInstanceOf(SendResult.Permanent.class);
        // and a user unknown is always the recipient's, accepted before or not
        server.rcptReplyByMailbox.put("gone@example.com", "550 5.1.1 <gone@example.com>: user unknown");
        assertThat(transport.send(TestEmails.to("gone@example.com"), "k3")).isInstanceOf(SendResult.Permanent.class);
    }

    @Test
    void recipientRefused5xxIsPermanentAnd4xxIsTransient() {
        server.rcptReply = "550 5.1.1 <ann@example.com>: user unknown";
        SendResult permanent = transport.send(TestEmails.sample(), "k1");
        assertThat(permanent).isInstanceOf(SendResult.Permanent.class);
        assertThat(((SendResult.Permanent) permanent).code()).isEqualTo("smtp-550");
        assertThat(((SendResult.Permanent) permanent).error()).contains("user unknown");

        server.rcptReply = "450 4.2.0 mailbox busy";
        SendResult transientResult = transport.send(TestEmails.sample(), "k2");
        // about this mailbox: not retried within the call, not counted by the breaker
        assertThat(transientResult).isEqualTo(new SendResult.Transient("smtp-450",
                ((SendResult.Transient) transientResult).error(), null, false, SendResult.Scope.EMAIL));
        // pipelined, DATA went out with the envelope and was refused: either way no message data
        assertThat(server.messagesCompleted.get()).isZero();
        assertThat(server.count("DATA")).isEqualTo(pipelining() ? 2 : 0);
    }

    @Test
    void authenticationRequiredIsMisconfigured() {
        server.mailFromReply = "530 5.7.0 Authentication required";
        SendResult result = transport.send(TestEmails.sample(), "k1");
        assertThat(result).isInstanceOf(SendResult.Misconfigured.class);
        assertThat(((SendResult.Misconfigured) result).code()).isEqualTo("smtp-530");
    }

    @Test
    void senderRefusedWith5xxIsAboutTheSessionNotTheEmail() {
        // MAIL FROM carries our envelope sender, the same for every email: no email fails for it
        server.mailFromReply = "553 5.1.8 sender domain does not exist";
        SendResult result = transport.send(TestEmails.sample(), "k1");
        assertThat(result).isInstanceOfSatisfying(SendResult.Transient.class, t -> {
            assertThat(t.code()).isEqualTo("smtp-553");
            assertThat(t.scope()).isEqualTo(SendResult.Scope.SESSION);
            assertThat(t.error()).contains("MAILROOM_SMTP_FROM");
        });
    }

    @Test
    void aMessageTooBigForTheServerAtMailFromIsThatEmailsPermanentFailure_notTheSessions() {
        // MAIL FROM declares the message's SIZE: a refusal for it judges this email, and must not halt
        // the transport for every email behind it
        for (String reply : java.util.List.of("552 5.3.4 Message size exceeds fixed limit", "552 Message size exceeds maximum permitted")) {
            server.mailFromReply = reply;
            SendResult result = transport.send(TestEmails.sample(), "k-" + reply.hashCode());
            assertThat(result).as(reply).isInstanceOfSatisfying(SendResult.Permanent.class,
                    p -> assertThat(p.code()).isEqualTo("smtp-552"));
        }
        assertThat(server.messagesCompleted.get()).isZero();
    }

    @Test
    void senderDeferredWith4xxIsTransientAboutTheProvider() {
        // MAIL FROM carries our envelope sender, the same for every email: counted by the breaker
        server.mailFromReply = "451 4.7.1 sender temporarily rejected";
        SendResult result = transport.send(TestEmails.sample(), "k1");
        assertThat(result).isInstanceOf(SendResult.Transient.class);
        SendResult.Transient t = (SendResult.Transient) result;
        assertThat(t.code()).isEqualTo("smtp-451");
        assertThat(t.scope()).isEqualTo(SendResult.Scope.PROVIDER);
        assertThat(server.messagesCompleted.get()).isZero();
    }

    @Test
    void dataCommandRefusedIsPermanentBecauseNoMessageDataWasSent() {
        server.dataReply = "554 5.5.1 no valid recipients";
        SendResult result = transport.send(TestEmails.sample(), "k1");
        assertThat(result).isInstanceOf(SendResult.Permanent.class);
        assertThat(server.messagesCompleted.get()).isZero();
    }

    @Test
    void deferralAfterDataIsTransientButNotRetriedWithinTheAttempt() {
        server.finalReply = "451 4.3.0 try again later";
        SendResult result = transport.send(TestEmails.sample(), "k1");
        assertThat(result).isInstanceOf(SendResult.Transient.class);
        SendResult.Transient t = (SendResult.Transient) result;
        assertThat(t.code()).isEqualTo("smtp-451");
        assertThat(t.retryableInAttempt()).isFalse();
    }

    @Test
    void rejectionAfterDataIsPermanent() {
        server.finalReply = "554 5.7.1 message content rejected";
        SendResult result = transport.send(TestEmails.sample(), "k1");
        assertThat(result).isInstanceOf(SendResult.Permanent.class);
        assertThat(((SendResult.Permanent) result).code()).isEqualTo("smtp-554");
    }

    @Test
    void noFinalReplyAfterDataIsAmbiguous() {
        server.finalReply = null;
        SendResult result = transport.send(TestEmails.sample(), "k1");
        assertThat(result).isInstanceOf(SendResult.Ambiguous.class);
        assertThat(((SendResult.Ambiguous) result).error()).contains("after the message data was sent");
        assertThat(server.messagesCompleted.get()).isEqualTo(1);
        assertThat(result.mayHaveBeenDelivered()).isTrue();
    }

    @Test
    void serverThatRefusesTheSessionIsMisconfiguredAndA4xxGreetingTransient() {
        server.greeting = "554 5.7.1 your IP is blocked";
        SendResult refused = transport.send(TestEmails.sample(), "k1");
        assertThat(refused).isInstanceOf(SendResult.Misconfigured.class);
        assertThat(((SendResult.Misconfigured) refused).code()).isEqualTo("smtp-554");

        server.greeting = "421 4.3.2 too busy";
        SendResult busy = transport.send(TestEmails.sample(), "k2");
        assertThat(busy).isInstanceOf(SendResult.Transient.class);
        assertThat(((SendResult.Transient) busy).code()).isEqualTo("smtp-421");
    }

    @Test
    void serverThatIsDownIsTransient() throws IOException {
        int closedPort;
        try (ServerSocket s = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            closedPort = s.getLocalPort();
        }
        try (SmtpTransport down = new SmtpTransport(config(closedPort).build())) {
            SendResult result = down.send(TestEmails.sample(), "k1");
            assertThat(result).isInstanceOf(SendResult.Transient.class);
            SendResult.Transient t = (SendResult.Transient) result;
            assertThat(t.code()).isEqualTo("smtp-connect");
            assertThat(t.retryableInAttempt()).isTrue();
            assertThat(t.error()).contains("127.0.0.1:" + closedPort);
        }
    }

    @Test
    void invalidIdempotencyKeyIsPermanentWithoutOpeningASession() {
        for (String key : new String[]{"", "email order 102", "email-order-102\r\nBcc: eve@example.org", "k".repeat(256)}) {
            SendResult result = transport.send(TestEmails.sample(), key);
            assertThat(result).isInstanceOf(SendResult.Permanent.class);
            assertThat(((SendResult.Permanent) result).code()).isEqualTo("invalid-idempotency-key");
        }
        assertThat(server.connections.get()).isZero();
        assertThat(transport.connectionsOpened()).isZero();
    }

    @Test
    void aPooledConnectionTheServerClosedIsReplacedWithoutFailingTheSend() {
        server.closeAfterMessage = true;
        assertThat(transport.send(TestEmails.sample(), "k1")).isInstanceOf(SendResult.Sent.class);
        assertThat(transport.send(TestEmails.sample(), "k2")).isInstanceOf(SendResult.Sent.class);
        assertThat(server.connections.get()).isEqualTo(2);
        assertThat(server.messagesCompleted.get()).isEqualTo(2);
    }

    @Test
    void aConnectionIdleLongerThanMaxIdleIsNotReused() throws IOException {
        transport.close();
        transport = new SmtpTransport(config(server.port()).maxIdle(Duration.ofNanos(1)).build());
        assertThat(transport.send(TestEmails.sample(), "k1")).isInstanceOf(SendResult.Sent.class);
        assertThat(transport.send(TestEmails.sample(), "k2")).isInstanceOf(SendResult.Sent.class);
        assertThat(transport.connectionsOpened()).isEqualTo(2);
    }

    @Test
    void requiredStartTlsThatTheServerDoesNotOfferIsMisconfigured() throws IOException {
        transport.close();
        transport = new SmtpTransport(config(server.port()).security(SmtpSecurity.STARTTLS).build());
        SendResult result = transport.send(TestEmails.sample(), "k1");
        assertThat(result).isInstanceOf(SendResult.Misconfigured.class);
        assertThat(((SendResult.Misconfigured) result).code()).isEqualTo("smtp-starttls-unavailable");
        assertThat(server.count("MAIL")).isZero();
    }
}
