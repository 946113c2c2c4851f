package io.mailroom.support;

import com.fasterxml.jackson.databind.JsonNode;
import io.mailroom.delivery.BounceType;
import io.mailroom.delivery.DeliveryEvent;
import io.mailroom.delivery.DeliveryEventStore;
import io.mailroom.delivery.DeliveryKind;
import io.mailroom.outbox.maintenance.RollupConfig;
import io.mailroom.outbox.maintenance.StatsRollup;
import io.mailroom.testing.PostgresExtension;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import java.net.http.HttpResponse;
import java.sql.Connection;
import java.sql.Statement;
import java.time.Duration;
import java.util.List;
import java.util.Map;

import static io.mailroom.support.TestMail.Result.FAILED;
import static io.mailroom.support.TestMail.Result.RETRY;
import static io.mailroom.support.TestMail.Result.SENT;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * Emails by topic over 1 h, 24 h and 7 d, in the API and on the queue page, from the rollups the
 * dispatchers' role fills: the same totals in every range, one bucket per step, a 400 naming
 * {@code range} for any other; and the week is read without touching the history (its tables are
 * locked while it is read). Also the console's side of live refresh: a refresh of an ended session
 * is a 401, not the sign-in page, and it never takes the message meant for the next page.
 */
class TopicStatsTest {

    @RegisterExtension
    static final PostgresExtension pg = new PostgresExtension();

    static final String VIEWER = "vic-viewer-token-0123456789";
    static final String OPERATOR = "olga-operator-token-0123456789";

    private static SupportServer server;
    private static Http http;

    @BeforeAll
    static void start() {
        server = SupportServer.start(pg.dataSource(), SupportConfig.builder().host("127.0.0.1").port(0)
                .tokens("vic:viewer:" + VIEWER + ",olga:operator:" + OPERATOR).build(), List::of);
        http = new Http(server.baseUri());
    }

    @AfterAll
    static void stop() {
        server.stop();
    }

    @BeforeEach
    void emails() {
        TestMail.truncate(pg.dsl());
        pg.dsl().execute("TRUNCATE outbox_rollup, outbox_rollup_mark, delivery_event_rollup, delivery_event_count");
        for (long order = 1; order <= 3; order++) {
            TestMail.confirmation(pg.dsl(), order);
        }
        TestMail.shipped(pg.dsl(), 1);
        TestMail.dispatch(pg.dataSource(), Map.of("email-order-2", FAILED, "email-order-1-shipped", RETRY));
        TestMail.confirmation(pg.dsl(), 4); // waits
        // the attempts ended two minutes ago, so their minute has closed and the rollup folds it
        pg.dsl().execute("UPDATE outbox_attempt SET started_at = started_at - interval '2 minutes',"
                + " finished_at = finished_at - interval '2 minutes'");
        DeliveryEventStore events = new DeliveryEventStore(List.of(), null);
        pg.dsl().transaction(c -> events.ingest(c.dsl(), "neutral", "bounce-1", List.of(new DeliveryEvent(DeliveryKind.BOUNCED,
                BounceType.HARD, "email.bounced", null, "email-order-3", null, null, "smtp; 550", null))));
        StatsRollup.Report report = new StatsRollup(pg.dataSource(), RollupConfig.builder().backfill(Duration.ofHours(1)).build()).run();
        assertThat(report.attempts()).isEqualTo(4);
        assertThat(report.sampled()).isTrue();
    }

    private static JsonNode topics(String query) {
        HttpResponse<String> r = http.get("/api/stats/topics" + query, Http.bearer(VIEWER));
        assertThat(r.statusCode()).as(r.body()).isEqualTo(200);
        return Http.json(r);
    }

    private static JsonNode topic(JsonNode stats, String name) {
        for (JsonNode t : stats.get("topics")) {
            if (t.get("topic").asText().equals(name)) {
                return t;
            }
        }
        throw new AssertionError("no topic " + name + " in " + stats);
    }

    @Test
    void everyRangeHasItsBucketsAndTheSameTotals() {
        for (String[] r : new String[][]{{"1h", "60", "60"}, {"24h", "900", "96"}, {"7d", "3600", "168"}}) {
            JsonNode stats = topics("?range=" + r[0]);
            assertThat(stats.get("range").asText()).isEqualTo(r[0]);
            assertThat(stats.get("stepSeconds").asLong()).isEqualTo(Long.parseLong(r[1]));
            assertThat(stats.get("countedUntil").asText()).endsWith(":00Z");
            assertThat(stats.get("topics")).extracting(t -> t.get("topic").asText())
                    .containsExactly("email.order_confirmation", "email.order_shipped");
            JsonNode confirmation = topic(stats, "email.order_confirmation");
            assertThat(confirmation.get("buckets")).as(r[0]).hasSize(Integer.parseInt(r[2]));
            assertThat(confirmation.get("sent").asLong()).as(r[0]).isEqualTo(2);
            assertThat(confirmation.get("failed").asLong()).as(r[0]).isEqualTo(1);
            assertThat(confirmation.get("bounced").asLong()).as(r[0]).isEqualTo(1);
            assertThat(confirmation.get("waiting").asLong()).as(r[0] + ": email-order-4 waits").isEqualTo(1);
            long failedForGood = 0;
            for (JsonNode b : confirmation.get("buckets")) {
                failedForGood += b.get("failedForGood").asLong();
            }
            assertThat(failedForGood).isEqualTo(1);
            JsonNode shipped = topic(stats, "email.order_shipped");
            assertThat(shipped.get("failed").asLong()).as("a try that will be retried is a failed try").isEqualTo(1);
            assertThat(shipped.get("waiting").asLong()).as("the retry waits").isEqualTo(1);
            assertThat(shipped.get("buckets").get(0).get("waiting").isNull()).as("no sample before the rollup ran").isTrue();
        }
        assertThat(topics("").get("range").asText()).as("the last hour unless asked").isEqualTo("1h");
    }

    @Test
    void anotherRangeOrAnUnknownParameterIsA400NamingIt() {
        HttpResponse<String> r = http.get("/api/stats/topics?range=2h", Http.bearer(VIEWER));
        assertThat(r.statusCode()).isEqualTo(400);
        assertThat(Http.json(r).get("parameter").asText()).isEqualTo("range");
        assertThat(Http.json(r).get("error").asText()).isEqualTo("range must be one of 1h, 24h, 7d");
        HttpResponse<String> unknown = http.get("/api/stats/topics?range=1h&topic=x", Http.bearer(VIEWER));
        assertThat(unknown.statusCode()).isEqualTo(400);
        assertThat(Http.json(unknown).get("error").asText()).isEqualTo("unknown parameter topic; accepted: range");
        assertThat(http.get("/api/stats/topics").statusCode()).isEqualTo(401);
    }

    @Test
    void theWeekIsReadWhileTheHistoryIsLockedByAnother() throws Exception {
        try (Connection blocker = pg.newConnection()) {
            blocker.setAutoCommit(false);
            try (Statement st = blocker.createStatement()) {
                st.execute("LOCK TABLE outbox_attempt, outbox_effect, outbox_message, delivery_event IN ACCESS EXCLUSIVE MODE");
            }
            long started = System.nanoTime();
            JsonNode week = topics("?range=7d");
            assertThat(Duration.ofNanos(System.nanoTime() - started)).isLessThan(Duration.ofSeconds(3));
            assertThat(topic(week, "email.order_confirmation").get("sent").asLong()).isEqualTo(2);
            blocker.rollback();
        }
    }

    // ------------------------------------------------------------------------------------ console

    private static String signIn(String token) {
        return ConsoleLogin.signIn(http, token);
    }

    @Test
    void theQueuePageChartsEachRangeAndSaysWhichIsShown() {
        String session = signIn(VIEWER);
        for (String range : List.of("1h", "24h", "7d")) {
            HttpResponse<String> page = http.get("/console/queue?range=" + range, "Cookie", "mailroom_session=" + session);
            assertThat(page.statusCode()).isEqualTo(200);
            assertThat(page.body()).contains("<h3 class=\"topic-title\">email.order_confirmation <span class=\"muted\">2 sent · 1 failed tries"
                            + " · 1 bounced · 1 waiting</span>")
                    .contains("data-topic=\"email.order_shipped\"")
                    .contains("href=\"/console/queue?range=" + range + "#by-topic\" class=\"active\"")
                    .contains("<rect class=\"bounced\"").contains("data-live id=\"live-topics\"")
                    .doesNotContain("Reload the page");
        }
        assertThat(http.get("/console/queue", "Cookie", "mailroom_session=" + session).body())
                .contains("href=\"/console/queue?range=1h#by-topic\" class=\"active\"");
        HttpResponse<String> bad = http.get("/console/queue?range=1y", "Cookie", "mailroom_session=" + session);
        assertThat(bad.statusCode()).isEqualTo(400);
        assertThat(bad.body()).contains("range must be one of 1h, 24h, 7d");
    }

    @Test
    void aRefreshOfAnEndedSessionIs401_andARefreshNeverTakesTheNextPagesMessage() {
        // no session: a person is sent to sign in, a refresh is told 401 (app.js then stops and says so)
        assertThat(http.get("/console/emails?status=failed").statusCode()).isEqualTo(303);
        assertThat(http.get("/console/emails?status=failed", "X-Mailroom-Refresh", "1").statusCode()).isEqualTo(401);
        assertThat(http.get("/console/queue", "Cookie", "mailroom_session=expired", "X-Mailroom-Refresh", "1").statusCode())
                .isEqualTo(401);

        // an action's message waits for the page the person sees next, not for a refresh in between
        String session = signIn(OPERATOR);
        HttpResponse<String> form = http.get("/console/queue", "Cookie", "mailroom_session=" + session);
        HttpResponse<String> paused = http.postForm("/console/control/pause", Map.of("csrf", Http.hidden(form.body(), "csrf"),
                "reason", "provider outage"), "Cookie", "mailroom_session=" + session, "Origin", http.origin());
        assertThat(paused.statusCode()).isEqualTo(303);
        String refreshed = http.get("/console/queue", "Cookie", "mailroom_session=" + session, "X-Mailroom-Refresh", "1").body();
        assertThat(refreshed).contains("Sending is paused").doesNotContain("class=\"flash");
        assertThat(http.get("/console/queue", "Cookie", "mailroom_session=" + session).body())
                .contains("Every dispatcher stops taking new emails");
    }
}
