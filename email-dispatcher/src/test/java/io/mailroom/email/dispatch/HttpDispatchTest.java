package io.mailroom.email.dispatch;

import com.github.tomakehurst.wiremock.WireMockServer;
import com.github.tomakehurst.wiremock.core.WireMockConfiguration;
import com.github.tomakehurst.wiremock.stubbing.Scenario;
import io.github.resilience4j.circuitbreaker.CircuitBreaker;
import io.mailroom.email.resilience.ResilientTransport;
import io.mailroom.email.resilience.TransportPolicyConfig;
import io.mailroom.email.resilience.TransportPolicyConfig.BreakerSettings;
import io.mailroom.email.resilience.TransportPolicyConfig.BulkheadSettings;
import io.mailroom.email.resilience.TransportPolicyConfig.RateLimitSettings;
import io.mailroom.email.resilience.TransportPolicyConfig.RetrySettings;
import io.mailroom.email.transport.http.HttpMailConfig;
import io.mailroom.email.transport.http.HttpMailTransport;
import io.mailroom.outbox.runtime.Dispatcher;
import io.mailroom.testing.PostgresExtension;
import org.jooq.Record;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import java.net.URI;
import java.time.Duration;
import java.time.Instant;
import java.util.List;

import static com.github.tomakehurst.wiremock.client.WireMock.aResponse;
import static com.github.tomakehurst.wiremock.client.WireMock.equalTo;
import static com.github.tomakehurst.wiremock.client.WireMock.post;
import static com.github.tomakehurst.wiremock.client.WireMock.postRequestedFor;
import static com.github.tomakehurst.wiremock.client.WireMock.urlEqualTo;
import static io.mailroom.db.jooq.Tables.IDEMPOTENCY_RECORD;
import static io.mailroom.db.jooq.Tables.OUTBOX_MESSAGE;
import static io.mailroom.email.dispatch.DispatchFixture.enqueueOrder;
import static io.mailroom.email.dispatch.DispatchFixture.key;
import static io.mailroom.email.dispatch.DispatchFixture.makeDue;
import static io.mailroom.email.dispatch.DispatchFixture.message;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/** Outbox message → HTTP mail API (WireMock), with the provider idempotency key, Retry-After and the breaker. */
class HttpDispatchTest {

    @RegisterExtension
    static final PostgresExtension pg = new PostgresExtension();

    static WireMockServer provider;
    private ResilientTransport transport;

    @BeforeAll
    static void startProvider() {
        provider = new WireMockServer(WireMockConfiguration.options().dynamicPort().bindAddress("127.0.0.1")
                .containerThreads(8).jettyAcceptors(1));
        provider.start();
    }

    @AfterAll
    static void stopProvider() {
        provider.stop();
    }

    @BeforeEach
    void setUp() {
        provider.resetAll();
        pg.dsl().execute("TRUNCATE outbox_message, outbox_effect, outbox_effect_term, outbox_attempt, idempotency_record");
        transport = transport(TransportPolicyConfig.defaults());
    }

    @AfterEach
    void tearDown() {
        transport.close();
    }

    private static ResilientTransport transport(TransportPolicyConfig policies) {
        HttpMailConfig config = HttpMailConfig.of(URI.create(provider.baseUrl()), "tok_test")
                .withTimeouts(Duration.ofSeconds(1), Duration.ofMillis(800));
        return DispatchFixture.resilient(new HttpMailTransport(config), policies);
    }

    private Dispatcher dispatcher(int batch) {
        return DispatchFixture.dispatcher(pg.dataSource(), transport, AmbiguityPolicy.resendWithKey(Duration.ofHours(24)), batch);
    }

    private static void reply(int status, String body, String retryAfter) {
        var response = aResponse().withStatus(status).withHeader("Content-Type", "application/json").withBody(body);
        if (retryAfter != null) {
            response.withHeader("Retry-After", retryAfter);
        }
        provider.stubFor(post(urlEqualTo("/v1/emails")).willReturn(response));
    }

    @Test
    void fiveHundredTwiceThenOkIsSentWithinOneAttemptAndEveryRequestCarriesTheEffectKey() {
        String scenario = "flaky";
        provider.stubFor(post(urlEqualTo("/v1/emails")).inScenario(scenario).whenScenarioStateIs(Scenario.STARTED)
                .willReturn(aResponse().withStatus(500)).willSetStateTo("second"));
        provider.stubFor(post(urlEqualTo("/v1/emails")).inScenario(scenario).whenScenarioStateIs("second")
                .willReturn(aResponse().withStatus(500)).willSetStateTo("third"));
        provider.stubFor(post(urlEqualTo("/v1/emails")).inScenario(scenario).whenScenarioStateIs("third")
                .willReturn(aResponse().withStatus(202).withHeader("Content-Type", "application/json")
                        .withBody("{\"id\":\"prov-102\"}")));
        enqueueOrder(pg.dsl(), 102);
        dispatcher(10).runOnce();

        provider.verify(3, postRequestedFor(urlEqualTo("/v1/emails")).withHeader("Idempotency-Key", equalTo(key(102))));
        Record row = message(pg.dsl(), 102);
        assertThat(row.get(OUTBOX_MESSAGE.STATUS)).isEqualTo("done");
        assertThat(row.get(OUTBOX_MESSAGE.ATTEMPTS)).isEqualTo(1);
        assertThat(DispatchFixture.idempotency(pg.dsl(), 102).get(IDEMPOTENCY_RECORD.RESULT_REF)).isEqualTo("prov-102");
    }

    @Test
    void tooManyRequestsWithRetryAfterThirtyMovesTheMessageAtLeastThirtySecondsAhead() {
        reply(429, "{\"error\":\"slow down\"}", "30");
        enqueueOrder(pg.dsl(), 5);
        Instant before = pg.dsl().fetchSingle("SELECT now()").get(0, Instant.class);
        dispatcher(10).runOnce();
        Record row = message(pg.dsl(), 5);
        assertThat(row.get(OUTBOX_MESSAGE.STATUS)).isEqualTo("pending");
        assertThat(row.get(OUTBOX_MESSAGE.AVAILABLE_AT)).isAfterOrEqualTo(before.plusSeconds(30));
        assertThat(row.get(OUTBOX_MESSAGE.LAST_ERROR)).contains("429");
        // the record says "known not sent", so the next attempt reserves afresh
        assertThat(DispatchFixture.idempotency(pg.dsl(), 5).get(IDEMPOTENCY_RECORD.STATE)).isEqualTo("failed");
    }

    @Test
    void aBadRequestFailsAtOnceKeepingTheProvidersError() {
        reply(400, "{\"error\":\"recipient domain does not accept mail\"}", null);
        enqueueOrder(pg.dsl(), 6);
        dispatcher(10).runOnce();
        Record row = message(pg.dsl(), 6);
        assertThat(row.get(OUTBOX_MESSAGE.STATUS)).isEqualTo("failed");
        assertThat(row.get(OUTBOX_MESSAGE.ATTEMPTS)).isEqualTo(1);
        assertThat(row.get(OUTBOX_MESSAGE.LAST_ERROR)).contains("400").contains("recipient domain does not accept mail");
        provider.verify(1, postRequestedFor(urlEqualTo("/v1/emails")));
    }

    @Test
    void unauthorizedStopsSendingForTheTransportAndLeavesPendingMessagesUntouched() {
        reply(401, "{\"error\":\"bad token\"}", null);
        for (long id = 21; id <= 23; id++) {
            enqueueOrder(pg.dsl(), id);
        }
        Dispatcher d = dispatcher(1);
        assertThat(d.runOnce()).isEqualTo(1);
        assertThat(transport.halted()).isPresent();
        assertThat(d.runOnce()).as("no claims while the transport is halted").isZero();
        makeDue(pg.dsl());
        assertThat(d.runOnce()).isZero();

        provider.verify(1, postRequestedFor(urlEqualTo("/v1/emails")));
        List<Record> rows = pg.dsl().selectFrom(OUTBOX_MESSAGE).fetch().stream().map(r -> (Record) r).toList();
        assertThat(rows).hasSize(3).allSatisfy(r -> {
            assertThat(r.get(OUTBOX_MESSAGE.STATUS)).isEqualTo("pending");
            assertThat(r.get(OUTBOX_MESSAGE.ATTEMPTS)).as("no attempt burnt").isZero();
        });
    }

    @Test
    void theBreakerOpensHoldsClaimsBackThenAProbeClosesItAndTheBacklogDrains() {
        transport.close();
        transport = transport(new TransportPolicyConfig(new RetrySettings(1, Duration.ofMillis(10), Duration.ofMillis(10)),
                new BreakerSettings(4, 2, 50, Duration.ofSeconds(1), 1), BulkheadSettings.DEFAULT, RateLimitSettings.DISABLED));
        reply(503, "{\"error\":\"down\"}", null);
        for (long id = 31; id <= 36; id++) {
            enqueueOrder(pg.dsl(), id);
        }
        Dispatcher d = dispatcher(1);
        d.runOnce();
        d.runOnce();
        assertThat(transport.breakerState()).isEqualTo(CircuitBreaker.State.OPEN);
        var attemptsWhileOpen = pg.dsl().fetch("SELECT idempotency_key, attempts FROM outbox_message ORDER BY id");
        makeDue(pg.dsl());
        assertThat(d.runOnce()).as("nothing claimed while the breaker is open").isZero();
        assertThat(pg.dsl().fetch("SELECT idempotency_key, attempts FROM outbox_message ORDER BY id")).isEqualTo(attemptsWhileOpen);

        reply(202, "{\"id\":\"ok\"}", null);
        await().atMost(Duration.ofSeconds(10)).until(() -> transport.breakerState() == CircuitBreaker.State.HALF_OPEN);
        assertThat(d.runOnce()).as("the half-open probe").isEqualTo(1);
        assertThat(transport.breakerState()).isEqualTo(CircuitBreaker.State.CLOSED);
        makeDue(pg.dsl());
        for (int i = 0; i < 10 && d.runOnce() > 0; i++) {
            makeDue(pg.dsl());
        }
        assertThat(pg.dsl().fetchCount(OUTBOX_MESSAGE, OUTBOX_MESSAGE.STATUS.eq("done"))).isEqualTo(6);
    }

    @Test
    void aCrashAfterTheProviderAcceptedResendsWithTheSameKey() {
        reply(202, "{\"id\":\"prov-9\"}", null);
        enqueueOrder(pg.dsl(), 9);
        DispatchFixture.dispatcher(pg.dataSource(), transport, AmbiguityPolicy.resendWithKey(Duration.ofHours(24)), 10,
                DispatchFixture::dyingBeforeRecording).runOnce();
        assertThat(DispatchFixture.idempotency(pg.dsl(), 9).get(IDEMPOTENCY_RECORD.STATE)).isEqualTo("reserved");

        makeDue(pg.dsl());
        dispatcher(10).runOnce();
        provider.verify(2, postRequestedFor(urlEqualTo("/v1/emails")).withHeader("Idempotency-Key", equalTo(key(9))));
        assertThat(message(pg.dsl(), 9).get(OUTBOX_MESSAGE.STATUS)).isEqualTo("done");
        Record rec = DispatchFixture.idempotency(pg.dsl(), 9);
        assertThat(rec.get(IDEMPOTENCY_RECORD.STATE)).isEqualTo("succeeded");
        assertThat(rec.get(IDEMPOTENCY_RECORD.RESERVATIONS)).isEqualTo(2);
    }

    @Test
    void pastTheProvidersKeyWindowAnUnknownOutcomeGoesToReview() {
        reply(202, "{\"id\":\"prov-10\"}", null);
        enqueueOrder(pg.dsl(), 10);
        DispatchFixture.dispatcher(pg.dataSource(), transport, AmbiguityPolicy.resendWithKey(Duration.ofHours(24)), 10,
                DispatchFixture::dyingBeforeRecording).runOnce();
        pg.dsl().execute("UPDATE idempotency_record SET first_reserved_at = now() - interval '25 hours'");
        makeDue(pg.dsl());
        dispatcher(10).runOnce();
        provider.verify(1, postRequestedFor(urlEqualTo("/v1/emails")));
        assertThat(message(pg.dsl(), 10).get(OUTBOX_MESSAGE.STATUS)).isEqualTo("review");
    }

    @Test
    void aTimeoutAfterTheRequestWasSentIsAmbiguousAndRetriedWithTheSameKey() {
        provider.stubFor(post(urlEqualTo("/v1/emails")).willReturn(aResponse().withStatus(202)
                .withHeader("Content-Type", "application/json").withBody("{\"id\":\"late\"}").withFixedDelay(1500)));
        enqueueOrder(pg.dsl(), 12);
        dispatcher(10).runOnce();
        Record row = message(pg.dsl(), 12);
        assertThat(row.get(OUTBOX_MESSAGE.STATUS)).isEqualTo("pending");
        assertThat(row.get(OUTBOX_MESSAGE.LAST_ERROR)).contains("unknown outcome");
        assertThat(DispatchFixture.idempotency(pg.dsl(), 12).get(IDEMPOTENCY_RECORD.STATE)).isEqualTo("ambiguous");

        reply(202, "{\"id\":\"prov-12\"}", null);
        makeDue(pg.dsl());
        dispatcher(10).runOnce();
        assertThat(message(pg.dsl(), 12).get(OUTBOX_MESSAGE.STATUS)).isEqualTo("done");
        provider.verify(2, postRequestedFor(urlEqualTo("/v1/emails")).withHeader("Idempotency-Key", equalTo(key(12))));
    }
}
