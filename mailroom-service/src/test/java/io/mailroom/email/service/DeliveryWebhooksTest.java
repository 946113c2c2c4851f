package io.mailroom.email.service;

import com.github.tomakehurst.wiremock.WireMockServer;
import com.github.tomakehurst.wiremock.core.WireMockConfiguration;
import io.mailroom.delivery.webhook.WebhookSecrets;
import io.mailroom.delivery.webhook.WebhookVerifier;
import io.mailroom.email.api.EmailOutbox;
import io.mailroom.email.api.OutgoingEmail;
import io.mailroom.outbox.OutboxEnqueuer;
import io.mailroom.testing.PostgresExtension;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;

import static com.github.tomakehurst.wiremock.client.WireMock.aResponse;
import static com.github.tomakehurst.wiremock.client.WireMock.urlEqualTo;
import static io.mailroom.db.jooq.Tables.DELIVERY_EVENT;
import static io.mailroom.db.jooq.Tables.OUTBOX_EFFECT;
import static io.mailroom.db.jooq.Tables.SUPPRESSION;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * The dispatcher service's delivery-event endpoint over real HTTP, with real signatures: each answer
 * of the list, a replay, out-of-order events, the DSN route, and the bound on requests in flight.
 */
class DeliveryWebhooksTest {

    @RegisterExtension
    static final PostgresExtension pg = new PostgresExtension();

    static final String NEUTRAL_SECRET = "whsec_" + java.util.Base64.getEncoder().encodeToString("neutral-secret-0123456789".getBytes());
    static final String RESEND_SECRET = "whsec_" + java.util.Base64.getEncoder().encodeToString("resend-secret-0123456789!".getBytes());
    static final String DSN_TOKEN = "dsn-token-0123456789abcdefghij";
    static final WebhookSecrets NEUTRAL = WebhookSecrets.of("t", List.of(NEUTRAL_SECRET));
    static final WebhookSecrets RESEND = WebhookSecrets.of("t", List.of(RESEND_SECRET));
    private static final AtomicInteger IDS = new AtomicInteger();

    static WireMockServer provider;
    static DispatcherService service;
    static final HttpClient http = HttpClient.newHttpClient();

    @BeforeAll
    static void start() {
        provider = new WireMockServer(WireMockConfiguration.options().dynamicPort().bindAddress("127.0.0.1"));
        provider.start();
        provider.stubFor(com.github.tomakehurst.wiremock.client.WireMock.post(urlEqualTo("/v1/emails")).willReturn(aResponse().withStatus(200)
                .withHeader("Content-Type", "application/json").withBody("{\"id\":\"prov-{{request.headers.[Idempotency-Key]}}\"}")
                .withTransformers("response-template")));
        Map<String, String> env = ServiceEnv.httpWithWebhooks(pg.database().jdbcUrlWithCredentials(), provider.baseUrl(),
                "neutral:" + NEUTRAL_SECRET + ",resend:" + RESEND_SECRET);
        env.put("MAILROOM_WEBHOOKS_MAX_BODY_BYTES", "4096");
        env.put("MAILROOM_WEBHOOKS_MAX_IN_FLIGHT", "1");
        env.put("MAILROOM_DSN_TOKEN", DSN_TOKEN);
        service = DispatcherService.start(ServiceConfig.fromEnv(env));
    }

    @AfterAll
    static void stop() {
        if (service != null) {
            service.close();
        }
        if (provider != null) {
            provider.stop();
        }
    }

    /** Sends one email through the service and waits until the provider accepted it. */
    static String sentEmail(String to) {
        return ServiceEnv.sendShippedAndWait(pg.dsl(), "email-order-" + (500 + IDS.incrementAndGet()), to);
    }

    static HttpResponse<String> post(String source, byte[] body, Map<String, String> headers) throws Exception {
        HttpRequest.Builder b = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + service.webhookPort() + "/webhooks/" + source))
                .POST(HttpRequest.BodyPublishers.ofByteArray(body)).header("Content-Type", "application/json");
        headers.forEach(b::header);
        return http.send(b.build(), HttpResponse.BodyHandlers.ofString());
    }

    static HttpResponse<String> signed(String source, WebhookSecrets secrets, String webhookId, String json) throws Exception {
        byte[] body = json.getBytes(StandardCharsets.UTF_8);
        return post(source, body, WebhookVerifier.headers(secrets, webhookId, Instant.now().getEpochSecond(), body));
    }

    static String state(String key) {
        return pg.dsl().select(io.mailroom.db.jooq.Tables.DELIVERY_STATE.STATE).from(io.mailroom.db.jooq.Tables.DELIVERY_STATE).where(io.mailroom.db.jooq.Tables.DELIVERY_STATE.IDEMPOTENCY_KEY.eq(key))
                .fetchOne(io.mailroom.db.jooq.Tables.DELIVERY_STATE.STATE);
    }

    @Test
    void aSignedBounceIsStoredOnce_movesTheEmail_suppressesTheAddress_andAReplayChangesNothing() throws Exception {
        String key = sentEmail("bounce-" + IDS.get() + "@example.com");
        String json = "{\"type\":\"bounced\",\"bounce_type\":\"hard\",\"idempotency_key\":\"" + key + "\",\"recipient\":\"bounce-"
                + IDS.get() + "@example.com\",\"diagnostic_code\":\"smtp; 550 5.1.1 user unknown\"}";

        HttpResponse<String> first = signed("neutral", NEUTRAL, "msg_" + key, json);
        HttpResponse<String> again = signed("neutral", NEUTRAL, "msg_" + key, json);

        assertThat(first.statusCode()).as(first.body()).isEqualTo(200);
        assertThat(first.body()).contains("\"replay\":false").contains("\"matched\":1");
        assertThat(again.statusCode()).isEqualTo(200);
        assertThat(again.body()).contains("\"replay\":true");
        assertThat(state(key)).isEqualTo("bounced");
        assertThat(pg.dsl().fetchCount(DELIVERY_EVENT, DELIVERY_EVENT.DELIVERY_ID.eq("msg_" + key))).isEqualTo(1);
        assertThat(pg.dsl().fetchCount(SUPPRESSION, SUPPRESSION.ADDRESS.eq("bounce-" + IDS.get() + "@example.com"))).isEqualTo(1);
        // the rate by topic: bounces over sent emails, both counted by topic
        service.sampleNow(); // delivery events are counted in the database, for every process that stores them
        assertThat(service.metrics().scrape())
                .containsPattern("mailroom_delivery_events_total\\{bounce=\"hard\",kind=\"bounced\",source=\"neutral\",topic=\"email.welcome\"} [1-9]")
                .containsPattern("mailroom_emails_sent_total\\{topic=\"email.welcome\"} [1-9]");
    }

    @Test
    void resendsFormatMatchesByTheProviderIdTheSendStored_andOutOfOrderEventsNeverMoveItBack() throws Exception {
        String key = sentEmail("order-" + IDS.get() + "@example.com");
        String bounced = "{\"type\":\"email.bounced\",\"created_at\":\"2026-12-04T10:05:00Z\",\"data\":{\"email_id\":\"prov-" + key
                + "\",\"to\":[\"x@example.com\"],\"bounce\":{\"type\":\"Permanent\",\"subType\":\"General\",\"message\":\"550 gone\"}}}";
        String delivered = "{\"type\":\"email.delivered\",\"created_at\":\"2026-12-04T10:04:00Z\",\"data\":{\"email_id\":\"prov-" + key + "\"}}";

        assertThat(signed("resend", RESEND, "msg_b_" + key, bounced).statusCode()).isEqualTo(200);
        assertThat(signed("resend", RESEND, "msg_d_" + key, delivered).statusCode()).isEqualTo(200);

        assertThat(state(key)).isEqualTo("bounced");
        assertThat(pg.dsl().select(DELIVERY_EVENT.KIND, DELIVERY_EVENT.APPLIED).from(DELIVERY_EVENT)
                .where(DELIVERY_EVENT.IDEMPOTENCY_KEY.eq(key)).orderBy(DELIVERY_EVENT.ID).fetch(r -> r.value1() + ":" + r.value2()))
                .containsExactly("bounced:true", "delivered:false");
    }

    @Test
    void everyBadRequestGetsItsAnswer_andStoresNothing() throws Exception {
        int before = pg.dsl().fetchCount(DELIVERY_EVENT);
        byte[] body = "{\"type\":\"delivered\",\"idempotency_key\":\"k\"}".getBytes(StandardCharsets.UTF_8);
        long now = Instant.now().getEpochSecond();
        Map<String, String> good = WebhookVerifier.headers(NEUTRAL, "msg_bad_1", now, body);

        // tampered body
        assertThat(post("neutral", "{\"type\":\"bounced\",\"idempotency_key\":\"k\"}".getBytes(), good).statusCode()).isEqualTo(401);
        // wrong secret
        assertThat(post("neutral", body, WebhookVerifier.headers(RESEND, "msg_bad_2", now, body)).statusCode()).isEqualTo(401);
        // old timestamp
        HttpResponse<String> stale = post("neutral", body, WebhookVerifier.headers(NEUTRAL, "msg_bad_3", now - 600, body));
        assertThat(stale.statusCode()).isEqualTo(401);
        assertThat(stale.body()).contains("more than 5 minutes");
        // missing header
        HttpResponse<String> missing = post("neutral", body, Map.of("webhook-id", "msg_bad_4", "webhook-timestamp", Long.toString(now)));
        assertThat(missing.statusCode()).isEqualTo(401);
        assertThat(missing.body()).contains("missing header webhook-signature");
        // malformed, signed
        HttpResponse<String> malformed = signed("neutral", NEUTRAL, "msg_bad_5", "{\"type\":\"bounced\"}");
        assertThat(malformed.statusCode()).isEqualTo(400);
        assertThat(malformed.body()).contains("bounce_type: is required");
        // unknown source
        assertThat(post("mailgun", body, good).statusCode()).isEqualTo(404);
        // oversized
        byte[] big = ("{\"type\":\"delivered\",\"description\":\"" + "x".repeat(5000) + "\"}").getBytes(StandardCharsets.UTF_8);
        assertThat(post("neutral", big, WebhookVerifier.headers(NEUTRAL, "msg_bad_6", now, big)).statusCode()).isEqualTo(413);

        assertThat(pg.dsl().fetchCount(DELIVERY_EVENT)).isEqualTo(before);
    }

    @Test
    void nothingOfAWebhookBodyReachesALogLine_beyondTheIds() throws Exception {
        ch.qos.logback.classic.Logger root = (ch.qos.logback.classic.Logger) org.slf4j.LoggerFactory.getLogger(org.slf4j.Logger.ROOT_LOGGER_NAME);
        ch.qos.logback.core.read.ListAppender<ch.qos.logback.classic.spi.ILoggingEvent> logs = new ch.qos.logback.core.read.ListAppender<>();
        logs.start();
        root.addAppender(logs);
        ch.qos.logback.classic.Level was = root.getLevel();
        root.setLevel(ch.qos.logback.classic.Level.DEBUG);
        try {
            String key = sentEmail("leak-check-recipient@example.com");
            signed("neutral", NEUTRAL, "msg_leak_" + key, "{\"type\":\"bounced\",\"bounce_type\":\"hard\",\"idempotency_key\":\"" + key
                    + "\",\"recipient\":\"leak-check-recipient@example.com\",\"diagnostic_code\":\"LEAKCHECK-DIAGNOSTIC\"}");
            signed("neutral", NEUTRAL, "msg_leak_orphan_" + key, "{\"type\":\"complained\",\"message_id\":\"LEAKCHECK-ID\","
                    + "\"recipient\":\"leak-check-orphan@example.com\",\"description\":\"LEAKCHECK-DESCRIPTION\"}");
            signed("neutral", NEUTRAL, "msg_leak_bad_" + key, "{\"type\":\"bounced\",\"bounce_type\":\"LEAKCHECK-BAD\"}");
        } finally {
            root.detachAppender(logs);
            root.setLevel(was);
        }
        assertThat(logs.list).isNotEmpty();
        assertThat(logs.list).extracting(ch.qos.logback.classic.spi.ILoggingEvent::getFormattedMessage)
                .noneMatch(m -> m.contains("LEAKCHECK") || m.contains("leak-check-orphan") || m.contains("leak-check-recipient@example.com")
                        && !m.contains("***"));
    }

    @Test
    void anUnknownEventTypeIsStoredAndIgnoredWith202() throws Exception {
        HttpResponse<String> r = signed("resend", RESEND, "msg_open_" + IDS.incrementAndGet(),
                "{\"type\":\"email.opened\",\"data\":{\"email_id\":\"whatever\"}}");
        assertThat(r.statusCode()).isEqualTo(202);
        assertThat(pg.dsl().fetchCount(DELIVERY_EVENT, DELIVERY_EVENT.PROVIDER_EVENT.eq("email.opened"))).isEqualTo(1);
    }

    @Test
    void aMailServerPostsADsnWithItsToken() throws Exception {
        String key = sentEmail("dsn-" + IDS.get() + "@example.com");
        String messageId = pg.dsl().fetchValue("SELECT result_ref FROM idempotency_record WHERE effect_key = ?", key).toString();
        String dsn = ("MIME-Version: 1.0\r\nMessage-ID: <dsn-" + key + "@mx.example>\r\n"
                + "Content-Type: multipart/report; report-type=delivery-status; boundary=b\r\n\r\n"
                + "--b\r\nContent-Type: message/delivery-status\r\n\r\nReporting-MTA: dns; mx.example\r\n\r\n"
                + "Final-Recipient: rfc822; dsn-" + IDS.get() + "@example.com\r\nAction: failed\r\nStatus: 4.2.2\r\n"
                + "Diagnostic-Code: smtp; 452 4.2.2 mailbox full\r\n\r\n"
                + "--b\r\nContent-Type: text/rfc822-headers\r\n\r\nMessage-ID: <" + messageId + ">\r\n\r\n--b--\r\n");
        byte[] body = dsn.getBytes(StandardCharsets.UTF_8);

        assertThat(post("dsn", body, Map.of()).statusCode()).isEqualTo(401);
        HttpResponse<String> ok = post("dsn", body, Map.of("Authorization", "Bearer " + DSN_TOKEN));
        assertThat(ok.statusCode()).as(ok.body()).isEqualTo(200);
        assertThat(ok.body()).contains("\"matched\":1");
        assertThat(state(key)).isEqualTo("bounced");
        assertThat(post("dsn", "not a report".getBytes(), Map.of("Authorization", "Bearer " + DSN_TOKEN)).statusCode()).isEqualTo(400);
    }

    @Test
    void anEventNamingAnotherAddressSuppressesThatAddress_andTheMismatchIsInTheEmailsHistoryAndOnAMetric() throws Exception {
        String sentTo = "sent-" + IDS.incrementAndGet() + "@example.com";
        String named = "forwarded-" + IDS.get() + "@example.org";
        String key = sentEmail(sentTo);
        double before = mismatches();
        HttpResponse<String> r = signed("neutral", NEUTRAL, "msg_mismatch_" + key, "{\"type\":\"bounced\",\"bounce_type\":\"hard\","
                + "\"idempotency_key\":\"" + key + "\",\"recipient\":\"" + named.toUpperCase(java.util.Locale.ROOT) + "\"}");
        assertThat(r.statusCode()).as(r.body()).isEqualTo(200);

        assertThat(pg.dsl().fetchCount(SUPPRESSION, SUPPRESSION.ADDRESS.eq(named))).isEqualTo(1);
        assertThat(pg.dsl().fetchCount(SUPPRESSION, SUPPRESSION.ADDRESS.eq(sentTo))).isZero();
        var audit = pg.dsl().selectFrom(io.mailroom.db.jooq.Tables.AUDIT_LOG)
                .where(io.mailroom.db.jooq.Tables.AUDIT_LOG.IDEMPOTENCY_KEY.eq(key)).fetch();
        assertThat(audit).singleElement().satisfies(a -> {
            assertThat(a.getAction()).isEqualTo(io.mailroom.delivery.DeliveryEventStore.RECIPIENT_MISMATCH);
            assertThat(a.getActor()).isEqualTo("event:neutral");
            assertThat(a.getReason()).doesNotContain(sentTo).doesNotContain(named);
            assertThat(a.getDetail().data()).contains("\"reported\": \"" + named + "\"").contains("\"sentTo\": \"" + sentTo + "\"");
        });
        assertThat(mismatches()).isEqualTo(before + 1);
        assertThat(service.metrics().scrape()).contains("mailroom_delivery_event_recipient_mismatch_total{source=\"neutral\",topic=\"email.welcome\"}");

        // the same address, in another case, is no mismatch
        String address = "same-" + IDS.incrementAndGet() + "@example.com";
        String same = sentEmail(address);
        signed("neutral", NEUTRAL, "msg_same_" + same, "{\"type\":\"delivered\",\"idempotency_key\":\"" + same
                + "\",\"recipient\":\"" + address.toUpperCase(java.util.Locale.ROOT) + "\"}");
        assertThat(pg.dsl().fetchCount(io.mailroom.db.jooq.Tables.AUDIT_LOG, io.mailroom.db.jooq.Tables.AUDIT_LOG.IDEMPOTENCY_KEY.eq(same)))
                .isZero();
        assertThat(mismatches()).isEqualTo(before + 1);
    }

    static double mismatches() {
        var counter = service.metrics().registry().find("mailroom.delivery.event.recipient.mismatch").tag("source", "neutral").counter();
        return counter == null ? 0 : counter.count();
    }

    @Test
    void requestsBeyondTheInFlightBoundAreAnswered429WithRetryAfter() throws Exception {
        // one request holds the only slot: its insert waits on the row lock of an uncommitted delivery
        // with the same id (a slow body no longer can: the slot is taken once the body is read)
        String held = "msg_held_" + IDS.incrementAndGet();
        try (java.sql.Connection lock = pg.newConnection()) {
            lock.setAutoCommit(false);
            org.jooq.impl.DSL.using(lock, org.jooq.SQLDialect.POSTGRES).insertInto(DELIVERY_EVENT)
                    .set(DELIVERY_EVENT.SOURCE, "neutral").set(DELIVERY_EVENT.DELIVERY_ID, held).set(DELIVERY_EVENT.SEQ, 0)
                    .set(DELIVERY_EVENT.RECEIVED_AT, Instant.now()).set(DELIVERY_EVENT.KIND, "delivered")
                    .set(DELIVERY_EVENT.PROVIDER_EVENT, "delivered").set(DELIVERY_EVENT.APPLIED, false).execute();
            byte[] body = "{\"type\":\"delivered\",\"idempotency_key\":\"k\"}".getBytes(StandardCharsets.UTF_8);
            HttpRequest.Builder b = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + service.webhookPort() + "/webhooks/neutral"))
                    .POST(HttpRequest.BodyPublishers.ofByteArray(body));
            WebhookVerifier.headers(NEUTRAL, held, Instant.now().getEpochSecond(), body).forEach(b::header);
            var holder = http.sendAsync(b.build(), HttpResponse.BodyHandlers.ofString());
            await().atMost(Duration.ofSeconds(10)).untilAsserted(() -> {
                HttpResponse<String> busy = signed("neutral", NEUTRAL, "msg_busy_" + IDS.incrementAndGet(),
                        "{\"type\":\"delivered\",\"idempotency_key\":\"k\"}");
                assertThat(busy.statusCode()).isEqualTo(429);
                assertThat(busy.headers().firstValue("Retry-After")).contains("1");
            });
            lock.rollback();
            assertThat(holder.get(10, java.util.concurrent.TimeUnit.SECONDS).statusCode()).isEqualTo(200);
        }
    }
}
