package io.mailroom.support;

import com.fasterxml.jackson.databind.JsonNode;
import io.mailroom.email.api.EmailOutbox;
import io.mailroom.email.api.OutgoingEmail;
import io.mailroom.outbox.OutboxEnqueuer;
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
import java.time.Instant;
import java.util.List;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

/**
 * Bulk actions on a filter (issue 26, item 4): the count is confirmed, the server re-applies the
 * filter, never acts on an email outside it (also when the data changes between the count and the
 * confirmation), never acts on more than confirmed, and never waits on a row a dispatcher holds.
 */
class BulkActionTest {

    @RegisterExtension
    static final PostgresExtension pg = new PostgresExtension();

    static final String VIEWER = "vic-viewer-token-0123456789";
    static final String SUPPORT = "alice-support-token-0123456789";
    static final Actor ALICE = new Actor("alice", Role.SUPPORT);

    private static SupportServer server;
    private static Http http;
    private SupportService service;

    @BeforeAll
    static void start() {
        server = SupportServer.start(pg.dataSource(), SupportConfig.builder().host("127.0.0.1").port(0)
                .tokens("vic:viewer:" + VIEWER + ",alice:support:" + SUPPORT).build());
        http = new Http(server.baseUri());
    }

    @AfterAll
    static void stop() {
        server.stop();
    }

    @BeforeEach
    void clean() {
        TestMail.truncate(pg.dsl());
        pg.dsl().execute("TRUNCATE bulk_action");
        service = new SupportService(pg.dataSource());
    }

    /** {@code n} emails to {@code domain}, keys {@code prefix-0..n-1}, all refused for good by the provider. */
    private static void failed(String prefix, String domain, int n) {
        EmailOutbox outbox = new EmailOutbox(new OutboxEnqueuer(null, false));
        pg.dsl().transaction(cfg -> {
            for (int i = 0; i < n; i++) {
                outbox.enqueue(cfg.dsl(), OutgoingEmail.template("order_confirmation").topic(TestMail.CONFIRMATION)
                        .to("user" + i + "@" + domain, "User " + i).about("order", prefix + i).idempotencyKey(prefix + "-" + i)
                        .build());
            }
        });
        while (TestMail.dispatchAll(pg.dataSource(), TestMail.Result.FAILED) > 0) {
            // one pass claims a batch
        }
    }

    private static EmailSearch search(Map<String, String> params) {
        return EmailSearch.parse(params::get, Instant.now());
    }

    private static long count(String sql) {
        return pg.dsl().fetchSingle(sql).get(0, Long.class);
    }

    private BulkRun finished(long id) {
        await().atMost(Duration.ofSeconds(60)).until(() -> service.bulkRun(id).orElseThrow().finished());
        return service.bulkRun(id).orElseThrow();
    }

    @Test
    void aBulkRetryOf500FailedEmailsAfterAnOutage() {
        failed("outage", "example.com", 500);
        failed("other", "elsewhere.org", 10);
        EmailSearch filter = search(Map.of("status", "failed", "domain", "example.com"));
        BulkActions.Preview preview = service.previewBulk(ALICE, "retry", filter);
        assertThat(preview.matching()).isEqualTo(500);

        BulkRun run = finished(service.startBulk(ALICE, "retry", filter, 500, "provider outage over").id());
        assertThat(run.state()).isEqualTo("done");
        assertThat(run.applied()).isEqualTo(500);
        assertThat(run.skipped() + run.busy()).isZero();
        assertThat(count("SELECT count(*) FROM outbox_effect WHERE idempotency_key LIKE 'outage-%' AND status = 'pending'")).isEqualTo(500);
        assertThat(count("SELECT count(*) FROM outbox_effect WHERE idempotency_key LIKE 'other-%' AND status = 'failed'")).isEqualTo(10);
        // one audit entry per email naming the run, and one for the run
        assertThat(count("SELECT count(*) FROM audit_log WHERE action = 'retry' AND detail ->> 'bulk' = '" + run.id() + "'"))
                .isEqualTo(500);
        assertThat(count("SELECT count(*) FROM audit_log WHERE action = 'bulk_retry'")).isEqualTo(1);
        assertThat(count("SELECT count(*) FROM audit_log WHERE idempotency_key LIKE 'other-%'")).isZero();
    }

    @Test
    void moreMatchingThanConfirmedIsRefusedAndChangesNothing() {
        failed("a", "example.com", 5);
        EmailSearch filter = search(Map.of("status", "failed", "domain", "example.com"));
        assertThat(service.previewBulk(ALICE, "close", filter).matching()).isEqualTo(5);
        failed("late", "example.com", 2); // two more fail between the count and the confirmation
        assertThatThrownBy(() -> service.startBulk(ALICE, "close", filter, 5, "bounced addresses"))
                .isInstanceOf(HttpFailure.class).hasMessageContaining("now matches 7 emails, more than the 5 confirmed");
        assertThat(count("SELECT count(*) FROM outbox_effect WHERE status = 'closed'")).isZero();
        assertThat(count("SELECT count(*) FROM bulk_action")).isZero();
    }

    @Test
    void anEmailThatLeftTheFilterBeforeTheConfirmationIsNotTouched() {
        failed("a", "example.com", 5);
        EmailSearch filter = search(Map.of("status", "failed", "domain", "example.com"));
        assertThat(service.previewBulk(ALICE, "close", filter).matching()).isEqualTo(5);
        // someone retries two of them, which puts them back in the queue: they no longer match
        service.retry(ALICE, "a-0", "customer called");
        service.retry(ALICE, "a-1", "customer called");
        BulkRun run = finished(service.startBulk(ALICE, "close", filter, 5, "addresses are gone").id());
        assertThat(run.matched()).isEqualTo(3);
        assertThat(run.applied()).isEqualTo(3);
        assertThat(count("SELECT count(*) FROM outbox_effect WHERE status = 'closed'")).isEqualTo(3);
        assertThat(count("SELECT count(*) FROM outbox_effect WHERE idempotency_key IN ('a-0', 'a-1') AND status = 'pending'"))
                .isEqualTo(2);
        assertThat(count("SELECT count(*) FROM audit_log WHERE idempotency_key IN ('a-0', 'a-1') AND jsonb_exists(detail, 'bulk')")).isZero();
    }

    @Test
    void theFilterIsCheckedAgainUnderTheRowLock() {
        failed("a", "example.com", 1);
        EmailSearch filter = search(Map.of("status", "failed", "domain", "example.com"));
        SupportQueries probe = new SupportQueries(new SupportTx(pg.dataSource(), Duration.ofSeconds(5)), new SupportStore(),
                null);
        assertThat(pg.dsl().<Boolean>transactionResult(cfg -> probe.matches(cfg.dsl(), filter, "a-0"))).isTrue();
        service.retry(ALICE, "a-0", "customer called");
        assertThat(pg.dsl().<Boolean>transactionResult(cfg -> probe.matches(cfg.dsl(), filter, "a-0"))).isFalse();
        assertThat(pg.dsl().<Boolean>transactionResult(cfg -> probe.matches(cfg.dsl(), filter, "no-such-key"))).isFalse();
    }

    @Test
    void aRowADispatcherHoldsIsLeftBusyAndNothingWaitsForIt() throws Exception {
        failed("a", "example.com", 20);
        EmailSearch filter = search(Map.of("status", "failed", "domain", "example.com"));
        try (Connection dispatcher = pg.dataSource().getConnection()) {
            dispatcher.setAutoCommit(false);
            try (Statement st = dispatcher.createStatement()) {
                st.execute("SELECT 1 FROM outbox_message WHERE idempotency_key = 'a-7' FOR UPDATE");
            }
            BulkRun run = finished(service.startBulk(ALICE, "retry", filter, 20, "outage over").id());
            assertThat(run.applied()).isEqualTo(19);
            assertThat(run.busy()).isEqualTo(1);
            dispatcher.rollback();
        }
        assertThat(count("SELECT count(*) FROM outbox_effect WHERE idempotency_key = 'a-7' AND status = 'failed'")).isEqualTo(1);
    }

    @Test
    void aBulkActionNamesTheStatusItAppliesTo() {
        failed("a", "example.com", 1);
        assertThatThrownBy(() -> service.previewBulk(ALICE, "retry", search(Map.of("domain", "example.com"))))
                .isInstanceOf(InvalidParameterException.class).hasMessageContaining("status failed");
        assertThatThrownBy(() -> service.previewBulk(ALICE, "resend", search(Map.of("status", "failed"))))
                .isInstanceOf(InvalidParameterException.class).hasMessageContaining("status review");
        assertThatThrownBy(() -> service.previewBulk(ALICE, "delete", search(Map.of("status", "failed"))))
                .isInstanceOf(InvalidParameterException.class).hasMessageContaining("action must be one of");
        assertThatThrownBy(() -> service.startBulk(new Actor("vic", Role.VIEWER), "retry", search(Map.of("status", "failed")), 1, "x"))
                .isInstanceOf(AccessDeniedException.class);
    }

    @Test
    void theApiPreviewsStartsAndReports() {
        failed("a", "example.com", 3);
        String filter = "{\"status\": \"failed\", \"domain\": \"example.com\"}";
        HttpResponse<String> preview = http.postJson("/api/bulk/preview", "{\"action\": \"retry\", \"filter\": " + filter + "}",
                Http.bearer(SUPPORT));
        assertThat(preview.statusCode()).as(preview.body()).isEqualTo(200);
        assertThat(Http.json(preview).get("matching").asInt()).isEqualTo(3);
        assertThat(http.postJson("/api/bulk", "{\"action\": \"retry\", \"filter\": " + filter + ", \"confirmed\": 2, \"reason\": \"x\"}",
                Http.bearer(SUPPORT)).statusCode()).isEqualTo(409);
        HttpResponse<String> started = http.postJson("/api/bulk",
                "{\"action\": \"retry\", \"filter\": " + filter + ", \"confirmed\": 3, \"reason\": \"outage over\"}", Http.bearer(SUPPORT));
        assertThat(started.statusCode()).as(started.body()).isEqualTo(202);
        long id = Http.json(started).get("id").asLong();
        await().atMost(Duration.ofSeconds(30)).until(() ->
                Http.json(http.get("/api/bulk/" + id, Http.bearer(VIEWER))).get("state").asText().equals("done"));
        JsonNode run = Http.json(http.get("/api/bulk/" + id, Http.bearer(VIEWER)));
        assertThat(run.get("applied").asInt()).isEqualTo(3);
        assertThat(run.get("filter").get("domain").asText()).isEqualTo("example.com");
        assertThat(http.postJson("/api/bulk/preview", "{\"action\": \"retry\", \"filter\": " + filter + "}", Http.bearer(VIEWER))
                .statusCode()).isEqualTo(403);
        HttpResponse<String> unknown = http.postJson("/api/bulk/preview", "{\"action\": \"retry\", \"filter\": {\"colour\": \"red\"}}",
                Http.bearer(SUPPORT));
        assertThat(unknown.statusCode()).isEqualTo(400);
        assertThat(Http.json(unknown).get("parameter").asText()).isEqualTo("filter.colour");
    }

    @Test
    void theConsoleShowsTheCountAsksForItAndShowsProgress() {
        failed("a", "example.com", 4);
        String cookie = ConsoleLogin.signIn(http, SUPPORT);
        String search = http.get("/console/emails?status=failed&domain=example.com", "Cookie", "mailroom_session=" + cookie).body();
        assertThat(search).contains("id=\"bulk-form\"");
        HttpResponse<String> confirm = http.get("/console/bulk/confirm?action=retry&status=failed&domain=example.com",
                "Cookie", "mailroom_session=" + cookie);
        assertThat(confirm.statusCode()).as(confirm.body()).isEqualTo(200);
        assertThat(confirm.body()).contains("<strong>4</strong>").contains("name=\"confirmed\" value=\"4\"");
        String csrf = Http.hidden(confirm.body(), "csrf");
        HttpResponse<String> started = http.postForm("/console/bulk", Map.of("csrf", csrf, "action", "retry", "confirmed", "4",
                        "status", "failed", "domain", "example.com", "reason", "outage over"),
                "Cookie", "mailroom_session=" + cookie, "Origin", http.origin());
        assertThat(started.statusCode()).as(started.body()).isEqualTo(303);
        String location = started.headers().firstValue("Location").orElseThrow();
        assertThat(location).startsWith("/console/bulk/");
        await().atMost(Duration.ofSeconds(30)).until(() ->
                http.get(location, "Cookie", "mailroom_session=" + cookie).body().contains("data-state=\"done\""));
        assertThat(http.get(location, "Cookie", "mailroom_session=" + cookie).body()).contains("id=\"bulk-applied\">4<");
        assertThat(List.of(count("SELECT count(*) FROM outbox_effect WHERE status = 'pending'"))).containsExactly(4L);
    }

    @Test
    void theCliCountsThenRunsOnTheConfirmedNumber() {
        failed("a", "example.com", 3);
        String[] filter = {"--status", "failed", "--domain", "example.com"};
        java.io.StringWriter out = new java.io.StringWriter();
        int code = io.mailroom.support.cli.SupportCli.run(io.mailroom.support.cli.CliDatabase.direct(
                        pg.database().jdbcUrlWithCredentials()), new java.io.PrintWriter(out), new java.io.PrintWriter(new java.io.StringWriter()),
                concat(new String[]{"bulk", "retry"}, filter));
        assertThat(code).isZero();
        assertThat(out.toString()).contains("3 email(s) match").contains("--confirm 3");
        java.io.StringWriter ran = new java.io.StringWriter();
        java.io.StringWriter err = new java.io.StringWriter();
        code = io.mailroom.support.cli.SupportCli.run(io.mailroom.support.cli.CliDatabase.direct(pg.database().jdbcUrlWithCredentials()),
                new java.io.PrintWriter(ran), new java.io.PrintWriter(err),
                concat(new String[]{"bulk", "retry", "--confirm", "3", "--reason", "outage over"}, filter));
        assertThat(code).as(err.toString()).isZero();
        assertThat(ran.toString()).contains("done: 3 changed");
        assertThat(count("SELECT count(*) FROM outbox_effect WHERE status = 'pending'")).isEqualTo(3);
    }

    private static String[] concat(String[] a, String[] b) {
        String[] out = java.util.Arrays.copyOf(a, a.length + b.length);
        System.arraycopy(b, 0, out, a.length, b.length);
        return out;
    }
}
