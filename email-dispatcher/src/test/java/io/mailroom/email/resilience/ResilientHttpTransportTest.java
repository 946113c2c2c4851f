package io.mailroom.email.resilience;

import com.github.tomakehurst.wiremock.WireMockServer;
import com.github.tomakehurst.wiremock.core.WireMockConfiguration;
import com.github.tomakehurst.wiremock.stubbing.Scenario;
import io.github.resilience4j.circuitbreaker.CircuitBreaker;
import io.mailroom.email.TestEmails;
import io.mailroom.email.transport.SendResult;
import io.mailroom.email.transport.http.HttpMailConfig;
import io.mailroom.email.transport.http.HttpMailTransport;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import java.net.URI;
import java.time.Duration;

import static com.github.tomakehurst.wiremock.client.WireMock.aResponse;
import static com.github.tomakehurst.wiremock.client.WireMock.equalTo;
import static com.github.tomakehurst.wiremock.client.WireMock.matching;
import static com.github.tomakehurst.wiremock.client.WireMock.okJson;
import static com.github.tomakehurst.wiremock.client.WireMock.post;
import static com.github.tomakehurst.wiremock.client.WireMock.postRequestedFor;
import static com.github.tomakehurst.wiremock.client.WireMock.serverError;
import static com.github.tomakehurst.wiremock.client.WireMock.urlEqualTo;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/** The policies around the real HTTP transport, against WireMock. */
class ResilientHttpTransportTest {

    static final String PATH = "/v1/emails";
    static WireMockServer wireMock;

    @BeforeAll
    static void startWireMock() {
        wireMock = new WireMockServer(WireMockConfiguration.options().dynamicPort().bindAddress("127.0.0.1")
                .containerThreads(8).jettyAcceptors(1));
        wireMock.start();
    }

    @AfterAll
    static void stopWireMock() {
        wireMock.stop();
    }

    @BeforeEach
    void reset() {
        wireMock.resetAll();
    }

    static ResilientTransport transport(TransportPolicyConfig policy) {
        HttpMailConfig config = HttpMailConfig.of(URI.create(wireMock.baseUrl()), "tok").withTimeouts(Duration.ofSeconds(1), Duration.ofSeconds(2));
        return new ResilientTransport(new HttpMailTransport(config), policy);
    }

    @Test
    void twoServerErrorsThenSuccessIsSentWithinOneCallWithTheSameKey() {
        wireMock.stubFor(post(urlEqualTo(PATH)).inScenario("flaky").whenScenarioStateIs(Scenario.STARTED)
                .willReturn(serverError()).willSetStateTo("second"));
        wireMock.stubFor(post(urlEqualTo(PATH)).inScenario("flaky").whenScenarioStateIs("second")
                .willReturn(aResponse().withStatus(503)).willSetStateTo("third"));
        wireMock.stubFor(post(urlEqualTo(PATH)).inScenario("flaky").whenScenarioStateIs("third")
                .willReturn(okJson("{\"id\":\"msg_3\"}")));
        ResilientTransport t = transport(TransportPolicyConfig.defaults()
                .withRetry(new TransportPolicyConfig.RetrySettings(3, Duration.ofMillis(10), Duration.ofMillis(100))));

        SendResult result = t.send(TestEmails.sample(), "email-order-102");

        assertThat(result).isInstanceOf(SendResult.Sent.class);
        assertThat(((SendResult.Sent) result).providerMessageId()).isEqualTo("msg_3");
        wireMock.verify(3, postRequestedFor(urlEqualTo(PATH)));
        wireMock.verify(3, postRequestedFor(urlEqualTo(PATH)).withHeader("Idempotency-Key", equalTo("email-order-102")));
        t.close();
    }

    @Test
    void breakerOpensAfterTheThresholdRejectsWithoutRequestsThenAProbeClosesIt() {
        wireMock.stubFor(post(urlEqualTo(PATH)).willReturn(aResponse().withStatus(503)));
        ResilientTransport t = transport(TransportPolicyConfig.defaults()
                .withRetry(new TransportPolicyConfig.RetrySettings(1, Duration.ZERO, Duration.ZERO))
                .withBreaker(new TransportPolicyConfig.BreakerSettings(4, 4, 50, Duration.ofMillis(300), 1)));

        for (int i = 0; i < 4; i++) {
            assertThat(t.acceptingWork()).isTrue();
            assertThat(t.send(TestEmails.sample(), "k" + i)).isInstanceOf(SendResult.Transient.class);
        }
        assertThat(t.breakerState()).isEqualTo(CircuitBreaker.State.OPEN);
        assertThat(t.acceptingWork()).isFalse();
        assertThat(t.claimableNow()).isZero();
        assertThat(t.send(TestEmails.sample(), "k4")).isInstanceOf(SendResult.NotAttempted.class);
        wireMock.verify(4, postRequestedFor(urlEqualTo(PATH)));

        wireMock.stubFor(post(urlEqualTo(PATH)).willReturn(okJson("{\"id\":\"msg_ok\"}")));
        await().atMost(Duration.ofSeconds(5)).until(t::acceptingWork);
        assertThat(t.breakerState()).isEqualTo(CircuitBreaker.State.HALF_OPEN);
        assertThat(t.claimableNow()).isEqualTo(1);

        assertThat(t.send(TestEmails.sample(), "k4")).isInstanceOf(SendResult.Sent.class);
        assertThat(t.breakerState()).isEqualTo(CircuitBreaker.State.CLOSED);
        assertThat(t.claimableNow()).isEqualTo(Integer.MAX_VALUE);
        wireMock.verify(5, postRequestedFor(urlEqualTo(PATH)));
        t.close();
    }

    @Test
    void refusalsAboutOneEmailKeepTheBreakerClosedAndServerErrorsOpenIt() {
        wireMock.stubFor(post(urlEqualTo(PATH)).withHeader("Idempotency-Key", matching("busy-.*"))
                .willReturn(aResponse().withStatus(409).withBody("{\"message\":\"request with this key in progress\"}")));
        wireMock.stubFor(post(urlEqualTo(PATH)).withHeader("Idempotency-Key", matching("invalid-.*"))
                .willReturn(aResponse().withStatus(422).withBody("{\"message\":\"recipient domain has no MX\"}")));
        wireMock.stubFor(post(urlEqualTo(PATH)).withHeader("Idempotency-Key", matching("ok-.*")).willReturn(okJson("{\"id\":\"msg_ok\"}")));
        ResilientTransport t = transport(TransportPolicyConfig.defaults()
                .withRetry(new TransportPolicyConfig.RetrySettings(1, Duration.ZERO, Duration.ZERO))
                .withBreaker(new TransportPolicyConfig.BreakerSettings(4, 4, 50, Duration.ofSeconds(30), 1)));

        for (int i = 0; i < 10; i++) {
            SendResult busy = t.send(TestEmails.sample(), "busy-" + i);
            assertThat(busy).isInstanceOf(SendResult.Transient.class);
            assertThat(((SendResult.Transient) busy).scope()).isEqualTo(SendResult.Scope.EMAIL);
            assertThat(t.send(TestEmails.sample(), "invalid-" + i)).isInstanceOf(SendResult.Permanent.class);
        }
        assertThat(t.breakerState()).isEqualTo(CircuitBreaker.State.CLOSED);
        assertThat(t.send(TestEmails.sample(), "ok-1")).isInstanceOf(SendResult.Sent.class);
        wireMock.verify(21, postRequestedFor(urlEqualTo(PATH)));

        wireMock.stubFor(post(urlEqualTo(PATH)).withHeader("Idempotency-Key", matching("down-.*")).willReturn(aResponse().withStatus(503)));
        SendResult down = t.send(TestEmails.sample(), "down-0");
        assertThat(((SendResult.Transient) down).scope()).isEqualTo(SendResult.Scope.PROVIDER);
        for (int i = 1; i < 4 && t.breakerState() == CircuitBreaker.State.CLOSED; i++) {
            t.send(TestEmails.sample(), "down-" + i);
        }
        assertThat(t.breakerState()).isEqualTo(CircuitBreaker.State.OPEN);
        t.close();
    }

    @Test
    void unauthorisedHaltsSendingWithoutFurtherRequests() {
        wireMock.stubFor(post(urlEqualTo(PATH)).willReturn(aResponse().withStatus(401).withBody("{\"message\":\"bad key\"}")));
        ResilientTransport t = transport(TransportPolicyConfig.defaults());

        assertThat(t.send(TestEmails.sample(), "k1")).isInstanceOf(SendResult.Misconfigured.class);
        for (int i = 2; i < 5; i++) {
            assertThat(t.send(TestEmails.sample(), "k" + i)).isInstanceOf(SendResult.NotAttempted.class);
        }
        assertThat(t.acceptingWork()).isFalse();
        wireMock.verify(1, postRequestedFor(urlEqualTo(PATH)));
        t.close();
    }
}
