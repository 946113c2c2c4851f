package io.mailroom.email.transport.http;

import com.github.tomakehurst.wiremock.WireMockServer;
import com.github.tomakehurst.wiremock.core.WireMockConfiguration;
import com.github.tomakehurst.wiremock.http.Fault;
import io.mailroom.email.TestEmails;
import io.mailroom.email.transport.SendResult;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.URI;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;

import static com.github.tomakehurst.wiremock.client.WireMock.aResponse;
import static com.github.tomakehurst.wiremock.client.WireMock.equalTo;
import static com.github.tomakehurst.wiremock.client.WireMock.equalToJson;
import static com.github.tomakehurst.wiremock.client.WireMock.notContaining;
import static com.github.tomakehurst.wiremock.client.WireMock.post;
import static com.github.tomakehurst.wiremock.client.WireMock.postRequestedFor;
import static com.github.tomakehurst.wiremock.client.WireMock.urlEqualTo;
import static org.assertj.core.api.Assertions.assertThat;

/** The HTTP mail API transport against a WireMock provider. */
class HttpMailTransportTest {

    static final String KEY = "email-order-102";
    static final Instant NOW = Instant.parse("2026-12-02T10:00:00Z");
    static WireMockServer wireMock;

    HttpMailTransport transport;

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
    void setUp() {
        wireMock.resetAll();
        transport = transport(Duration.ofSeconds(2));
    }

    @AfterEach
    void tearDown() {
        transport.close();
    }

    static HttpMailConfig config(Duration requestTimeout) {
        return HttpMailConfig.of(URI.create(wireMock.baseUrl()), "tok_secret")
                .withTimeouts(Duration.ofSeconds(1), requestTimeout)
                .withConflictRetryAfter(Duration.ofSeconds(3));
    }

    static HttpMailTransport transport(Duration requestTimeout) {
        HttpMailConfig config = config(requestTimeout);
        return new HttpMailTransport(config, new JsonMailApiAdapter(config), Clock.fixed(NOW, ZoneOffset.UTC));
    }

    static void stub(int status, String body, String retryAfter) {
        var response = aResponse().withStatus(status).withHeader("Content-Type", "application/json").withBody(body);
        if (retryAfter != null) {
            response.withHeader("Retry-After", retryAfter);
        }
        wireMock.stubFor(post(urlEqualTo("/v1/emails")).willReturn(response));
    }

    @Test
    void acceptedEmailIsSentWithTheProvidersIdAndTheDocumentedWireFormat() {
        stub(200, "{\"id\":\"msg_123\"}", null);

        SendResult result = transport.send(TestEmails.sample(), KEY);

        assertThat(result).isInstanceOf(SendResult.Sent.class);
        SendResult.Sent sent = (SendResult.Sent) result;
        assertThat(sent.providerMessageId()).isEqualTo("msg_123");
        assertThat(sent.detailJson()).isEqualTo("{\"transport\":\"http\",\"status\":200,\"providerMessageId\":\"msg_123\"}");
        wireMock.verify(1, postRequestedFor(urlEqualTo("/v1/emails"))
                .withHeader("Authorization", equalTo("Bearer tok_secret"))
                .withHeader("Idempotency-Key", equalTo(KEY))
                .withHeader("Content-Type", equalTo("application/json"))
                .withoutHeader("Accept-Encoding") // the body limit counts the bytes the provider sent
                .withRequestBody(equalToJson("""
                        {"from":{"email":"shop@example.com","name":"Example Shop"},
                         "to":[{"email":"ann@example.com","name":"Ann"}],
                         "subject":"Your order #102 is confirmed",
                         "text":"Hello Ann,\\nthank you.\\n",
                         "html":"<p>Hello Ann,</p><p>thank you.</p>",
                         "headers":{"Auto-Submitted":"auto-generated"}}""")));
    }

    @Test
    void ccBccAndTagsGoInTheProvidersFormat_theKeyAsTheFirstTagSoEventsEchoIt() {
        stub(200, "{\"id\":\"msg_124\"}", null);

        assertThat(transport.send(TestEmails.several(), KEY)).isInstanceOf(SendResult.Sent.class);

        wireMock.verify(1, postRequestedFor(urlEqualTo("/v1/emails")).withRequestBody(equalToJson("""
                {"from":{"email":"shop@example.com","name":"Example Shop"},
                 "to":[{"email":"ann@example.com","name":"Ann"},{"email":"bo@example.com"}],
                 "cc":[{"email":"carl@corp.example","name":"Carl"}],
                 "bcc":[{"email":"dora@audit.example"}],
                 "subject":"Your order #102 is confirmed",
                 "text":"Hello Ann,\\nthank you.\\n",
                 "html":"<p>Hello Ann,</p><p>thank you.</p>",
                 "headers":{"Auto-Submitted":"auto-generated"},
                 "tags":[{"name":"idempotency_key","value":"email-order-102"},{"name":"category","value":"invoice"},
                         {"name":"plan","value":"pro"}]}""")));
    }

    @Test
    void theIdempotencyKeyIsTheSameOnEveryAttemptOfTheEffect() {
        stub(500, "{\"message\":\"oops\"}", null);
        for (int i = 0; i < 3; i++) {
            assertThat(transport.send(TestEmails.sample(), KEY)).isInstanceOf(SendResult.Transient.class);
        }
        wireMock.verify(3, postRequestedFor(urlEqualTo("/v1/emails")));
        wireMock.verify(3, postRequestedFor(urlEqualTo("/v1/emails")).withHeader("Idempotency-Key", equalTo(KEY)));
    }

    @Test
    void tooManyRequestsIsTransientHonouringRetryAfterSeconds() {
        stub(429, "{\"message\":\"slow down\"}", "30");
        SendResult result = transport.send(TestEmails.sample(), KEY);
        assertThat(result).isEqualTo(new SendResult.Transient("http-429", "HTTP 429: slow down", Duration.ofSeconds(30)));
    }

    @Test
    void retryAfterAsHttpDateIsMeasuredFromTheClock() {
        stub(503, "", DateTimeFormatter.RFC_1123_DATE_TIME.format(NOW.plusSeconds(120).atOffset(ZoneOffset.UTC)));
        SendResult result = transport.send(TestEmails.sample(), KEY);
        assertThat(result).isInstanceOf(SendResult.Transient.class);
        assertThat(((SendResult.Transient) result).retryAfter()).isEqualTo(Duration.ofSeconds(120));
        assertThat(((SendResult.Transient) result).code()).isEqualTo("http-503");
    }

    @Test
    void serverErrorIsTransient() {
        stub(500, "{\"error\":{\"message\":\"internal\"}}", null);
        SendResult result = transport.send(TestEmails.sample(), KEY);
        assertThat(result).isEqualTo(new SendResult.Transient("http-500", "HTTP 500: internal", null));
    }

    @Test
    void badRequestIsPermanentAndKeepsTheProvidersErrorBounded() {
        stub(400, "{\"message\":\"to[0].email: domain has no MX record\"}", null);
        SendResult result = transport.send(TestEmails.sample(), KEY);
        assertThat(result).isEqualTo(new SendResult.Permanent("http-400", "HTTP 400: to[0].email: domain has no MX record"));

        stub(422, "x".repeat(50_000), null);
        SendResult.Permanent long422 = (SendResult.Permanent) transport.send(TestEmails.sample(), KEY);
        assertThat(long422.code()).isEqualTo("http-422");
        assertThat(long422.error()).startsWith("HTTP 422: xxx").hasSizeLessThan(HttpMailTransport.MAX_ERROR_CHARS + 50);
    }

    @Test
    void unauthorisedAndForbiddenAreMisconfiguredWithoutLeakingTheToken() {
        stub(401, "{\"message\":\"invalid api key\"}", null);
        SendResult result = transport.send(TestEmails.sample(), KEY);
        assertThat(result).isInstanceOf(SendResult.Misconfigured.class);
        assertThat(((SendResult.Misconfigured) result).code()).isEqualTo("http-401");
        assertThat(result.toString()).doesNotContain("tok_secret");

        stub(403, "", null);
        assertThat(((SendResult.Misconfigured) transport.send(TestEmails.sample(), KEY)).code()).isEqualTo("http-403");
    }

    @Test
    void aProviderThatEchoesTheTokenInItsErrorDoesNotMakeUsRepeatIt() {
        // Provider errors end up in logs (a halted transport), in last_error and on /health/ready.
        String echo = "{\"message\":\"invalid api key tok_secret (header was: Bearer tok_secret)\"}";
        for (int status : new int[]{401, 403, 400, 422, 500, 503}) {
            stub(status, echo, null);
            SendResult result = transport.send(TestEmails.sample(), KEY);
            assertThat(result.toString()).as("HTTP %d", status).doesNotContain("tok_secret").contains("invalid api key");
        }
        // even when the echo sits where the error text is cut
        stub(400, "{\"message\":\"" + "x".repeat(1995) + "tok_secret\"}", null);
        assertThat(transport.send(TestEmails.sample(), KEY).toString()).doesNotContain("tok_s");
    }

    @Test
    void conflictMeansTheSameKeyIsInFlightAndIsRetriedShortlyAfter() {
        stub(409, "{\"message\":\"concurrent request\"}", null);
        SendResult result = transport.send(TestEmails.sample(), KEY);
        assertThat(result).isInstanceOf(SendResult.Transient.class);
        assertThat(((SendResult.Transient) result).retryAfter()).isEqualTo(Duration.ofSeconds(3));
    }

    @Test
    void noResponseWithinTheRequestTimeoutIsAmbiguous() {
        transport.close();
        transport = transport(Duration.ofMillis(300));
        wireMock.stubFor(post(urlEqualTo("/v1/emails")).willReturn(aResponse().withStatus(200).withBody("{\"id\":\"late\"}").withFixedDelay(1200)));

        SendResult result = transport.send(TestEmails.sample(), KEY);

        assertThat(result).isInstanceOf(SendResult.Ambiguous.class);
        assertThat(((SendResult.Ambiguous) result).error()).contains("within 300 ms");
        wireMock.verify(1, postRequestedFor(urlEqualTo("/v1/emails")));
    }

    @Test
    void connectionDroppedAfterTheRequestIsAmbiguous() {
        wireMock.stubFor(post(urlEqualTo("/v1/emails")).willReturn(aResponse().withFault(Fault.CONNECTION_RESET_BY_PEER)));
        assertThat(transport.send(TestEmails.sample(), KEY)).isInstanceOf(SendResult.Ambiguous.class);
    }

    @Test
    void connectionRefusedIsTransient() throws IOException {
        int closedPort;
        try (ServerSocket s = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            closedPort = s.getLocalPort();
        }
        HttpMailConfig config = HttpMailConfig.of(URI.create("http://127.0.0.1:" + closedPort), "tok_secret");
        try (HttpMailTransport down = new HttpMailTransport(config)) {
            SendResult result = down.send(TestEmails.sample(), KEY);
            assertThat(result).isInstanceOf(SendResult.Transient.class);
            assertThat(((SendResult.Transient) result).code()).isEqualTo("http-connect");
            assertThat(((SendResult.Transient) result).retryableInAttempt()).isTrue();
        }
    }

    @Test
    void aHugeResponseBodyIsCutAtTheLimitAndTheStatusStillDecides() {
        stub(503, "{\"message\":\"" + "y".repeat(2 * HttpMailTransport.MAX_RESPONSE_BYTES) + "\"}", "7");

        SendResult result = transport.send(TestEmails.sample(), KEY);

        assertThat(result).isInstanceOf(SendResult.Transient.class);
        SendResult.Transient t = (SendResult.Transient) result;
        assertThat(t.code()).isEqualTo("http-503");
        assertThat(t.retryAfter()).isEqualTo(Duration.ofSeconds(7));
        assertThat(t.error()).hasSizeLessThan(HttpMailTransport.MAX_ERROR_CHARS + 50);
    }

    @Test
    void acceptedWithoutAReadableIdIsStillSent() {
        stub(202, "not json", null);
        SendResult result = transport.send(TestEmails.sample(), KEY);
        assertThat(result).isInstanceOf(SendResult.Sent.class);
        assertThat(((SendResult.Sent) result).providerMessageId()).isNull();
    }

    @Test
    void wrongEndpointIsMisconfigured() {
        wireMock.stubFor(post(urlEqualTo("/v1/emails")).willReturn(aResponse().withStatus(404)));
        assertThat(transport.send(TestEmails.sample(), KEY)).isInstanceOf(SendResult.Misconfigured.class);
        wireMock.stubFor(post(urlEqualTo("/v1/emails")).willReturn(aResponse().withStatus(301).withHeader("Location", "https://elsewhere")));
        assertThat(transport.send(TestEmails.sample(), KEY)).isInstanceOf(SendResult.Misconfigured.class);
    }

    @Test
    void invalidKeyIsPermanentAndNothingIsRequested() {
        SendResult result = transport.send(TestEmails.sample(), "key with spaces");
        assertThat(result).isInstanceOf(SendResult.Permanent.class);
        wireMock.verify(0, postRequestedFor(urlEqualTo("/v1/emails")));
        wireMock.verify(0, postRequestedFor(urlEqualTo("/v1/emails")).withHeader("Idempotency-Key", notContaining(" ")));
    }
}
