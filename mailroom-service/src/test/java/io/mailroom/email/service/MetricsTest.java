package io.mailroom.email.service;

import com.icegreen.greenmail.junit5.GreenMailExtension;
import com.icegreen.greenmail.util.ServerSetupTest;
import io.mailroom.outbox.NewMessage;
import io.mailroom.outbox.OutboxEnqueuer;
import io.mailroom.testing.PostgresExtension;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.time.Instant;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/** {@code /metrics} after a few messages flowed: each metric present with the value the flow implies. */
class MetricsTest {

    @RegisterExtension
    static final PostgresExtension pg = new PostgresExtension();

    @RegisterExtension
    static final GreenMailExtension greenMail = new GreenMailExtension(ServerSetupTest.SMTP.dynamicPort());

    private static String payload(int id, String email) {
        return ServiceEnv.receipt(id, email, "C " + id);
    }

    @Test
    void metricsReflectWhatFlowed() throws Exception {
        Map<String, String> env = ServiceEnv.smtp(pg.database().jdbcUrlWithCredentials(), greenMail.getSmtp().getPort());
        try (DispatcherService service = DispatcherService.start(ServiceConfig.fromEnv(env))) {
            OutboxEnqueuer enqueuer = new OutboxEnqueuer();
            pg.dsl().transaction(cfg -> {
                for (int i = 1; i <= 3; i++) {
                    enqueuer.enqueue(cfg.dsl(), NewMessage.of(ServiceEnv.TOPIC, "order", "" + i, "email-order-" + i,
                            payload(i, "c" + i + "@example.com")));
                }
                enqueuer.enqueue(cfg.dsl(), NewMessage.of(ServiceEnv.TOPIC, "order", "4", "email-order-4",
                        payload(4, "not an address")));
                enqueuer.enqueue(cfg.dsl(), NewMessage.of(ServiceEnv.TOPIC, "order", "5", "email-order-5",
                        payload(5, "later@example.com")).withAvailableAt(Instant.now().plus(Duration.ofHours(1))));
            });
            await().atMost(Duration.ofSeconds(30)).until(() -> pg.dsl().fetchSingle(
                    "SELECT count(*) FROM outbox_message WHERE status IN ('done', 'failed')").get(0, Integer.class) == 4);
            pg.dsl().execute("ANALYZE outbox_message");
            service.sampleNow();

            String text = HttpClient.newHttpClient().send(HttpRequest.newBuilder(
                    URI.create("http://127.0.0.1:" + service.port() + "/metrics")).build(), HttpResponse.BodyHandlers.ofString()).body();

            assertThat(value(text, "mailroom_outbox_messages{status=\"pending\"}")).isEqualTo(1.0);
            assertThat(value(text, "mailroom_outbox_messages{status=\"running\"}")).isEqualTo(0.0);
            assertThat(value(text, "mailroom_outbox_effects{status=\"failed\"}")).isEqualTo(1.0);
            assertThat(value(text, "mailroom_outbox_effects{status=\"review\"}")).isEqualTo(0.0);
            assertThat(value(text, "mailroom_outbox_oldest_pending_age_seconds")).as("the pending one is not due").isEqualTo(0.0);
            assertThat(value(text, "mailroom_claim_duration_seconds_count")).isGreaterThanOrEqualTo(1.0);
            assertThat(value(text, "mailroom_claim_batch_size_sum")).isEqualTo(4.0);
            assertThat(value(text, "mailroom_claims_total{result=\"empty\"}")).isGreaterThanOrEqualTo(0.0);
            assertThat(value(text, "mailroom_claim_empty_ratio")).isBetween(0.0, 1.0);
            assertThat(value(text, "mailroom_send_duration_seconds_count{outcome=\"done\",transport=\"smtp\"}")).isEqualTo(3.0);
            assertThat(value(text, "mailroom_send_duration_seconds_count{outcome=\"failed\",transport=\"smtp\"}")).isEqualTo(1.0);
            assertThat(value(text, "mailroom_message_attempts_count")).isEqualTo(4.0);
            assertThat(value(text, "mailroom_message_attempts_max")).isEqualTo(1.0);
            assertThat(value(text, "mailroom_leases_rescued_total")).isEqualTo(0.0);
            assertThat(value(text, "mailroom_claims_lost_total{where=\"completion\"}")).isEqualTo(0.0);
            assertThat(value(text, "resilience4j_circuitbreaker_state{name=\"smtp\",state=\"closed\"}")).isEqualTo(1.0);
            assertThat(value(text, "mailroom_table_size_bytes{table=\"outbox_message\"}")).isGreaterThan(8192.0);
            assertThat(value(text, "mailroom_table_tuples{kind=\"live\",table=\"outbox_effect\"}")).isGreaterThanOrEqualTo(0.0);
            assertThat(value(text, "mailroom_table_tuples{kind=\"dead\",table=\"outbox_message\"}")).isGreaterThanOrEqualTo(0.0);
            assertThat(text).contains("mailroom_table_last_autovacuum_seconds{table=\"outbox_message\"}");
        }
    }

    @Test
    void emailsOnATopicNoDispatcherServesAreAMetricPerTopic() throws Exception {
        Map<String, String> env = ServiceEnv.smtp(pg.database().jdbcUrlWithCredentials(), greenMail.getSmtp().getPort());
        pg.dsl().execute("TRUNCATE outbox_message, outbox_effect, outbox_effect_term, outbox_attempt");
        try (DispatcherService service = DispatcherService.start(ServiceConfig.fromEnv(env))) {
            // a template added to a folder the running dispatcher does not read
            new OutboxEnqueuer().enqueue(pg.dsl(), NewMessage.of("email.welcome_back", "user", "7", "email-welcome-7", "{}")
                    .withAvailableAt(Instant.now().minus(Duration.ofMinutes(5))));
            service.sampleNow();
            String text = HttpClient.newHttpClient().send(HttpRequest.newBuilder(
                    URI.create("http://127.0.0.1:" + service.port() + "/metrics")).build(), HttpResponse.BodyHandlers.ofString()).body();
            assertThat(value(text, "mailroom_unserved_topic_messages{topic=\"email.welcome_back\"}")).isEqualTo(1.0);
            assertThat(text).doesNotContain("mailroom_unserved_topic_messages{topic=\"" + ServiceEnv.TOPIC + "\"}");
        }
    }

    @Test
    void aBounceStoredByTheDsnPipeInItsOwnProcessReachesTheDispatchersCounter() throws Exception {
        Map<String, String> env = ServiceEnv.smtp(pg.database().jdbcUrlWithCredentials(), greenMail.getSmtp().getPort());
        try (DispatcherService service = DispatcherService.start(ServiceConfig.fromEnv(env))) {
            // `mailroom dsn ingest` as the mail server pipes it: its own connection, its own store, no dispatcher in it
            DsnCommandTest.Run piped = DsnCommandTest.run(Map.of("MAILROOM_DB_URL", pg.database().jdbcUrlWithCredentials()),
                    DsnCommandTest.BOUNCE, "-");
            assertThat(piped.code()).as(piped.err()).isZero();
            service.sampleNow();
            String text = HttpClient.newHttpClient().send(HttpRequest.newBuilder(
                    URI.create("http://127.0.0.1:" + service.port() + "/metrics")).build(), HttpResponse.BodyHandlers.ofString()).body();
            assertThat(value(text, "mailroom_delivery_events_total{bounce=\"hard\",kind=\"bounced\",source=\"dsn\",topic=\"none\"}"))
                    .isEqualTo(1.0);
        }
    }

    /** The value of one exposition line, matched by metric name and exact label set. */
    private static double value(String exposition, String series) {
        Matcher m = Pattern.compile("(?m)^" + Pattern.quote(series) + " (\\S+)$").matcher(exposition);
        assertThat(m.find()).as("series %s in /metrics", series).isTrue();
        return Double.parseDouble(m.group(1));
    }
}
