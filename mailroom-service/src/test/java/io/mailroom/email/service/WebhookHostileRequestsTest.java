package io.mailroom.email.service;

import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.read.ListAppender;
import io.mailroom.delivery.DeliveryEventStore;
import io.mailroom.delivery.webhook.NeutralEventAdapter;
import io.mailroom.delivery.webhook.ResendEventAdapter;
import io.mailroom.delivery.webhook.WebhookSecrets;
import io.mailroom.delivery.webhook.WebhookVerifier;
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
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;

import static io.mailroom.db.jooq.Tables.DELIVERY_EVENT;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * The webhook server alone (no dispatcher) against requests from the internet that are not what a
 * provider sends: numbers past any clock, headers and bodies past their limits, data PostgreSQL
 * cannot store. Each gets its own answer and one log line, and nothing is stored.
 */
class WebhookHostileRequestsTest {

    @RegisterExtension
    static final PostgresExtension pg = new PostgresExtension();

    static final String NEUTRAL_SECRET = "whsec_" + java.util.Base64.getEncoder().encodeToString("neutral-secret-0123456789".getBytes());
    static final String RESEND_SECRET = "whsec_" + java.util.Base64.getEncoder().encodeToString("resend-secret-0123456789!".getBytes());
    static final WebhookSecrets NEUTRAL = WebhookSecrets.of("t", List.of(NEUTRAL_SECRET));
    static final WebhookSecrets RESEND = WebhookSecrets.of("t", List.of(RESEND_SECRET));
    static final int MAX_BODY = 64 * 1024;
    static final String DSN_TOKEN = "dsn-token-0123456789abcdefghij";
    private static final AtomicInteger IDS = new AtomicInteger();

    static WebhookServer server;
    static final HttpClient http = HttpClient.newHttpClient();

    @BeforeAll
    static void start() {
        WebhookConfig config = new WebhookConfig("127.0.0.1", 0, Map.of("neutral", NEUTRAL, "resend", RESEND), DSN_TOKEN, MAX_BODY, 8);
        server = WebhookServer.start(pg.dataSource(), config, new DeliveryEventStore(List.of(), null),
                List.of(new NeutralEventAdapter(), new ResendEventAdapter()), new WebhookVerifier(null));
    }

    @AfterAll
    static void stop() {
        if (server != null) {
            server.close();
        }
    }

    static HttpResponse<String> post(String source, byte[] body, Map<String, String> headers) throws Exception {
        HttpRequest.Builder b = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + server.port() + "/webhooks/" + source))
                .POST(HttpRequest.BodyPublishers.ofByteArray(body)).header("Content-Type", "application/json");
        headers.forEach(b::header);
        return http.send(b.build(), HttpResponse.BodyHandlers.ofString());
    }

    static HttpResponse<String> signed(String source, WebhookSecrets secrets, String json) throws Exception {
        byte[] body = json.getBytes(StandardCharsets.UTF_8);
        return post(source, body, WebhookVerifier.headers(secrets, "msg_h_" + IDS.incrementAndGet(), Instant.now().getEpochSecond(), body));
    }

    /** Runs {@code action} and returns every log event of the service's loggers meanwhile. */
    static List<ILoggingEvent> logsOf(ThrowingRunnable action) throws Exception {
        ch.qos.logback.classic.Logger root = (ch.qos.logback.classic.Logger) org.slf4j.LoggerFactory.getLogger(org.slf4j.Logger.ROOT_LOGGER_NAME);
        ListAppender<ILoggingEvent> logs = new ListAppender<>();
        logs.start();
        root.addAppender(logs);
        try {
            action.run();
        } finally {
            root.detachAppender(logs);
        }
        return List.copyOf(logs.list);
    }

    interface ThrowingRunnable {
        void run() throws Exception;
    }

    @Test
    void aTimestampPastAnyClockIs401WithOneLogLine_notA500WithAStackTrace() throws Exception {
        byte[] body = "{\"type\":\"delivered\",\"idempotency_key\":\"k\"}".getBytes(StandardCharsets.UTF_8);
        for (String ts : List.of("100000000000000000", "99999999999999999999999", "-100000000000000000", "1e10")) {
            Map<String, String> h = new HashMap<>(WebhookVerifier.headers(NEUTRAL, "msg_ts_" + IDS.incrementAndGet(), 0, body));
            h.put("webhook-timestamp", ts);
            HttpResponse<String>[] answer = new HttpResponse[1];
            List<ILoggingEvent> logs = logsOf(() -> answer[0] = post("neutral", body, h));
            assertThat(answer[0].statusCode()).as(ts + ": " + answer[0].body()).isEqualTo(401);
            assertThat(answer[0].body()).contains("webhook-timestamp");
            assertThat(logs).as(ts).hasSize(1);
            assertThat(logs.getFirst().getThrowableProxy()).as(ts).isNull();
        }
        assertThat(pg.dsl().fetchCount(DELIVERY_EVENT)).isZero();
    }

    @Test
    void aSignatureHeaderOf1900EntriesIsRefusedWithoutComputingThem() throws Exception {
        byte[] body = "{\"type\":\"delivered\",\"idempotency_key\":\"k\"}".getBytes(StandardCharsets.UTF_8);
        Map<String, String> h = new HashMap<>(WebhookVerifier.headers(NEUTRAL, "msg_many_" + IDS.incrementAndGet(),
                Instant.now().getEpochSecond(), body));
        h.put("webhook-signature", String.join(" ", java.util.Collections.nCopies(1900, "v1,")));
        HttpResponse<String> r = post("neutral", body, h);
        assertThat(r.statusCode()).as(r.body()).isEqualTo(400);
        assertThat(r.body()).contains("webhook-signature").contains(String.valueOf(WebhookVerifier.MAX_SIGNATURE_HEADER_LENGTH));
    }

    @Test
    void aDeclaredBodyOverTheLimitIs413BeforeAByteOfItIsSent_andAChunkedOneStopsAtTheLimit() throws Exception {
        try (java.net.Socket s = new java.net.Socket("127.0.0.1", server.port())) {
            s.setSoTimeout(5000);
            s.getOutputStream().write(("POST /webhooks/neutral HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
                    + "Content-Length: 100000000\r\n\r\n").getBytes(StandardCharsets.US_ASCII));
            s.getOutputStream().flush();
            // no body follows: the answer must not wait for it
            assertThat(new String(s.getInputStream().readNBytes(12), StandardCharsets.US_ASCII)).isEqualTo("HTTP/1.1 413");
        }
        try (java.net.Socket s = new java.net.Socket("127.0.0.1", server.port())) {
            s.setSoTimeout(5000);
            java.io.OutputStream out = s.getOutputStream();
            out.write(("POST /webhooks/neutral HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
                    + "Transfer-Encoding: chunked\r\n\r\n").getBytes(StandardCharsets.US_ASCII));
            String chunk = "x".repeat(1024);
            for (int i = 0; i <= MAX_BODY / 1024; i++) {
                out.write((Integer.toHexString(chunk.length()) + "\r\n" + chunk + "\r\n").getBytes(StandardCharsets.US_ASCII));
            }
            out.flush();
            // the body has not ended (no last chunk): the answer comes at the limit
            assertThat(new String(s.getInputStream().readNBytes(12), StandardCharsets.US_ASCII)).isEqualTo("HTTP/1.1 413");
        }
    }

    @Test
    void aRequestWithBothHeaderSetsWhereOnlySvixVerifiesIsAccepted() throws Exception {
        byte[] body = "{\"type\":\"email.delivered\",\"data\":{\"email_id\":\"nobody\"}}".getBytes(StandardCharsets.UTF_8);
        long now = Instant.now().getEpochSecond();
        String id = "msg_both_" + IDS.incrementAndGet();
        Map<String, String> h = new HashMap<>();
        h.put("svix-id", id);
        h.put("svix-timestamp", Long.toString(now));
        h.put("svix-signature", WebhookVerifier.sign(RESEND, id, now, body));
        h.put("webhook-id", id);
        h.put("webhook-timestamp", Long.toString(now));
        h.put("webhook-signature", WebhookVerifier.sign(NEUTRAL, id, now, body)); // another source's secret
        HttpResponse<String> r = post("resend", body, h);
        assertThat(r.statusCode()).as(r.body()).isEqualTo(200);
    }

    @Test
    void aWebhookIdOverItsLimitAndAResendEventOver100AddressesAre400NamingTheLimit() throws Exception {
        byte[] body = "{\"type\":\"delivered\",\"idempotency_key\":\"k\"}".getBytes(StandardCharsets.UTF_8);
        String longId = "msg_" + "x".repeat(DeliveryEventStore.MAX_DELIVERY_ID);
        HttpResponse<String> id = post("neutral", body, WebhookVerifier.headers(NEUTRAL, longId, Instant.now().getEpochSecond(), body));
        assertThat(id.statusCode()).as(id.body()).isEqualTo(400);
        assertThat(id.body()).contains("webhook-id").contains(String.valueOf(DeliveryEventStore.MAX_DELIVERY_ID));

        String to = String.join(",", java.util.stream.IntStream.range(0, 1001).mapToObj(i -> "\"r" + i + "@example.com\"").toList());
        HttpResponse<String> many = signed("resend", RESEND, "{\"type\":\"email.bounced\",\"data\":{\"email_id\":\"e\","
                + "\"bounce\":{\"type\":\"Permanent\"},\"to\":[" + to + "]}}");
        assertThat(many.statusCode()).as(many.body()).isEqualTo(400);
        assertThat(many.body()).contains("data.to").contains("at most 100");
        assertThat(pg.dsl().fetchCount(DELIVERY_EVENT, DELIVERY_EVENT.SOURCE.eq("resend").and(DELIVERY_EVENT.PROVIDER_EVENT.eq("email.bounced"))))
                .isZero();
    }

    @Test
    void aNulInAnyStringOrATimeOutOfRangeIs400NamingTheField_neverDatabaseUnavailable() throws Exception {
        Map<String, String> cases = new java.util.LinkedHashMap<>();
        cases.put("neutral", "{\"type\":\"bounced\",\"bounce_type\":\"hard\",\"recipient\":\"a@example.com\",\"diagnostic_code\":\"550\\u0000x\"}");
        cases.put("neutral ", "{\"type\":\"delivered\",\"occurred_at\":\"+300000-01-01T00:00:00Z\"}");
        cases.put("resend", "{\"type\":\"email.delivered\",\"data\":{\"email_id\":\"e\",\"to\":[\"a@example.com\",\"b\\u0000@example.com\"]}}");
        cases.put("resend ", "{\"type\":\"email.delivered\",\"data\":{\"email_id\":\"e\",\"tags\":{\"idempotency_key\":\"k\\u0000\"}}}");
        Map<String, String> fields = Map.of("neutral", "diagnostic_code", "neutral ", "occurred_at", "resend", "data.to[1]",
                "resend ", "data.tags.idempotency_key");
        for (var c : cases.entrySet()) {
            HttpResponse<String>[] answer = new HttpResponse[1];
            List<ILoggingEvent> logs = logsOf(() -> answer[0] = signed(c.getKey().strip(), c.getKey().startsWith("resend") ? RESEND : NEUTRAL,
                    c.getValue()));
            assertThat(answer[0].statusCode()).as(c.getValue() + ": " + answer[0].body()).isEqualTo(400);
            assertThat(answer[0].body()).contains(fields.get(c.getKey()));
            assertThat(answer[0].headers().firstValue("Retry-After")).isEmpty();
            assertThat(logs).extracting(ILoggingEvent::getFormattedMessage).noneMatch(m -> m.contains("database unavailable"));
        }
        assertThat(pg.dsl().fetchCount(DELIVERY_EVENT)).isZero();
    }

    @Test
    void aDsnPostedWithANulIs400NamingItsField() throws Exception {
        String dsn = "MIME-Version: 1.0\r\nMessage-ID: <nul@mx.example>\r\n"
                + "Content-Type: multipart/report; report-type=delivery-status; boundary=b\r\n\r\n"
                + "--b\r\nContent-Type: message/delivery-status\r\n\r\nReporting-MTA: dns; mx.example\r\n\r\n"
                + "Final-Recipient: rfc822; gone@example.com\r\nAction: failed\r\nStatus: 5.1.1\r\n"
                + "Diagnostic-Code: smtp; 550 \u0000 no such user\r\n\r\n--b--\r\n";
        HttpResponse<String> r = post("dsn", dsn.getBytes(StandardCharsets.UTF_8), Map.of("Authorization", "Bearer " + DSN_TOKEN));
        assertThat(r.statusCode()).as(r.body()).isEqualTo(400);
        assertThat(r.body()).contains("Diagnostic-Code").contains("U+0000");
        assertThat(pg.dsl().fetchCount(DELIVERY_EVENT)).isZero();
    }

    @Test
    void aDataExceptionThatSlipsPastTheChecksIs400InvalidData_not503() throws Exception {
        // a listener whose SQL the server refuses as a data exception (22008), in the ingesting transaction
        io.mailroom.delivery.DeliveryEventListener refusing = (tx, stored) -> tx.execute("SELECT '300000-01-01'::timestamptz");
        WebhookConfig config = new WebhookConfig("127.0.0.1", 0, Map.of("neutral", NEUTRAL), null, MAX_BODY, 8);
        try (WebhookServer strict = WebhookServer.start(pg.dataSource(), config, new DeliveryEventStore(List.of(refusing), null),
                List.of(new NeutralEventAdapter()), new WebhookVerifier(null))) {
            byte[] body = "{\"type\":\"delivered\",\"idempotency_key\":\"k\"}".getBytes(StandardCharsets.UTF_8);
            HttpRequest.Builder b = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + strict.port() + "/webhooks/neutral"))
                    .POST(HttpRequest.BodyPublishers.ofByteArray(body));
            WebhookVerifier.headers(NEUTRAL, "msg_slip_" + IDS.incrementAndGet(), Instant.now().getEpochSecond(), body).forEach(b::header);
            HttpResponse<String>[] answer = new HttpResponse[1];
            List<ILoggingEvent> logs = logsOf(() -> answer[0] = http.send(b.build(), HttpResponse.BodyHandlers.ofString()));
            assertThat(answer[0].statusCode()).as(answer[0].body()).isEqualTo(400);
            assertThat(answer[0].body()).contains("invalid data").contains("22008");
            assertThat(logs).extracting(ILoggingEvent::getFormattedMessage).noneMatch(m -> m.contains("database unavailable"));
        }
        assertThat(pg.dsl().fetchCount(DELIVERY_EVENT)).isZero();
    }

    @Test
    void slowBodiesNeitherTakeTheSlotsNorBlockAValidWebhook_andAreClosedAtTheReadDeadline() throws Exception {
        Duration deadline = Duration.ofSeconds(2);
        WebhookConfig config = new WebhookConfig("127.0.0.1", 0, Map.of("neutral", NEUTRAL), null, MAX_BODY, 8, deadline);
        List<java.net.Socket> slow = new java.util.ArrayList<>();
        java.util.concurrent.ScheduledExecutorService trickle = java.util.concurrent.Executors.newSingleThreadScheduledExecutor();
        try (WebhookServer guarded = WebhookServer.start(pg.dataSource(), config, new DeliveryEventStore(List.of(), null),
                List.of(new NeutralEventAdapter()), new WebhookVerifier(null))) {
            // more slow senders than the slots (8) and than the listener's threads (8 + 8)
            for (int i = 0; i < 24; i++) {
                java.net.Socket s = new java.net.Socket("127.0.0.1", guarded.port());
                s.getOutputStream().write(("POST /webhooks/neutral HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
                        + "Content-Length: 1000\r\n\r\n{").getBytes(StandardCharsets.US_ASCII));
                s.getOutputStream().flush();
                slow.add(s);
            }
            long started = System.nanoTime();
            // a byte every 200 ms on each: never idle, never done
            trickle.scheduleAtFixedRate(() -> slow.forEach(s -> {
                try {
                    s.getOutputStream().write(' ');
                    s.getOutputStream().flush();
                } catch (java.io.IOException closed) {
                    // the server closed it: what this test waits for
                }
            }), 200, 200, java.util.concurrent.TimeUnit.MILLISECONDS);

            byte[] body = "{\"type\":\"delivered\",\"idempotency_key\":\"k\"}".getBytes(StandardCharsets.UTF_8);
            HttpRequest.Builder b = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + guarded.port() + "/webhooks/neutral"))
                    .POST(HttpRequest.BodyPublishers.ofByteArray(body)).timeout(Duration.ofSeconds(10));
            WebhookVerifier.headers(NEUTRAL, "msg_loris_" + IDS.incrementAndGet(), Instant.now().getEpochSecond(), body).forEach(b::header);
            HttpResponse<String> valid = http.send(b.build(), HttpResponse.BodyHandlers.ofString());
            assertThat(valid.statusCode()).as(valid.body()).isEqualTo(200);
            assertThat(Duration.ofNanos(System.nanoTime() - started)).as("answered while the slow bodies trickle").isLessThan(deadline);

            // every slow connection is answered or closed by the deadline (plus scheduling slack), not held
            for (java.net.Socket s : slow) {
                s.setSoTimeout((int) deadline.multipliedBy(3).toMillis());
                byte[] got = s.getInputStream().readAllBytes(); // returns at the server's close
                String head = new String(got, StandardCharsets.US_ASCII);
                assertThat(head.isEmpty() || head.startsWith("HTTP/1.1 408")).as(head).isTrue();
            }
            assertThat(Duration.ofNanos(System.nanoTime() - started)).isLessThan(deadline.multipliedBy(3));
        } finally {
            trickle.shutdownNow();
            for (java.net.Socket s : slow) {
                s.close();
            }
        }
    }

    @Test
    void aRefusedDsnGivesItsSlotBack() throws Exception {
        WebhookConfig one = new WebhookConfig("127.0.0.1", 0, Map.of("neutral", NEUTRAL), DSN_TOKEN, MAX_BODY, 1);
        try (WebhookServer single = WebhookServer.start(pg.dataSource(), one, new DeliveryEventStore(List.of(), null),
                List.of(new NeutralEventAdapter()), new WebhookVerifier(null))) {
            for (int i = 0; i < 3; i++) {
                HttpRequest bad = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + single.port() + "/webhooks/dsn"))
                        .POST(HttpRequest.BodyPublishers.ofString("not a report")).header("Authorization", "Bearer " + DSN_TOKEN).build();
                assertThat(http.send(bad, HttpResponse.BodyHandlers.ofString()).statusCode()).isEqualTo(400);
            }
        }
    }

    @Test
    void theReadTimeoutIsReadFromTheEnvironment_andABadOneIsRefusedNamingTheSetting() {
        Map<String, String> env = new HashMap<>(Map.of("MAILROOM_WEBHOOKS", "on", "MAILROOM_WEBHOOK_SECRETS", "neutral:" + NEUTRAL_SECRET));
        assertThat(WebhookConfig.fromEnv(env).readTimeout()).isEqualTo(WebhookConfig.DEFAULT_READ_TIMEOUT);
        env.put("MAILROOM_WEBHOOKS_READ_TIMEOUT", "3s");
        assertThat(WebhookConfig.fromEnv(env).readTimeout()).isEqualTo(Duration.ofSeconds(3));
        for (String bad : List.of("0s", "5m")) {
            env.put("MAILROOM_WEBHOOKS_READ_TIMEOUT", bad);
            org.assertj.core.api.Assertions.assertThatThrownBy(() -> WebhookConfig.fromEnv(env))
                    .isInstanceOf(io.mailroom.outbox.InvalidSettingException.class).hasMessageContaining("MAILROOM_WEBHOOKS_READ_TIMEOUT");
        }
    }
}
