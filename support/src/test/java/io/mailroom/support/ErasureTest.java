package io.mailroom.support;

import com.fasterxml.jackson.databind.JsonNode;
import io.mailroom.delivery.Addresses;
import io.mailroom.delivery.BounceType;
import io.mailroom.delivery.DeliveryEvent;
import io.mailroom.delivery.DeliveryEventStore;
import io.mailroom.delivery.DeliveryKind;
import io.mailroom.delivery.suppression.Suppression;
import io.mailroom.delivery.suppression.SuppressionConfig;
import io.mailroom.delivery.suppression.SuppressionList;
import io.mailroom.delivery.suppression.SuppressionPolicy;
import io.mailroom.email.api.EmailOutbox;
import io.mailroom.email.api.OutgoingEmail;
import io.mailroom.outbox.EnqueuedMessage;
import io.mailroom.outbox.OutboxEnqueuer;
import io.mailroom.support.cli.CliDatabase;
import io.mailroom.support.cli.SupportCli;
import io.mailroom.testing.PostgresExtension;
import org.jooq.Record;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import java.io.PrintWriter;
import java.io.StringWriter;
import java.net.http.HttpResponse;
import java.sql.Connection;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A customer's right to erasure (issue 26, item 3): Ann's whole history, made through the real
 * paths (the email API, a dispatcher, a rendering, delivery events with a hard bounce, an audited
 * suppression by hand), is erased by support; afterwards no column of any table of the schema holds
 * her address or her name, in any case; the counts per status and the keys are as before (but her
 * waiting email, cancelled); her suppression still stops the next email; Bo and Cy are untouched.
 */
class ErasureTest {

    @RegisterExtension
    static final PostgresExtension pg = new PostgresExtension();

    static final String VIEWER = "vic-viewer-token-0123456789";
    static final String SUPPORT = "alice-support-token-0123456789";
    static final String ANN = "ann@example.com";

    private static SupportServer server;
    private static Http http;

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

    private static EnqueuedMessage email(String key, String topic, String template, String to, String name, String replyTo,
                                         Map<String, ?> data) {
        EmailOutbox outbox = new EmailOutbox(new OutboxEnqueuer(null, false));
        OutgoingEmail.Builder b = OutgoingEmail.template(template).topic(topic).to(to, name).about("order", key)
                .idempotencyKey(key).data(data);
        if (replyTo != null) {
            b.replyTo(replyTo, "Ann Lee");
        }
        return pg.dsl().transactionResult(cfg -> outbox.enqueue(cfg.dsl(), b.build()));
    }

    private static void deliveryEvent(String deliveryId, DeliveryKind kind, BounceType bounce, String key, String recipient,
                                      String diagnostic, String description) {
        DeliveryEventStore store = new DeliveryEventStore(List.of(new SuppressionList(SuppressionConfig.defaults(), null)), null);
        pg.dsl().transaction(cfg -> store.ingest(cfg.dsl(), "neutral", deliveryId, List.of(new DeliveryEvent(kind, bounce,
                "email." + kind.dbValue(), null, key, recipient, Instant.now(), diagnostic, description))));
    }

    /** Ann's history (three emails finished, one waiting), Bo's email with Ann as reply-to, Cy's email. */
    @BeforeEach
    void history() {
        TestMail.truncate(pg.dsl());
        pg.dsl().execute("TRUNCATE erasure_key");
        pg.dsl().execute("INSERT INTO erasure_key (id, secret) VALUES (1, decode(repeat('ab', 32), 'hex'))");
        EnqueuedMessage order1 = email("email-order-1", TestMail.CONFIRMATION, "order_confirmation", "Ann@Example.com", "Ann Lee",
                null, Map.of("orderId", 1, "note", "gift wrap, call Ann Lee at ann@example.com"));
        email("email-order-1-shipped", TestMail.SHIPPED, "order_shipped", ANN, "Ann Lee", null, Map.of("orderId", 1));
        email("email-user-7-reset", TestMail.CONFIRMATION, "password_reset", "ANN@example.com", "Ann Lee", null, Map.of());
        EnqueuedMessage bo = email("email-order-9", TestMail.CONFIRMATION, "order_confirmation", "bo@example.com", "Bo Berg",
                ANN, Map.of("orderId", 9));
        email("email-order-2", TestMail.CONFIRMATION, "order_confirmation", "cy@elsewhere.org", "Cy Young", null, Map.of());
        TestMail.dispatch(pg.dataSource(), Map.of("email-order-1-shipped", TestMail.Result.FAILED,
                "email-user-7-reset", TestMail.Result.REVIEW));
        TestMail.rendering(pg.dsl(), order1, 1, "order_confirmation", "en", "Your order 1, Ann Lee",
                "Hello Ann Lee, your receipt goes to Ann@Example.com.", "<p>Hello <b>Ann Lee</b></p>");
        TestMail.rendering(pg.dsl(), bo, 1, "order_confirmation", "en", "Your order 9",
                "Hello Bo Berg, questions? Write to Ann Lee <ann@example.com>.", null);
        // waiting: Ann's must never go out; Bo's stays as it is
        email("email-order-3", TestMail.CONFIRMATION, "order_confirmation", ANN, "Ann Lee", null, Map.of("orderId", 3));
        email("email-order-4", TestMail.CONFIRMATION, "order_confirmation", "bo@example.com", "Bo Berg", null, Map.of());

        deliveryEvent("d-1", DeliveryKind.BOUNCED, BounceType.HARD, "email-order-1", "Ann@Example.com",
                "smtp; 550 5.1.1 <ann@example.com>: user unknown", "Ann Lee's mailbox does not exist");
        deliveryEvent("d-2", DeliveryKind.DELIVERED, null, null, ANN, null, "delivered to ann@example.com");
        deliveryEvent("d-3", DeliveryKind.BOUNCED, BounceType.SOFT, null, "ann@EXAMPLE.com", "452 4.2.2 mailbox full", null);
        deliveryEvent("d-4", DeliveryKind.DELIVERED, null, "email-order-2", "cy@elsewhere.org", null, null);
        for (String[] s : new String[][]{{ANN, "Ann Lee asked by phone (ann@example.com)"}, {"bo@example.com", "asked by phone"}}) {
            HttpResponse<String> added = http.postJson("/api/suppressions",
                    "{\"address\":\"" + s[0] + "\",\"reason\":\"" + s[1] + "\"}", Http.bearer(SUPPORT));
            assertThat(added.statusCode()).as(added.body()).isEqualTo(201);
        }
    }

    /** Every row of every table of the schema (partitions included) whose text holds {@code needle}, in any case. */
    private static List<String> rowsHolding(String needle) {
        List<String> found = new ArrayList<>();
        List<String> tables = pg.dsl().fetch("SELECT c.relname FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace"
                + " WHERE n.nspname = 'mailroom' AND c.relkind IN ('r', 'p') ORDER BY 1").getValues(0, String.class);
        assertThat(tables).contains("outbox_message", "outbox_effect_term", "suppression", "email_rendering", "audit_log");
        for (String t : tables) {
            for (Record r : pg.dsl().fetch("SELECT t::text FROM mailroom." + t + " t WHERE t::text ILIKE ?",
                    "%" + needle + "%")) {
                found.add(t + ": " + r.get(0));
            }
        }
        return found;
    }

    private static Map<String, Integer> countsByStatus() {
        Map<String, Integer> out = new TreeMap<>();
        pg.dsl().fetch("SELECT status, count(*)::int FROM outbox_effect GROUP BY status")
                .forEach(r -> out.put(r.get(0, String.class), r.get(1, Integer.class)));
        return out;
    }

    private static List<String> keys() {
        return pg.dsl().fetch("SELECT idempotency_key FROM outbox_effect ORDER BY 1").getValues(0, String.class);
    }

    private static HttpResponse<String> erase(String address, String reason, String token) {
        return http.postJson("/api/erasures", "{\"address\":\"" + address + "\",\"reason\":\"" + reason + "\"}", Http.bearer(token));
    }

    @Test
    void afterTheErasureNoTableHoldsTheAddressOrTheName_countsKeysAndTheSuppressionStay() {
        assertThat(rowsHolding(ANN)).as("the history holds Ann's address before").hasSizeGreaterThan(10);
        Map<String, Integer> before = countsByStatus();
        assertThat(before).containsEntry("done", 3).containsEntry("failed", 1).containsEntry("review", 1).containsEntry("pending", 2);
        List<String> keys = keys();

        HttpResponse<String> r = erase("  ANN@Example.COM ", "Ann Lee asked to be forgotten, mail from ann@example.com", SUPPORT);

        assertThat(r.statusCode()).as(r.body()).isEqualTo(200);
        JsonNode answer = Http.json(r);
        assertThat(answer.get("emails").asInt()).isEqualTo(4);
        assertThat(answer.get("emailsMentioning").asInt()).as("Bo's email names Ann as reply-to").isEqualTo(1);
        assertThat(answer.get("cancelled")).extracting(JsonNode::asText).containsExactly("email-order-3");
        assertThat(answer.get("renderings").asInt()).isEqualTo(2);
        assertThat(answer.get("deliveryEvents").asInt()).isEqualTo(3);
        assertThat(answer.get("suppressions").asInt()).as("the hard bounce and the one by hand").isEqualTo(2);
        assertThat(answer.get("suppressionKeptByHash").asBoolean()).isTrue();
        assertThat(r.body()).doesNotContainIgnoringCase(ANN).doesNotContain("Ann Lee");

        for (String needle : List.of(ANN, "Ann Lee", "ann@example", "ANN@EXAMPLE.COM")) {
            assertThat(rowsHolding(needle)).as("rows holding %s after the erasure", needle).isEmpty();
        }
        Map<String, Integer> after = new TreeMap<>(before);
        after.put("pending", 1);
        after.put("cancelled", 1);
        assertThat(countsByStatus()).isEqualTo(after);
        assertThat(keys()).isEqualTo(keys);

        // the suppression stays in force, as the dispatcher's check sees it (EmailHandler: active, then blocking)
        SuppressionList list = new SuppressionList(SuppressionConfig.defaults(), null);
        String again = Addresses.normalize("Ann@Example.com");
        List<Suppression> active = pg.dsl().transactionResult(cfg -> list.active(cfg.dsl(), List.of(again))).get(again);
        assertThat(active).extracting(s -> s.reason().dbValue()).containsExactlyInAnyOrder("hard_bounce", "manual");
        assertThat(SuppressionList.blocking(active, SuppressionPolicy.STRICT)).isPresent();
        assertThat(active).allSatisfy(s -> assertThat(s.address()).endsWith("@erased.invalid"));

        // her waiting email is never sent: the next pass sends Bo's only
        assertThat(TestMail.dispatchAll(pg.dataSource(), TestMail.Result.SENT)).isEqualTo(1);
        assertThat(pg.dsl().fetchValue("SELECT status FROM outbox_effect WHERE idempotency_key = 'email-order-3'")).isEqualTo("cancelled");
        assertThat(pg.dsl().fetchValue("SELECT count(*)::int FROM outbox_attempt WHERE idempotency_key = 'email-order-3'")).isEqualTo(0);

        // a search by her address finds nothing; her emails show the recipient as erased, Bo's and Cy's as they were
        JsonNode none = Http.json(http.get("/api/emails?recipient=ann%40example.com", Http.bearer(VIEWER)));
        assertThat(none.get("emails")).isEmpty();
        JsonNode domain = Http.json(http.get("/api/emails?domain=example.com", Http.bearer(VIEWER)));
        assertThat(domain.get("emails")).extracting(e -> e.get("key").asText()).containsExactlyInAnyOrder("email-order-9", "email-order-4");
        JsonNode hers = Http.json(http.get("/api/emails/email-order-1", Http.bearer(VIEWER)));
        assertThat(hers.get("recipient").asText()).isEqualTo("erased");
        assertThat(hers.get("recipientName").isNull()).isTrue();
        assertThat(hers.get("actions")).extracting(JsonNode::asText).doesNotContain(EmailView.RESEND, EmailView.RETRY);
        assertThat(hers.get("status").asText()).isEqualTo("sent");
        JsonNode bo = Http.json(http.get("/api/emails/email-order-9", Http.bearer(VIEWER)));
        assertThat(bo.get("recipient").asText()).isEqualTo("bo@example.com");
        assertThat(bo.get("recipientName").asText()).isEqualTo("Bo Berg");
        assertThat(pg.dsl().fetchValue("SELECT payload->'to'->>'name' FROM outbox_message WHERE idempotency_key = 'email-order-2'"))
                .isEqualTo("Cy Young");
        assertThat(rowsHolding("cy@elsewhere.org")).hasSizeGreaterThan(3);
        assertThat(pg.dsl().fetchValue("SELECT count(*)::int FROM suppression WHERE address = 'bo@example.com' AND lifted_at IS NULL"))
                .isEqualTo(1);
        HttpResponse<String> retry = http.postJson("/api/emails/email-order-1-shipped/retry", "{}", Http.bearer(SUPPORT));
        assertThat(retry.statusCode()).as(retry.body()).isEqualTo(409);
        assertThat(retry.body()).contains("erased");

        // audited: one entry for the erasure (with the keyed hash, never the address), one per email, the cancel
        List<String> actions = pg.dsl().fetch("SELECT action || ':' || coalesce(idempotency_key, '-') FROM audit_log"
                + " WHERE action IN ('erasure', 'erase', 'cancel') ORDER BY 1").getValues(0, String.class);
        assertThat(actions).containsExactly("cancel:email-order-3", "erase:email-order-1", "erase:email-order-1-shipped",
                "erase:email-order-3", "erase:email-order-9", "erase:email-user-7-reset", "erasure:-");
        String detail = String.valueOf(pg.dsl().fetchValue("SELECT detail::text FROM audit_log WHERE action = 'erasure'"));
        assertThat(detail).contains("\"addressHash\": \"" + list.hash(pg.dsl(), ANN) + "\"");
        assertThat(pg.dsl().fetchValue("SELECT reason FROM audit_log WHERE action = 'erasure'"))
                .isEqualTo("(erased) asked to be forgotten, mail from " + answer.get("marker").asText());
    }

    @Test
    void theAttachmentsOfHerEmailsAreRemoved_theirNamesWithThem() {
        EmailOutbox outbox = new EmailOutbox(new OutboxEnqueuer(null, false));
        pg.dsl().transaction(cfg -> outbox.enqueue(cfg.dsl(), OutgoingEmail.template("order_confirmation")
                .topic(TestMail.CONFIRMATION).to(ANN, "Ann Lee").about("order", "5").idempotencyKey("email-order-5-invoice")
                .attach("Invoice for Ann Lee.pdf", "application/pdf", "%PDF-1.4 Ann".getBytes(java.nio.charset.StandardCharsets.US_ASCII))
                .build()));
        assertThat(pg.dsl().fetchValue("SELECT count(*)::int FROM email_attachment_ref WHERE idempotency_key = 'email-order-5-invoice'"))
                .isEqualTo(1);

        HttpResponse<String> r = erase(ANN, "asked", SUPPORT);

        assertThat(r.statusCode()).as(r.body()).isEqualTo(200);
        assertThat(pg.dsl().fetchValue("SELECT count(*)::int FROM email_attachment_ref")).isEqualTo(0);
        assertThat(rowsHolding("Ann Lee")).isEmpty();
        assertThat(String.valueOf(pg.dsl().fetchValue("SELECT detail::text FROM audit_log WHERE action = 'erasure'")))
                .contains("\"attachments\": 1");
    }

    @Test
    void onlySupportMayErase_andABadAddressOrNoReasonIsA400NamingIt() {
        HttpResponse<String> viewer = erase(ANN, "asked", VIEWER);
        assertThat(viewer.statusCode()).isEqualTo(403);
        HttpResponse<String> bad = erase("not-an-address", "asked", SUPPORT);
        assertThat(bad.statusCode()).isEqualTo(400);
        assertThat(Http.json(bad).get("parameter").asText()).isEqualTo("address");
        HttpResponse<String> missing = http.postJson("/api/erasures", "{\"reason\":\"asked\"}", Http.bearer(SUPPORT));
        assertThat(Http.json(missing).get("parameter").asText()).isEqualTo("address");
        HttpResponse<String> noReason = erase(ANN, " ", SUPPORT);
        assertThat(noReason.statusCode()).isEqualTo(400);
        assertThat(Http.json(noReason).get("parameter").asText()).isEqualTo("reason");
        assertThat(rowsHolding(ANN)).as("nothing was erased").isNotEmpty();
        assertThat(pg.dsl().fetchCount(pg.dsl().selectFrom("audit_log").where("action = 'erasure'"))).isZero();
    }

    @Test
    void anAddressNothingHoldsAnswersZeroCounts_andIsStillAudited() {
        HttpResponse<String> r = erase("nobody@example.org", "asked by letter", SUPPORT);

        assertThat(r.statusCode()).as(r.body()).isEqualTo(200);
        JsonNode answer = Http.json(r);
        assertThat(answer.get("emails").asInt()).isZero();
        assertThat(answer.get("keys")).isEmpty();
        assertThat(answer.get("suppressionKeptByHash").asBoolean()).isFalse();
        assertThat(pg.dsl().fetchCount(pg.dsl().selectFrom("audit_log").where("action = 'erasure'"))).isEqualTo(1);
        assertThat(rowsHolding(ANN)).as("Ann's history is untouched").isNotEmpty();
    }

    @Test
    void anEmailToTheAddressThatADispatcherHoldsRefusesTheErasure_withNothingChanged() throws Exception {
        try (Connection c = TestMail.lockQueueRow(pg.newConnection(), "email-order-3")) {
            HttpResponse<String> r = erase(ANN, "asked", SUPPORT);
            assertThat(r.statusCode()).as(r.body()).isEqualTo(409);
            assertThat(Http.json(r).get("code").asText()).isEqualTo("busy");
            c.rollback();
        }
        assertThat(pg.dsl().fetchValue("SELECT status FROM outbox_effect WHERE idempotency_key = 'email-order-3'")).isEqualTo("pending");
        assertThat(rowsHolding(ANN)).isNotEmpty();
        pg.dsl().execute("UPDATE outbox_message SET status = 'running', lease_until = now() + interval '1 minute'"
                + " WHERE idempotency_key = 'email-order-3'");
        HttpResponse<String> running = erase(ANN, "asked", SUPPORT);
        assertThat(running.statusCode()).as(running.body()).isEqualTo(409);
        assertThat(running.body()).contains("email-order-3").contains("being sent");
    }

    @Test
    void theCliAndTheConsoleErase() {
        StringWriter out = new StringWriter();
        StringWriter err = new StringWriter();
        int code = SupportCli.run(CliDatabase.direct(pg.database().jdbcUrlWithCredentials()), new PrintWriter(out),
                new PrintWriter(err), "erase", "--address", "Ann@Example.com", "--reason", "ticket 4411");
        assertThat(code).as(err.toString()).isZero();
        assertThat(out.toString()).contains("Erased: 4 email(s)").contains("email-order-3").doesNotContainIgnoringCase(ANN);
        assertThat(rowsHolding(ANN)).isEmpty();

        int bad = SupportCli.run(CliDatabase.direct(pg.database().jdbcUrlWithCredentials()), new PrintWriter(new StringWriter()),
                new PrintWriter(err), "erase", "--address", "nope", "--reason", "x");
        assertThat(bad).isEqualTo(2);

        String cookie = ConsoleLogin.signIn(http, SUPPORT);
        HttpResponse<String> form = http.get("/console/erase", "Cookie", "mailroom_session=" + cookie);
        assertThat(form.statusCode()).isEqualTo(200);
        assertThat(form.body()).contains("name=\"confirm\"").contains("cannot be undone");
        String csrf = Http.hidden(form.body(), "csrf");
        HttpResponse<String> unconfirmed = http.postForm("/console/erase", Map.of("csrf", csrf, "address", "bo@example.com",
                "reason", "asked"), "Cookie", "mailroom_session=" + cookie, "Origin", http.origin());
        assertThat(unconfirmed.statusCode()).isEqualTo(400);
        assertThat(rowsHolding("bo@example.com")).isNotEmpty();
        HttpResponse<String> done = http.postForm("/console/erase", Map.of("csrf", csrf, "address", "bo@example.com",
                "reason", "asked", "confirm", "erase"), "Cookie", "mailroom_session=" + cookie, "Origin", http.origin());
        assertThat(done.statusCode()).as(done.body()).isEqualTo(303);
        assertThat(http.get("/console/erase", "Cookie", "mailroom_session=" + cookie).body()).contains("Erased: 2 email(s)");
        assertThat(rowsHolding("bo@example.com")).isEmpty();
        String viewerCookie = ConsoleLogin.signIn(http, VIEWER);
        assertThat(http.get("/console/erase", "Cookie", "mailroom_session=" + viewerCookie).statusCode()).isEqualTo(403);
    }
}
