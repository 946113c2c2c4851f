package io.mailroom.email.service;

import com.github.tomakehurst.wiremock.WireMockServer;
import com.github.tomakehurst.wiremock.core.WireMockConfiguration;
import io.mailroom.outbox.InvalidSettingException;
import io.mailroom.outbox.NewMessage;
import io.mailroom.outbox.OutboxEnqueuer;
import io.mailroom.testing.PostgresExtension;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import java.time.Duration;
import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;

import static com.github.tomakehurst.wiremock.client.WireMock.aResponse;
import static com.github.tomakehurst.wiremock.client.WireMock.post;
import static com.github.tomakehurst.wiremock.client.WireMock.postRequestedFor;
import static com.github.tomakehurst.wiremock.client.WireMock.urlEqualTo;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

/**
 * The dispatcher's sessions: its pools are sized by what holds a session (claimers, completer,
 * LISTEN, maintenance, the service's own checks, the handlers' reservations), not by the number of
 * handlers, and start-up refuses a server that has no room for them.
 */
class ConnectionBudgetTest {

    @RegisterExtension
    static final PostgresExtension pg = new PostgresExtension();

    private static Map<String, String> smtpEnv() {
        return ServiceEnv.smtp(pg.database().jdbcUrlWithCredentials(), 2525);
    }

    @Test
    void theDefaultPoolIsSizedByWhatNeedsASessionSoThreeDispatchersAndTheOrderServiceFitInTheDefaultMaxConnections() {
        ServiceConfig c = ServiceConfig.fromEnv(smtpEnv()); // 2 claimers, LISTEN on
        assertThat(c.dispatcher().concurrency()).isEqualTo(ServiceConfig.DEFAULT_CONCURRENCY).isEqualTo(64);

        // 2 claimers + completer + LISTEN + 2 maintenance + retention, metrics, readiness
        assertThat(c.dispatcherSessions()).isEqualTo(9);
        assertThat(c.reservationSessions()).as("64 handlers / 16").isEqualTo(4);
        assertThat(c.poolSize()).isEqualTo(13);
        // PostgreSQL's defaults: max_connections 100, 3 reserved for superusers; the order service's pool is 10
        assertThat(3 * c.totalSessions() + 10).isLessThanOrEqualTo(100 - 3 - 20);

        Map<String, String> quiet = smtpEnv();
        quiet.put("MAILROOM_LISTEN", "false");
        quiet.put("MAILROOM_CLAIMERS", "1");
        quiet.put("MAILROOM_CONCURRENCY", "4");
        assertThat(ServiceConfig.fromEnv(quiet).poolSize()).as("1 + 1 + 0 + 2 + 3 + at least 2").isEqualTo(9);
    }

    @Test
    void aPoolTooSmallForTheFixedSessionsIsRefusedNamingWhatNeedsThem() {
        Map<String, String> env = smtpEnv();
        env.put("MAILROOM_DB_POOL_SIZE", "9");

        assertThatThrownBy(() -> ServiceConfig.fromEnv(env)).isInstanceOf(InvalidSettingException.class)
                .hasMessageContaining("MAILROOM_DB_POOL_SIZE must be 10..500")
                .hasMessageContaining("2 claimers").hasMessageContaining("reservations").hasMessageContaining("got 9");
        env.put("MAILROOM_DB_POOL_SIZE", "10");
        assertThat(ServiceConfig.fromEnv(env).reservationSessions()).isEqualTo(1);
    }

    @Test
    void startFailsNamingTheNumbersWhenTheServerHasFewerFreeSlotsThanThePoolsAskFor() {
        int maxConnections = pg.dsl().fetchSingle("SELECT current_setting('max_connections')::int").get(0, Integer.class);
        Map<String, String> env = smtpEnv();
        env.put("MAILROOM_DB_POOL_SIZE", String.valueOf(maxConnections + 1));

        assertThatThrownBy(() -> DispatcherService.start(ServiceConfig.fromEnv(env)))
                .isInstanceOf(DatabaseStartupException.class)
                .hasMessageContaining("max_connections " + maxConnections)
                .hasMessageContaining("superuser_reserved_connections ")
                .hasMessageContaining("sessions of other clients in pg_stat_activity")
                .hasMessageContaining("needs " + (maxConnections + 1))
                .hasMessageContaining("MAILROOM_DB_POOL_SIZE");
        // the pools were not filled before the check: no session of ours is left behind
        await().atMost(Duration.ofSeconds(10)).until(() -> ourSessions() == 0);
    }

    @Test
    void theDefaultHandlersWithThirtyTwoSlowSendsAtOnceOnTheFormulaPoolsAllComplete() throws Exception {
        WireMockServer provider = new WireMockServer(WireMockConfiguration.options().dynamicPort().bindAddress("127.0.0.1")
                .containerThreads(48).jettyAcceptors(1));
        provider.start();
        try {
            provider.stubFor(post(urlEqualTo("/v1/emails")).willReturn(aResponse().withStatus(202).withFixedDelay(250)
                    .withHeader("Content-Type", "application/json").withBody("{\"id\":\"prov-1\"}")));
            Map<String, String> env = new HashMap<>(smtpEnv());
            env.put("MAILROOM_TRANSPORT", "http");
            env.put("MAILROOM_HTTP_BASE_URL", provider.baseUrl());
            env.put("MAILROOM_HTTP_TOKEN", "tok_test");
            env.put("MAILROOM_HTTP_TIMEOUT", "5s");
            // the default 64 handlers, 32 of them sending at once
            env.put("MAILROOM_BULKHEAD_MAX_CONCURRENT", "32");
            env.put("MAILROOM_BATCH_SIZE", "32");
            int messages = 320;
            pg.dsl().transaction(cfg -> {
                OutboxEnqueuer enqueuer = new OutboxEnqueuer();
                for (int i = 1; i <= messages; i++) {
                    enqueuer.enqueue(cfg.dsl(), NewMessage.of(ServiceEnv.TOPIC, "order", String.valueOf(i), "email-order-" + i, ServiceEnv.receipt(i, "c" + i + "@example.com", "C")));
                }
            });

            AtomicInteger peakInFlight = new AtomicInteger();
            AtomicInteger peakSessions = new AtomicInteger();
            AtomicBoolean sampling = new AtomicBoolean(true);
            try (DispatcherService service = DispatcherService.start(ServiceConfig.fromEnv(env))) {
                assertThat(service.dataSource().getMaximumPoolSize()).isEqualTo(9);
                assertThat(service.reservationDataSource().getMaximumPoolSize()).isEqualTo(4);
                Thread sampler = Thread.ofPlatform().start(() -> {
                    while (sampling.get()) {
                        peakInFlight.accumulateAndGet(service.dispatcher().inFlightCount(), Math::max);
                        peakSessions.accumulateAndGet(ourSessions(), Math::max);
                        try {
                            Thread.sleep(20);
                        } catch (InterruptedException e) {
                            return;
                        }
                    }
                });

                await().atMost(Duration.ofSeconds(60)).until(() -> pg.dsl().fetchSingle(
                        "SELECT count(*) FROM outbox_message WHERE status = 'done'").get(0, Integer.class) == messages);
                sampling.set(false);
                sampler.join();
            }
            assertThat(pg.dsl().fetchSingle("SELECT count(*) FROM outbox_message WHERE status <> 'done' OR attempts <> 1")
                    .get(0, Integer.class)).as("every message sent on its first attempt").isZero();
            provider.verify(messages, postRequestedFor(urlEqualTo("/v1/emails")));
            assertThat(peakInFlight.get()).as("handlers ran side by side on 4 reservation sessions").isGreaterThan(16);
            assertThat(peakSessions.get()).as("sessions of this dispatcher in pg_stat_activity").isLessThanOrEqualTo(13);
        } finally {
            provider.stop();
        }
    }

    /** Sessions of dispatchers in this test's database. */
    private static int ourSessions() {
        return pg.dsl().fetchSingle("SELECT count(*)::int FROM pg_stat_activity WHERE datname = current_database()"
                + " AND application_name LIKE 'mailroom-dispatcher-%'").get(0, Integer.class);
    }
}
