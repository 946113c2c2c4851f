package io.mailroom.support;

import com.fasterxml.jackson.databind.JsonNode;
import io.mailroom.outbox.NewMessage;
import io.mailroom.support.cli.CliDatabase;
import io.mailroom.support.cli.SupportCli;
import io.mailroom.testing.PostgresExtension;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import java.io.PrintWriter;
import java.io.StringWriter;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.List;
import java.util.Map;

import static io.mailroom.db.jooq.Tables.AUDIT_LOG;
import static io.mailroom.db.jooq.Tables.OUTBOX_MESSAGE;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * A scheduled email in support (status, send time, search filter) and its reschedule and cancel,
 * through the service, the JSON API, the console and the CLI, each audited.
 */
class ScheduledEmailSupportTest {

    @RegisterExtension
    static final PostgresExtension pg = new PostgresExtension();

    private static final Actor ALICE = new Actor("alice", Role.SUPPORT);
    private static final Actor VIEWER_ACTOR = new Actor("vic", Role.VIEWER);
    static final String VIEWER = "vic-viewer-token-0123456789";
    static final String SUPPORT = "alice-support-token-0123456789";

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
        service = new SupportService(pg.dataSource());
    }

    /** Order {@code n}'s confirmation, sent at {@code at}. */
    private static void scheduled(long n, Instant at) {
        TestMail.enqueue(pg.dsl(), NewMessage.of(TestMail.CONFIRMATION, "order", Long.toString(n), "email-order-" + n,
                TestMail.payload(n, "ann" + n + "@example.com", "Ann Lee")).withAvailableAt(at));
    }

    private static Instant inAnHour() {
        return Instant.now().plus(Duration.ofHours(1)).truncatedTo(ChronoUnit.SECONDS);
    }

    private EmailView email(String key) {
        return service.email(key).orElseThrow();
    }

    private Instant availableAt(String key) {
        return pg.dsl().fetchSingle(OUTBOX_MESSAGE, OUTBOX_MESSAGE.IDEMPOTENCY_KEY.eq(key)).getAvailableAt();
    }

    @Test
    void aPendingEmailNotTriedWhoseTimeIsAheadIsScheduledWithItsSendTime() {
        Instant at = inAnHour();
        scheduled(1, at);
        TestMail.confirmation(pg.dsl(), 2);
        EmailView e = email("email-order-1");
        assertThat(e.status()).isEqualTo(EmailStatus.SCHEDULED);
        assertThat(e.status().storedStatus()).isEqualTo("pending");
        assertThat(e.sendAt()).isEqualTo(at);
        assertThat(e.arrivalText()).startsWith("Not yet: scheduled for");
        assertThat(e.actions()).containsExactly(EmailView.RESCHEDULE, EmailView.CANCEL);
        assertThat(email("email-order-2").status()).isEqualTo(EmailStatus.PENDING);
        assertThat(email("email-order-2").sendAt()).isNull();
        // a retry waiting for its time after a failed attempt is waiting, not scheduled
        pg.dsl().execute("UPDATE outbox_message SET attempts = 1, available_at = now() + interval '1 hour'"
                + " WHERE idempotency_key = 'email-order-2'");
        assertThat(email("email-order-2").status()).isEqualTo(EmailStatus.PENDING);

        // the search filter tells the two apart; outbox-core stores both as pending
        assertThat(service.search(EmailSearch.parse(Map.of("status", "scheduled")::get, Instant.now())).emails())
                .extracting(EmailView::key).containsExactly("email-order-1");
        assertThat(service.search(EmailSearch.parse(Map.of("status", "pending")::get, Instant.now())).emails())
                .extracting(EmailView::key).containsExactly("email-order-2");
        // and the queue's oldest waiting email is not the scheduled one (queued first) but the retry
        QueueStats stats = service.stats();
        assertThat(stats.counts().get("pending")).isEqualTo(2L);
        assertThat(stats.oldestPendingSince()).isEqualTo(pg.dsl().fetchSingle(OUTBOX_MESSAGE,
                OUTBOX_MESSAGE.IDEMPOTENCY_KEY.eq("email-order-2")).getCreatedAt());
    }

    @Test
    void rescheduleMovesTheSendTimeWithTheEnqueueBoundAndIsAudited() {
        scheduled(3, inAnHour());
        Instant tomorrow = Instant.now().plus(Duration.ofDays(1)).truncatedTo(ChronoUnit.SECONDS);
        ActionResult r = service.reschedule(ALICE, "email-order-3", tomorrow.toString(), "customer asked for tomorrow");
        assertThat(r).isInstanceOfSatisfying(ActionResult.Applied.class, a -> {
            assertThat(a.action()).isEqualTo(AuditActions.RESCHEDULE);
            assertThat(a.email().status()).isEqualTo(EmailStatus.SCHEDULED);
            assertThat(a.email().sendAt()).isEqualTo(tomorrow);
        });
        assertThat(availableAt("email-order-3")).isEqualTo(tomorrow);
        assertThat(pg.dsl().fetchValue("SELECT actor || ' ' || action || ' ' || (detail ->> 'sendAt') || ' ' || reason FROM audit_log"))
                .isEqualTo("alice reschedule " + tomorrow + " customer asked for tomorrow");
        assertThat(email("email-order-3").timeline()).anySatisfy(t -> assertThat(t).isInstanceOfSatisfying(TimelineEntry.Action.class,
                action -> assertThat(action.actionText()).isEqualTo("Rescheduled by alice (support)")));

        // 31 days ahead: refused naming sendAt and the bound, nothing changed
        String tooFar = Instant.now().plus(Duration.ofDays(31)).toString();
        assertThatThrownBy(() -> service.reschedule(ALICE, "email-order-3", tooFar, null))
                .isInstanceOfSatisfying(InvalidParameterException.class, e -> {
                    assertThat(e.parameter()).isEqualTo("sendAt");
                    assertThat(e.getMessage()).contains("at most 30 days ahead");
                });
        assertThatThrownBy(() -> service.reschedule(ALICE, "email-order-3", "tomorrow", null))
                .isInstanceOfSatisfying(InvalidParameterException.class, e -> assertThat(e.parameter()).isEqualTo("sendAt"));
        assertThat(availableAt("email-order-3")).isEqualTo(tomorrow);

        // now (and any time past): the email becomes an ordinary waiting one, due at once
        assertThat(service.reschedule(ALICE, "email-order-3", "now", null)).isInstanceOf(ActionResult.Applied.class);
        assertThat(email("email-order-3").status()).isEqualTo(EmailStatus.PENDING);
        assertThat(availableAt("email-order-3")).isBefore(Instant.now().plusSeconds(1));
        assertThat(service.reschedule(ALICE, "email-order-3", "+2h", null)).isInstanceOf(ActionResult.Applied.class);
        assertThat(availableAt("email-order-3")).isAfter(Instant.now().plus(Duration.ofMinutes(119)));

        assertThatThrownBy(() -> service.reschedule(VIEWER_ACTOR, "email-order-3", "now", null)).isInstanceOf(AccessDeniedException.class);
        assertThat(service.reschedule(ALICE, "email-order-404", "now", null)).isInstanceOf(ActionResult.NotFound.class);
    }

    @Test
    void tooLateOnceSentOrCancelled() {
        TestMail.confirmation(pg.dsl(), 4);
        TestMail.dispatchAll(pg.dataSource(), TestMail.Result.SENT);
        assertThat(service.reschedule(ALICE, "email-order-4", "+1h", null)).isInstanceOfSatisfying(ActionResult.NotAllowed.class, n -> {
            assertThat(n.current()).isEqualTo(EmailStatus.SENT);
            assertThat(n.message()).startsWith("too late to reschedule email-order-4: it is sent");
        });
        scheduled(5, inAnHour());
        assertThat(service.cancel(ALICE, "email-order-5", "order cancelled")).isInstanceOf(ActionResult.Applied.class);
        assertThat(email("email-order-5").status()).isEqualTo(EmailStatus.CANCELLED);
        assertThat(service.reschedule(ALICE, "email-order-5", "+1h", null)).isInstanceOfSatisfying(ActionResult.NotAllowed.class,
                n -> assertThat(n.current()).isEqualTo(EmailStatus.CANCELLED));
        // nothing dispatches it when its time comes
        pg.dsl().execute("UPDATE outbox_message SET available_at = now() WHERE idempotency_key = 'email-order-5'");
        assertThat(TestMail.dispatchAll(pg.dataSource(), TestMail.Result.SENT)).isZero();
        assertThat(pg.dsl().fetchCount(AUDIT_LOG, AUDIT_LOG.ACTION.eq("reschedule"))).isZero();
    }

    @Test
    void theApiReschedulesAndAnswersTooLateAndBadTimesNamingSendAt() {
        Instant at = inAnHour();
        scheduled(6, Instant.now().plus(Duration.ofMinutes(10)));
        HttpResponse<String> ok = http.postJson("/api/emails/email-order-6/reschedule",
                "{\"sendAt\":\"" + at + "\",\"reason\":\"later\"}", Http.bearer(SUPPORT));
        assertThat(ok.statusCode()).as(ok.body()).isEqualTo(200);
        JsonNode email = Http.json(ok).get("email");
        assertThat(email.get("status").asText()).isEqualTo("scheduled");
        assertThat(email.get("sendAt").asText()).isEqualTo(at.toString());

        HttpResponse<String> list = http.get("/api/emails?status=scheduled", Http.bearer(VIEWER));
        assertThat(list.statusCode()).as(list.body()).isEqualTo(200);
        assertThat(Http.json(list).get("emails").get(0).get("key").asText()).isEqualTo("email-order-6");

        HttpResponse<String> far = http.postJson("/api/emails/email-order-6/reschedule",
                "{\"sendAt\":\"" + Instant.now().plus(Duration.ofDays(40)) + "\"}", Http.bearer(SUPPORT));
        assertThat(far.statusCode()).isEqualTo(400);
        assertThat(Http.json(far).get("parameter").asText()).isEqualTo("sendAt");
        assertThat(http.postJson("/api/emails/email-order-6/reschedule", "{\"sendAt\":\"now\"}", Http.bearer(VIEWER)).statusCode())
                .isEqualTo(403);

        assertThat(http.postJson("/api/emails/email-order-6/cancel", null, Http.bearer(SUPPORT)).statusCode()).isEqualTo(200);
        HttpResponse<String> late = http.postJson("/api/emails/email-order-6/reschedule", "{\"sendAt\":\"now\"}", Http.bearer(SUPPORT));
        assertThat(late.statusCode()).isEqualTo(409);
        assertThat(Http.json(late).get("error").asText()).contains("too late");
    }

    @Test
    void theConsoleShowsTheSendTimeAndReschedules() {
        scheduled(7, inAnHour());
        String cookie = "mailroom_session=" + ConsoleLogin.signIn(http, SUPPORT);
        HttpResponse<String> page = http.get("/console/emails/email-order-7", "Cookie", cookie);
        assertThat(page.body()).contains("data-status=\"scheduled\"").contains("Sends at").contains("data-action=\"reschedule\"")
                .contains("name=\"sendAt\"");
        String csrf = Http.hidden(page.body(), "csrf");
        HttpResponse<String> posted = http.postForm("/console/emails/email-order-7/reschedule",
                Map.of("csrf", csrf, "sendAt", "+3h", "reason", "asked by phone"), "Cookie", cookie, "Origin", http.origin());
        assertThat(posted.statusCode()).isEqualTo(303);
        assertThat(availableAt("email-order-7")).isAfter(Instant.now().plus(Duration.ofMinutes(179)));
        assertThat(http.get("/console/emails/email-order-7", "Cookie", cookie).body()).contains("was rescheduled")
                .contains("Rescheduled by alice (support)");
        assertThat(http.get("/console/emails?status=scheduled", "Cookie", cookie).body()).contains("email-order-7");
    }

    @Test
    void theCliListsScheduledEmailsWithTheirTimeAndReschedules() {
        Instant at = inAnHour();
        scheduled(8, at);
        TestMail.confirmation(pg.dsl(), 9);
        String[] list = cli("emails", "--status", "scheduled");
        assertThat(list[0]).as(list[1]).isEqualTo("0");
        assertThat(list[1]).contains("email-order-8").containsPattern("scheduled \\d{4}-\\d\\d-\\d\\d").doesNotContain("email-order-9");
        String[] one = cli("email", "email-order-8");
        assertThat(one[1]).contains("status:      scheduled (Scheduled)").contains("send at:");
        String[] moved = cli("reschedule", "email-order-8", "--at", "+5h", "--reason", "cli");
        assertThat(moved[0]).as(moved[1]).isEqualTo("0");
        assertThat(moved[1]).contains("Rescheduled email-order-8").contains("it goes at");
        assertThat(availableAt("email-order-8")).isAfter(Instant.now().plus(Duration.ofMinutes(299)));
        String[] bad = cli("reschedule", "email-order-8", "--at", Instant.now().plus(Duration.ofDays(45)).toString());
        assertThat(bad[0]).isNotEqualTo("0");
        assertThat(bad[1]).contains("sendAt").contains("30 days");
    }

    /** Exit code and output (stdout then stderr) of one CLI run. */
    private static String[] cli(String... args) {
        StringWriter out = new StringWriter();
        StringWriter err = new StringWriter();
        int code = SupportCli.run(CliDatabase.direct(pg.database().jdbcUrlWithCredentials()), new PrintWriter(out),
                new PrintWriter(err), args);
        return new String[]{Integer.toString(code), out + "\n" + err};
    }

}
