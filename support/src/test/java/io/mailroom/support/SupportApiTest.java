package io.mailroom.support;

import com.fasterxml.jackson.databind.JsonNode;
import io.mailroom.testing.PostgresExtension;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

import java.net.http.HttpResponse;
import java.sql.Connection;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;

import static io.mailroom.db.jooq.Tables.AUDIT_LOG;
import static io.mailroom.support.TestMail.Result.FAILED;
import static io.mailroom.support.TestMail.Result.REVIEW;
import static io.mailroom.support.TestMail.Result.SENT;
import static org.assertj.core.api.Assertions.assertThat;

/** The JSON API over HTTP: every endpoint, every role, every malformed parameter, busy rows. */
class SupportApiTest {

    @RegisterExtension
    static final PostgresExtension pg = new PostgresExtension();

    static final String VIEWER = "vic-viewer-token-0123456789";
    static final String SUPPORT = "alice-support-token-0123456789";
    static final String OPERATOR = "olga-operator-token-0123456789";

    private static SupportServer server;
    private static Http http;

    @BeforeAll
    static void start() {
        SupportConfig config = SupportConfig.builder().host("127.0.0.1").port(0)
                .tokens("vic:viewer:" + VIEWER + ",alice:support:" + SUPPORT + ",olga:operator:" + OPERATOR).build();
        server = SupportServer.start(pg.dataSource(), config,
                () -> List.of(new TransportStatus.TransportState("http", "closed")));
        http = new Http(server.baseUri());
    }

    @AfterAll
    static void stop() {
        server.stop();
    }

    @BeforeEach
    void clean() {
        TestMail.truncate(pg.dsl());
    }

    private static HttpResponse<String> get(String path, String token) {
        return http.get(path, Http.bearer(token));
    }

    private static HttpResponse<String> post(String path, String json, String token) {
        return http.postJson(path, json, Http.bearer(token));
    }

    @Test
    void readEndpointsAnswerWithEmailsTimelinesStatsAndControl() {
        TestMail.confirmation(pg.dsl(), 102);
        TestMail.shipped(pg.dsl(), 102);
        TestMail.dispatch(pg.dataSource(), Map.of("email-order-102-shipped", FAILED));

        HttpResponse<String> order = get("/api/orders/102/emails", VIEWER);
        assertThat(order.statusCode()).isEqualTo(200);
        assertThat(order.headers().firstValue("Content-Type").orElse("")).startsWith("application/json");
        JsonNode o = Http.json(order);
        assertThat(o.get("about").get("type").asText()).isEqualTo("order");
        assertThat(o.get("about").get("id").asText()).isEqualTo("102");
        assertThat(o.get("about").get("label").asText()).isEqualTo("Order 102");
        assertThat(o.get("emails")).hasSize(2);
        JsonNode sent = o.get("emails").get(0);
        assertThat(sent.get("key").asText()).isEqualTo("email-order-102");
        assertThat(sent.get("status").asText()).isEqualTo("sent");
        assertThat(sent.get("statusText").asText()).isEqualTo("Sent");
        assertThat(sent.get("recipient").asText()).isEqualTo("ann102@example.com");
        assertThat(sent.get("attempts").asInt()).isEqualTo(1);
        assertThat(sent.get("maxAttempts").asInt()).isEqualTo(10);
        assertThat(sent.get("providerMessageId").asText()).isEqualTo("prov-email-order-102-1");
        assertThat(sent.get("sentAt").asText()).matches("\\d{4}-\\d\\d-\\d\\dT.*Z");
        assertThat(sent.get("createdAt").asText()).endsWith("Z");
        JsonNode attempt = sent.get("timeline").get(0);
        assertThat(attempt.get("type").asText()).isEqualTo("attempt");
        assertThat(attempt.get("outcome").asText()).isEqualTo("done");
        assertThat(attempt.get("providerStatus").asText()).isEqualTo("202");
        assertThat(o.get("emails").get(1).get("lastError").asText()).contains("550");

        JsonNode failed = Http.json(get("/api/emails?status=failed&since=1h&limit=10", VIEWER));
        assertThat(failed.get("status").asText()).isEqualTo("failed");
        assertThat(failed.get("emails")).singleElement().satisfies(e -> {
            assertThat(e.get("key").asText()).isEqualTo("email-order-102-shipped");
            assertThat(e.has("timeline")).isFalse();
        });
        assertThat(failed.get("nextCursor").isNull()).isTrue();

        JsonNode one = Http.json(get("/api/emails/email-order-102", VIEWER));
        assertThat(one.get("key").asText()).isEqualTo("email-order-102");
        assertThat(one.get("timeline")).hasSize(1);

        JsonNode stats = Http.json(get("/api/stats", VIEWER));
        assertThat(stats.get("counts").get("failed").asLong()).isEqualTo(1);
        assertThat(stats.get("lastHour").get("sent").asLong()).isEqualTo(1);
        assertThat(stats.get("perMinute")).hasSize(60);
        assertThat(stats.get("transports").get(0).get("breaker").asText()).isEqualTo("closed");

        JsonNode control = Http.json(get("/api/control", VIEWER));
        assertThat(control.get("switches")).isEmpty();

        JsonNode me = Http.json(get("/api/me", SUPPORT));
        assertThat(me.get("name").asText()).isEqualTo("alice");
        assertThat(me.get("role").asText()).isEqualTo("support");
    }

    @Test
    void actionEndpointsChangeTheEmailAndWriteTheAuditLog() {
        TestMail.confirmation(pg.dsl(), 1);
        TestMail.confirmation(pg.dsl(), 2);
        TestMail.confirmation(pg.dsl(), 3);
        TestMail.dispatch(pg.dataSource(), Map.of("email-order-1", FAILED, "email-order-3", REVIEW));

        HttpResponse<String> retry = post("/api/emails/email-order-1/retry", "{\"reason\":\"mailbox fixed\"}", SUPPORT);
        assertThat(retry.statusCode()).isEqualTo(200);
        JsonNode r = Http.json(retry);
        assertThat(r.get("action").asText()).isEqualTo("retry");
        assertThat(r.get("key").asText()).isEqualTo("email-order-1");
        assertThat(r.get("email").get("status").asText()).isEqualTo("pending");
        assertThat(TestMail.dispatchAll(pg.dataSource(), SENT)).isEqualTo(1);
        JsonNode afterRetry = Http.json(get("/api/emails/email-order-1", VIEWER));
        assertThat(afterRetry.get("status").asText()).isEqualTo("sent");
        assertThat(afterRetry.get("attempts").asInt()).isEqualTo(2);
        assertThat(afterRetry.get("timeline")).extracting(t -> t.get("type").asText() + ":" + (t.has("outcome") ? t.get("outcome").asText() : t.get("action").asText()))
                .containsExactly("attempt:failed", "action:retry", "attempt:done");

        HttpResponse<String> resend = post("/api/emails/email-order-2/resend", "{\"reason\":\"customer asked\"}", SUPPORT);
        assertThat(resend.statusCode()).isEqualTo(200);
        assertThat(Http.json(resend).get("newKey").asText()).isEqualTo("email-order-2-resend-1");
        assertThat(TestMail.dispatchAll(pg.dataSource(), SENT)).isEqualTo(1);
        assertThat(Http.json(get("/api/orders/2/emails", VIEWER)).get("emails")).extracting(e -> e.get("key").asText() + ":" + e.get("status").asText())
                .containsExactly("email-order-2:sent", "email-order-2-resend-1:sent");

        HttpResponse<String> confirm = post("/api/emails/email-order-3/confirm-sent", "{\"providerMessageId\":\"abc-123\"}", OPERATOR);
        assertThat(confirm.statusCode()).isEqualTo(200);
        assertThat(Http.json(confirm).get("email").get("status").asText()).isEqualTo("sent");

        TestMail.confirmation(pg.dsl(), 4);
        HttpResponse<String> cancel = post("/api/emails/email-order-4/cancel", null, SUPPORT);
        assertThat(cancel.statusCode()).isEqualTo(200);
        assertThat(Http.json(cancel).get("email").get("status").asText()).isEqualTo("cancelled");

        assertThat(pg.dsl().select(AUDIT_LOG.ACTION, AUDIT_LOG.ACTOR, AUDIT_LOG.ROLE, AUDIT_LOG.IDEMPOTENCY_KEY).from(AUDIT_LOG)
                .orderBy(AUDIT_LOG.ID).fetch(x -> x.value1() + " " + x.value2() + " " + x.value3() + " " + x.value4()))
                .containsExactly("retry alice support email-order-1", "resend alice support email-order-2",
                        "confirm_sent olga operator email-order-3", "cancel alice support email-order-4");
    }

    @Test
    void closeEndsAFailedEmailAsWontSendWithItsReasonAndItsListKnowsIt() {
        TestMail.confirmation(pg.dsl(), 41);
        TestMail.dispatchAll(pg.dataSource(), FAILED);
        JsonNode failed = Http.json(get("/api/emails/email-order-41", VIEWER));
        assertThat(failed.get("mainAction").asText()).isEqualTo("close");
        assertThat(failed.get("actions")).extracting(JsonNode::asText).containsExactly("close", "retry");

        HttpResponse<String> close = post("/api/emails/email-order-41/close", "{\"reason\":\"renderer refuses the name\"}", SUPPORT);
        assertThat(close.statusCode()).as(close.body()).isEqualTo(200);
        JsonNode r = Http.json(close);
        assertThat(r.get("action").asText()).isEqualTo("close");
        assertThat(r.get("email").get("status").asText()).isEqualTo("closed");
        assertThat(r.get("email").get("actions")).isEmpty();
        assertThat(r.get("email").get("timeline").get(1).get("actionText").asText()).isEqualTo("Closed (won't send) by alice (support)");
        assertThat(Http.json(get("/api/emails?status=closed", VIEWER)).get("emails")).extracting(e -> e.get("key").asText())
                .containsExactly("email-order-41");
        assertThat(Http.json(get("/api/emails?status=failed", VIEWER)).get("emails")).isEmpty();
        assertThat(Http.json(get("/api/stats", VIEWER)).get("counts").get("failed").asLong()).isZero();

        HttpResponse<String> again = post("/api/emails/email-order-41/close", "{\"reason\":\"twice\"}", SUPPORT);
        assertThat(again.statusCode()).isEqualTo(409);
        assertThat(Http.json(again).get("code").asText()).isEqualTo("not_allowed");
        assertThat(Http.json(again).get("status").asText()).isEqualTo("closed");
        assertThat(post("/api/emails/email-order-404/close", "{\"reason\":\"x\"}", SUPPORT).statusCode()).isEqualTo(404);
        assertThat(pg.dsl().fetchCount(AUDIT_LOG)).isEqualTo(1);
    }

    @Test
    void aSentEmailShowsNoEarlierErrorAndTheServersReplyWithItsQueueId() {
        TestMail.confirmation(pg.dsl(), 42);
        TestMail.dispatchAll(pg.dataSource(), TestMail.Result.RETRY);
        TestMail.makeDue(pg.dsl());
        TestMail.dispatchAll(pg.dataSource(), TestMail.Result.SENT_WITHOUT_RECORD);
        JsonNode e = Http.json(get("/api/emails/email-order-42", VIEWER));
        assertThat(e.get("status").asText()).isEqualTo("sent");
        assertThat(e.get("lastError").isNull()).isTrue();
        assertThat(e.get("providerReply").asText()).isEqualTo("250 2.0.0 Ok: queued as Q2X42");
        assertThat(e.get("timeline").get(0).get("error").asText()).isEqualTo("HTTP 503: provider busy");
        assertThat(e.get("timeline").get(1).get("providerReply").asText()).isEqualTo("250 2.0.0 Ok: queued as Q2X42");
    }

    @Test
    void pauseAndResumeNeedAnOperator() {
        HttpResponse<String> pause = post("/api/control/pause", "{\"reason\":\"provider incident\"}", OPERATOR);
        assertThat(pause.statusCode()).isEqualTo(200);
        assertThat(Http.json(pause).get("switches").get(0).get("paused").asBoolean()).isTrue();
        assertThat(Http.json(get("/api/stats", VIEWER)).get("paused").get(0).asText()).isEqualTo("*");
        HttpResponse<String> resume = post("/api/control/resume", "{\"scope\":\"*\"}", OPERATOR);
        assertThat(resume.statusCode()).isEqualTo(200);
        assertThat(Http.json(resume).get("switches").get(0).get("paused").asBoolean()).isFalse();
        assertThat(post("/api/control/pause", null, SUPPORT).statusCode()).isEqualTo(403);
        assertThat(post("/api/control/resume", null, VIEWER).statusCode()).isEqualTo(403);
        assertThat(pg.dsl().fetchCount(AUDIT_LOG)).isEqualTo(2);
    }

    static Stream<Arguments> everyRoute() {
        return Stream.of(
                Arguments.of("GET", "/api/orders/102/emails", Role.VIEWER),
                Arguments.of("GET", "/api/emails?status=failed", Role.VIEWER),
                Arguments.of("GET", "/api/emails/email-order-102", Role.VIEWER),
                Arguments.of("GET", "/api/stats", Role.VIEWER),
                Arguments.of("GET", "/api/control", Role.VIEWER),
                Arguments.of("GET", "/api/dispatchers", Role.VIEWER),
                Arguments.of("GET", "/api/me", Role.VIEWER),
                Arguments.of("POST", "/api/emails/email-order-102/retry", Role.SUPPORT),
                Arguments.of("POST", "/api/emails/email-order-102/resend", Role.SUPPORT),
                Arguments.of("POST", "/api/emails/email-order-102/confirm-sent", Role.SUPPORT),
                Arguments.of("POST", "/api/emails/email-order-102/cancel", Role.SUPPORT),
                Arguments.of("POST", "/api/emails/email-order-102/close", Role.SUPPORT),
                Arguments.of("POST", "/api/control/pause", Role.OPERATOR),
                Arguments.of("POST", "/api/control/resume", Role.OPERATOR));
    }

    private static HttpResponse<String> call(String method, String path, String... headers) {
        return method.equals("GET") ? http.get(path, headers) : http.postJson(path, null, headers);
    }

    @ParameterizedTest(name = "{0} {1} needs {2}")
    @MethodSource("everyRoute")
    void everyRouteAnswers401WithoutAValidTokenAnd403ForTooSmallARole(String method, String path, Role needed) {
        for (String[] headers : List.of(new String[0], Http.bearer("not-a-valid-token-at-all"),
                new String[]{"Authorization", "Basic dmljOnNlY3JldA=="}, new String[]{"Authorization", "Bearer"})) {
            HttpResponse<String> r = call(method, path, headers);
            assertThat(r.statusCode()).as("%s %s with %s", method, path, List.of(headers)).isEqualTo(401);
            assertThat(r.headers().firstValue("WWW-Authenticate").orElse("")).startsWith("Bearer");
            assertThat(Http.json(r).get("code").asText()).isEqualTo("unauthorized");
        }
        Map<Role, String> tokens = Map.of(Role.VIEWER, VIEWER, Role.SUPPORT, SUPPORT, Role.OPERATOR, OPERATOR);
        for (Role role : Role.values()) {
            int status = call(method, path, Http.bearer(tokens.get(role))).statusCode();
            if (role.includes(needed)) {
                assertThat(status).as("%s as %s", path, role).isNotIn(401, 403);
            } else {
                assertThat(status).as("%s as %s", path, role).isEqualTo(403);
            }
        }
        assertThat(pg.dsl().fetchCount(AUDIT_LOG, AUDIT_LOG.ACTOR.eq("vic"))).isZero();
    }

    static Stream<Arguments> malformed() {
        String longKey = "k".repeat(201);
        return Stream.of(
                Arguments.of("GET", "/api/orders/abc/emails", null, "orderId"),
                Arguments.of("GET", "/api/orders/-1/emails", null, "orderId"),
                Arguments.of("GET", "/api/orders/0/emails", null, "orderId"),
                Arguments.of("GET", "/api/orders/99999999999999999999/emails", null, "orderId"),
                Arguments.of("GET", "/api/orders/%3Cscript%3Ealert(1)/emails", null, "orderId"),
                Arguments.of("GET", "/api/orders/102%27%20OR%201=1--/emails", null, "orderId"),
                Arguments.of("GET", "/api/emails?recipient=ann", null, "recipient"),
                Arguments.of("GET", "/api/emails?domain=-x-.com", null, "domain"),
                Arguments.of("GET", "/api/emails?about=order", null, "about"),
                Arguments.of("GET", "/api/emails?delivery=read", null, "delivery"),
                Arguments.of("GET", "/api/emails?recipient=ann@example.com&status=lost", null, "status"),
                Arguments.of("GET", "/api/emails?status=bogus", null, "status"),
                Arguments.of("GET", "/api/emails?status=sending", null, "status"),
                Arguments.of("GET", "/api/emails?status=failed&since=yesterday", null, "since"),
                Arguments.of("GET", "/api/emails?status=failed&since=2025-13-01T00:00:00Z", null, "since"),
                Arguments.of("GET", "/api/emails?status=failed&until=%3Cb%3E", null, "until"),
                Arguments.of("GET", "/api/emails?status=failed&since=2025-01-02T00:00:00Z&until=2025-01-01T00:00:00Z", null, "since"),
                Arguments.of("GET", "/api/emails?status=failed&since=0h", null, "since"),
                // past what a timestamptz column holds (SQLSTATE 22008 if it reached the query)
                Arguments.of("GET", "/api/emails?status=failed&since=%2B300000-01-01T00:00:00Z", null, "since"),
                Arguments.of("GET", "/api/emails?status=failed&until=-200000-01-01T00:00:00Z", null, "until"),
                Arguments.of("GET", "/api/emails?status=failed&cursor=" + java.util.Base64.getUrlEncoder().withoutPadding()
                        .encodeToString("+300000-01-01T00:00:00Z|email-order-1".getBytes(java.nio.charset.StandardCharsets.UTF_8)),
                        null, "cursor"),
                Arguments.of("GET", "/api/emails?status=pending&olderThan=forever", null, "olderThan"),
                Arguments.of("GET", "/api/emails?status=pending&olderThan=-PT1H", null, "olderThan"),
                Arguments.of("GET", "/api/emails?status=failed&limit=0", null, "limit"),
                Arguments.of("GET", "/api/emails?status=failed&limit=201", null, "limit"),
                Arguments.of("GET", "/api/emails?status=failed&limit=ten", null, "limit"),
                Arguments.of("GET", "/api/emails?status=failed&cursor=not-a-cursor!!", null, "cursor"),
                Arguments.of("GET", "/api/emails?status=failed&cursor=aGVsbG8", null, "cursor"),
                Arguments.of("GET", "/api/emails/email-order-1%27%20OR%201=1", null, "key"),
                Arguments.of("GET", "/api/emails/%3Cimg%20src=x%3E", null, "key"),
                Arguments.of("GET", "/api/emails/" + longKey, null, "key"),
                Arguments.of("POST", "/api/emails/email-order-1/resend", "{}", "reason"),
                Arguments.of("POST", "/api/emails/email-order-1/resend", "{\"reason\":5}", "reason"),
                Arguments.of("POST", "/api/emails/email-order-1/resend", "{\"reason\":\"" + "x".repeat(501) + "\"}", "reason"),
                Arguments.of("POST", "/api/emails/email-order-1/close", "{}", "reason"),
                Arguments.of("POST", "/api/emails/email-order-1/close", "{\"reason\":\"  \"}", "reason"),
                Arguments.of("POST", "/api/emails/email-order-1/retry", "not json", "body"),
                Arguments.of("POST", "/api/emails/email-order-1/retry", "[1,2]", "body"),
                Arguments.of("POST", "/api/emails/email-order-1/retry", "{\"reason\":\"x\",\"evil\":\"y\"}", "evil"),
                Arguments.of("POST", "/api/emails/email-order-1/retry", "{\"reason\":\"a\\u0000b\"}", "reason"),
                Arguments.of("POST", "/api/emails/%3Cscript%3E/cancel", null, "key"),
                Arguments.of("POST", "/api/emails/email-order-1/confirm-sent", "{\"providerMessageId\":\"a\\nb\"}", "providerMessageId"),
                Arguments.of("POST", "/api/control/pause", "{\"scope\":\"../etc/passwd\"}", "scope"),
                Arguments.of("POST", "/api/control/pause", "{\"reason\":\"" + "r".repeat(501) + "\"}", "reason"));
    }

    @ParameterizedTest(name = "{0} {1} → 400 naming {3}")
    @MethodSource("malformed")
    void malformedInputAnswers400NamingTheParameter(String method, String path, String body, String parameter) {
        HttpResponse<String> r = method.equals("GET") ? get(path, OPERATOR) : post(path, body, OPERATOR);
        assertThat(r.statusCode()).as(r.body()).isEqualTo(400);
        JsonNode error = Http.json(r);
        assertThat(error.get("code").asText()).isEqualTo("bad_request");
        assertThat(error.get("parameter").asText()).isEqualTo(parameter);
        assertThat(error.get("error").asText()).contains(parameter);
        assertThat(r.body()).doesNotContain("<script").doesNotContain("<img");
        assertThat(pg.dsl().fetchCount(AUDIT_LOG)).isZero();
    }

    @Test
    void aRowADispatcherHoldsAnswers409BusyAtOnceAndNothingChanges() throws Exception {
        TestMail.confirmation(pg.dsl(), 21);
        TestMail.dispatchAll(pg.dataSource(), FAILED);
        try (Connection worker = TestMail.lockQueueRow(pg.newConnection(), "email-order-21")) {
            long started = System.nanoTime();
            HttpResponse<String> r = post("/api/emails/email-order-21/retry", null, SUPPORT);
            assertThat(Duration.ofNanos(System.nanoTime() - started)).isLessThan(Duration.ofSeconds(3));
            assertThat(r.statusCode()).isEqualTo(409);
            assertThat(r.headers().firstValue("Retry-After")).contains("1");
            assertThat(Http.json(r).get("code").asText()).isEqualTo("busy");
            worker.rollback();
        }
        assertThat(pg.dsl().fetchCount(AUDIT_LOG)).isZero();
        assertThat(Http.json(get("/api/emails/email-order-21", VIEWER)).get("status").asText()).isEqualTo("failed");
        assertThat(post("/api/emails/email-order-21/retry", null, SUPPORT).statusCode()).isEqualTo(200);
    }

    @Test
    void actionsThatDoNotFitAnswer409NotAllowedAndUnknownKeys404() {
        TestMail.confirmation(pg.dsl(), 31);
        TestMail.dispatchAll(pg.dataSource(), SENT);
        HttpResponse<String> cancel = post("/api/emails/email-order-31/cancel", null, SUPPORT);
        assertThat(cancel.statusCode()).isEqualTo(409);
        JsonNode e = Http.json(cancel);
        assertThat(e.get("code").asText()).isEqualTo("not_allowed");
        assertThat(e.get("status").asText()).isEqualTo("sent");
        assertThat(e.get("error").asText()).contains("only a waiting email can be cancelled");
        assertThat(post("/api/emails/email-order-404/retry", null, SUPPORT).statusCode()).isEqualTo(404);
        HttpResponse<String> missing = get("/api/emails/email-order-404", VIEWER);
        assertThat(missing.statusCode()).isEqualTo(404);
        assertThat(Http.json(missing).get("parameter").asText()).isEqualTo("key");
        assertThat(get("/api/nothing-here", VIEWER).statusCode()).isEqualTo(404);
        assertThat(Http.json(get("/api/orders/404/emails", VIEWER)).get("emails")).isEmpty();
    }

    @Test
    void answersCarrySecurityHeadersAndANonJsonBodyIsRefused() {
        HttpResponse<String> r = get("/api/stats", VIEWER);
        assertThat(r.headers().firstValue("Content-Security-Policy").orElse("")).contains("default-src 'none'");
        assertThat(r.headers().firstValue("X-Content-Type-Options")).contains("nosniff");
        assertThat(r.headers().firstValue("Cache-Control")).contains("no-store");
        assertThat(r.headers().firstValue("Server")).isEmpty();
        HttpResponse<String> form = http.postForm("/api/emails/email-order-1/retry", Map.of("reason", "x"), Http.bearer(SUPPORT));
        assertThat(form.statusCode()).isEqualTo(415);
    }

    @Test
    void demoModeLetsRequestsWithoutCredentialsInAsTheDemoOperatorButStillChecksGivenTokens() {
        SupportConfig demo = SupportConfig.builder().host("127.0.0.1").port(0).demo(true).build();
        try (SupportServer s = SupportServer.start(pg.dataSource(), demo)) {
            Http h = new Http(s.baseUri());
            JsonNode me = Http.json(h.get("/api/me"));
            assertThat(me.get("name").asText()).isEqualTo("demo");
            assertThat(me.get("role").asText()).isEqualTo("operator");
            assertThat(h.get("/api/me", Http.bearer("wrong-token-0123456789")).statusCode()).isEqualTo(401);
        }
    }
}
