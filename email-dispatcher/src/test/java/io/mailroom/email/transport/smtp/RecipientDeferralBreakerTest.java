package io.mailroom.email.transport.smtp;

import io.github.resilience4j.circuitbreaker.CircuitBreaker;
import io.mailroom.email.TestEmails;
import io.mailroom.email.dispatch.TransportGate;
import io.mailroom.email.resilience.ResilientTransport;
import io.mailroom.email.resilience.TransportPolicyConfig;
import io.mailroom.email.transport.SendResult;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.time.Duration;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A reply about one mailbox (greylisting's 451 at RCPT) must not open the transport-wide breaker,
 * which would hold back every other customer's email; a failure of the server itself still must.
 * The real SMTP transport inside the real policies, against a scripted server.
 */
class RecipientDeferralBreakerTest {

    static final String TOPIC = "order.confirmation";
    static final String GREYLISTED = "grey@example.org";

    ScriptedSmtpServer server;
    ResilientTransport transport;

    @BeforeEach
    void start() throws IOException {
        server = ScriptedSmtpServer.start();
        server.rcptReplyByMailbox.put(GREYLISTED, "451 4.7.1 <grey@example.org>: Recipient address rejected: Greylisted, try again in 300 s");
        transport = resilient(server.port());
    }

    @AfterEach
    void stop() throws IOException {
        transport.close();
        server.close();
    }

    /** A small breaker (opens at 50 % of 4 calls) and 3 tries per call, so any counting shows quickly. */
    static ResilientTransport resilient(int port) {
        TransportPolicyConfig policy = TransportPolicyConfig.defaults()
                .withRetry(new TransportPolicyConfig.RetrySettings(3, Duration.ofMillis(5), Duration.ofMillis(50)))
                .withBreaker(new TransportPolicyConfig.BreakerSettings(4, 4, 50, Duration.ofSeconds(30), 1));
        return new ResilientTransport(new SmtpTransport(SmtpTransportTest.config(port).build()), policy);
    }

    @Test
    void aGreylistingMailboxKeepsTheBreakerClosedIsAskedOncePerCallAndOtherMailFlows() {
        TransportGate gate = new TransportGate(Map.of(TOPIC, transport));
        int calls = 20;
        SendResult result = null;
        for (int i = 0; i < calls; i++) {
            result = transport.send(TestEmails.to(GREYLISTED), "email-grey-" + i);
            assertThat(result).as("call %s", i).isInstanceOf(SendResult.Transient.class);
            assertThat(((SendResult.Transient) result).code()).isEqualTo("smtp-451");
            assertThat(server.rcptCount(GREYLISTED)).as("RCPT once per call, never repeated within it").isEqualTo(i + 1);
            assertThat(transport.breakerState()).as("after call %s", i).isEqualTo(CircuitBreaker.State.CLOSED);
        }
        SendResult.Transient t = (SendResult.Transient) result;
        assertThat(t.scope()).isEqualTo(SendResult.Scope.EMAIL);
        assertThat(t.retryableInAttempt()).as("greylisting needs minutes: straight to the outbox backoff").isFalse();
        assertThat(server.messagesCompleted.get()).isZero();
        assertThat(gate.allowsClaims(TOPIC)).isTrue();
        assertThat(gate.claimLimit(TOPIC)).isEqualTo(Integer.MAX_VALUE);

        for (int i = 0; i < 5; i++) {
            assertThat(transport.send(TestEmails.to("customer" + i + "@example.com"), "email-ok-" + i))
                    .isInstanceOf(SendResult.Sent.class);
        }
        assertThat(server.messagesCompleted.get()).isEqualTo(5);
        assertThat(transport.breakerState()).isEqualTo(CircuitBreaker.State.CLOSED);
    }

    @Test
    void aDeferralOfTheMessageAfterDataIsAboutThatEmailToo() {
        server.finalReply = "451 4.7.1 message greylisted, try again later";
        for (int i = 0; i < 8; i++) {
            SendResult result = transport.send(TestEmails.sample(), "email-late-" + i);
            assertThat(((SendResult.Transient) result).code()).isEqualTo("smtp-451");
            assertThat(server.messagesCompleted.get()).as("never repeated within a call").isEqualTo(i + 1);
            assertThat(transport.breakerState()).as("after call %s", i).isEqualTo(CircuitBreaker.State.CLOSED);
        }
    }

    @Test
    void a421AtRcptIsTheServerClosingTheChannelAndOpensTheBreaker() {
        server.rcptReply = "421 4.3.2 Service shutting down, closing transmission channel";
        SendResult first = transport.send(TestEmails.sample(), "email-421-0");
        assertThat(first).isInstanceOf(SendResult.Transient.class);
        assertThat(((SendResult.Transient) first).code()).isEqualTo("smtp-421");
        assertThat(((SendResult.Transient) first).scope()).isEqualTo(SendResult.Scope.PROVIDER);
        for (int i = 1; i < 4 && transport.breakerState() == CircuitBreaker.State.CLOSED; i++) {
            transport.send(TestEmails.sample(), "email-421-" + i);
        }
        assertThat(transport.breakerState()).isEqualTo(CircuitBreaker.State.OPEN);
        assertThat(new TransportGate(Map.of(TOPIC, transport)).allowsClaims(TOPIC)).isFalse();
    }

    @Test
    void aRefusedConnectionOpensTheBreaker() throws IOException {
        int closedPort;
        try (ServerSocket s = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            closedPort = s.getLocalPort();
        }
        try (ResilientTransport down = resilient(closedPort)) {
            SendResult result = down.send(TestEmails.sample(), "email-down");
            assertThat(((SendResult.Transient) result).code()).isEqualTo("smtp-connect");
            assertThat(((SendResult.Transient) result).scope()).isEqualTo(SendResult.Scope.PROVIDER);
            down.send(TestEmails.sample(), "email-down-2");
            assertThat(down.breakerState()).isEqualTo(CircuitBreaker.State.OPEN);
        }
    }
}
