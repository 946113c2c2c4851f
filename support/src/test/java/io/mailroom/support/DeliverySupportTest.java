package io.mailroom.support;

import com.fasterxml.jackson.databind.JsonNode;
import io.mailroom.delivery.BounceType;
import io.mailroom.delivery.DeliveryEvent;
import io.mailroom.delivery.DeliveryEventStore;
import io.mailroom.delivery.DeliveryKind;
import io.mailroom.delivery.suppression.SuppressionConfig;
import io.mailroom.delivery.suppression.SuppressionList;
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
import java.time.Instant;
import java.util.List;
import java.util.Map;

import static io.mailroom.db.jooq.Tables.AUDIT_LOG;
import static io.mailroom.support.TestMail.Result.SENT;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * What providers reported, as support sees it through the API and the CLI: the timeline's delivery
 * rows, "did it arrive?" in words, the bounced, complained and orphan lists, and the suppression
 * list with its roles, reasons, audit and refusals.
 */
class DeliverySupportTest {

    @RegisterExtension
    static final PostgresExtension pg = new PostgresExtension();

    static final String VIEWER = "vic-viewer-token-0123456789";
    static final String SUPPORT = "alice-support-token-0123456789";
    static final String OPERATOR = "olga-operator-token-0123456789";

    private static SupportServer server;
    private static Http http;
    private final DeliveryEventStore events = new DeliveryEventStore(
            List.of(new SuppressionList(SuppressionConfig.defaults(), null)), null);

    @BeforeAll
    static void start() {
        server = SupportServer.start(pg.dataSource(), SupportConfig.builder().host("127.0.0.1").port(0)
                .tokens("vic:viewer:" + VIEWER + ",alice:support:" + SUPPORT + ",olga:operator:" + OPERATOR).build(), List::of);
        http = new Http(server.baseUri());
    }

    @AfterAll
    static void stop() {
        server.stop();
    }

    @BeforeEach
    void sent() {
        TestMail.truncate(pg.dsl());
        TestMail.confirmation(pg.dsl(), 102);
        TestMail.confirmation(pg.dsl(), 103);
        TestMail.dispatch(pg.dataSource(), Map.of("email-order-102", SENT, "email-order-103", SENT));
    }

    private void report(String deliveryId, DeliveryKind kind, BounceType bounce, String key, String recipient, String diagnostic) {
        pg.dsl().transaction(c -> events.ingest(c.dsl(), "resend", deliveryId, List.of(new DeliveryEvent(kind, bounce,
                "email." + kind.dbValue(), null, key, recipient, Instant.parse("2026-12-04T10:05:00Z"), diagnostic, null))));
    }

    private static JsonNode get(String path, String token) {
        HttpResponse<String> r = http.get(path, Http.bearer(token));
        assertThat(r.statusCode()).as(path + ": " + r.body()).isEqualTo(200);
        return Http.json(r);
    }

    @Test
    void theTimelineAndTheOrderSayWhetherEachEmailArrived() {
        report("wh-1", DeliveryKind.BOUNCED, BounceType.HARD, "email-order-102", "customer102@example.com",
                "smtp; 550 5.1.1 user unknown");
        report("wh-2", DeliveryKind.DELIVERED, null, "email-order-102", "customer102@example.com", null);

        JsonNode email = get("/api/emails/email-order-102", VIEWER);
        assertThat(email.get("arrivalText").asText()).isEqualTo("No: bounced (hard): smtp; 550 5.1.1 user unknown");
        assertThat(email.get("delivery").get("state").asText()).isEqualTo("bounced");
        List<JsonNode> rows = new java.util.ArrayList<>();
        email.get("timeline").forEach(t -> {
            if (t.get("type").asText().equals("delivery")) {
                rows.add(t);
            }
        });
        assertThat(rows).extracting(t -> t.get("deliveryText").asText())
                .containsExactly("Bounced (hard)", "Delivered (reported late; the email's state stays as it was)");
        assertThat(rows.getFirst().get("diagnosticCode").asText()).isEqualTo("smtp; 550 5.1.1 user unknown");

        JsonNode order = get("/api/orders/103/emails", VIEWER);
        assertThat(order.get("emails").get(0).get("arrivalText").asText()).isEqualTo("Accepted by the provider; no delivery report yet");
    }

    @Test
    void bouncedAndComplainedListsAndOrphansForOperators() {
        report("wh-3", DeliveryKind.BOUNCED, BounceType.SOFT, "email-order-102", "customer102@example.com", "452 full");
        report("wh-4", DeliveryKind.COMPLAINED, null, "email-order-103", "customer103@example.com", null);
        report("wh-5", DeliveryKind.BOUNCED, BounceType.HARD, "no-such-email", "stranger@example.com", "550 gone");

        assertThat(get("/api/delivery?delivery=bounced", VIEWER).get("emails")).extracting(e -> e.get("key").asText())
                .containsExactly("email-order-102");
        assertThat(get("/api/delivery?delivery=complained", VIEWER).get("emails")).extracting(e -> e.get("key").asText())
                .containsExactly("email-order-103");
        HttpResponse<String> bad = http.get("/api/delivery?delivery=opened", Http.bearer(VIEWER));
        assertThat(bad.statusCode()).isEqualTo(400);
        assertThat(bad.body()).contains("delivery");
        assertThat(http.get("/api/delivery/orphans", Http.bearer(SUPPORT)).statusCode()).isEqualTo(403);
        assertThat(get("/api/delivery/orphans", OPERATOR)).singleElement()
                .satisfies(o -> assertThat(o.get("recipient").asText()).isEqualTo("stranger@example.com"));
    }

    @Test
    void supportAddsAndLiftsSuppressionsWithAReason_auditedInTheSameTransaction() {
        HttpResponse<String> byViewer = http.postJson("/api/suppressions", "{\"address\":\"ann@example.com\",\"reason\":\"x\"}", Http.bearer(VIEWER));
        assertThat(byViewer.statusCode()).isEqualTo(403);

        HttpResponse<String> added = http.postJson("/api/suppressions",
                "{\"address\":\"Ann@Example.com\",\"reason\":\"asked by phone\"}", Http.bearer(SUPPORT));
        assertThat(added.statusCode()).as(added.body()).isEqualTo(201);
        assertThat(Http.json(added).get("address").asText()).isEqualTo("ann@example.com");
        assertThat(http.postJson("/api/suppressions", "{\"address\":\"ann@example.com\",\"reason\":\"again\"}",
                Http.bearer(SUPPORT)).statusCode()).isEqualTo(409);
        HttpResponse<String> noAddress = http.postJson("/api/suppressions", "{\"address\":\"nope\",\"reason\":\"x\"}", Http.bearer(SUPPORT));
        assertThat(noAddress.statusCode()).isEqualTo(400);
        assertThat(Http.json(noAddress).get("parameter").asText()).isEqualTo("address");
        HttpResponse<String> noReason = http.postJson("/api/suppressions", "{\"address\":\"bo@example.com\"}", Http.bearer(SUPPORT));
        assertThat(noReason.statusCode()).isEqualTo(400);
        assertThat(Http.json(noReason).get("parameter").asText()).isEqualTo("reason");

        assertThat(get("/api/suppressions", VIEWER)).extracting(s -> s.get("address").asText()).containsExactly("ann@example.com");

        HttpResponse<String> lifted = http.postJson("/api/suppressions/lift",
                "{\"address\":\"ann@example.com\",\"reason\":\"mailbox fixed\"}", Http.bearer(SUPPORT));
        assertThat(lifted.statusCode()).as(lifted.body()).isEqualTo(200);
        assertThat(http.postJson("/api/suppressions/lift", "{\"address\":\"ann@example.com\",\"reason\":\"again\"}",
                Http.bearer(SUPPORT)).statusCode()).isEqualTo(409);
        assertThat(get("/api/suppressions", VIEWER)).isEmpty();
        assertThat(get("/api/suppressions?lifted=true", VIEWER)).singleElement()
                .satisfies(s -> assertThat(s.get("liftReason").asText()).isEqualTo("mailbox fixed"));
        assertThat(pg.dsl().select(AUDIT_LOG.ACTION, AUDIT_LOG.ACTOR, AUDIT_LOG.REASON).from(AUDIT_LOG).orderBy(AUDIT_LOG.ID)
                .fetch(r -> r.value1() + " " + r.value2() + " " + r.value3()))
                .containsExactly("suppression_add alice asked by phone", "suppression_lift alice mailbox fixed");
    }

    private record Run(int code, String out, String err) {
    }

    private static Run cli(String... args) {
        StringWriter out = new StringWriter();
        StringWriter err = new StringWriter();
        int code = SupportCli.run(io.mailroom.support.cli.CliDatabase.direct(pg.database().jdbcUrlWithCredentials()),
                new PrintWriter(out), new PrintWriter(err), args);
        return new Run(code, out.toString(), err.toString());
    }

    @Test
    void theCliListsBouncesAndShowsTheEventsInTheHistory_andManagesSuppressions() {
        report("wh-6", DeliveryKind.BOUNCED, BounceType.HARD, "email-order-102", "customer102@example.com", "smtp; 550 5.1.1 nobody");

        Run bounced = cli("delivery", "bounced");
        assertThat(bounced.code()).as(bounced.err()).isZero();
        assertThat(bounced.out()).contains("email-order-102").contains("Bounced (hard)");
        Run email = cli("email", "email-order-102");
        assertThat(email.out()).contains("arrived?     No: bounced (hard): smtp; 550 5.1.1 nobody")
                .contains("Bounced (hard) [resend email.bounced] - smtp; 550 5.1.1 nobody");

        Run list = cli("suppressions");
        assertThat(list.out()).contains("customer102@example.com").contains("hard bounce");
        Run add = cli("--actor", "alice", "suppressions", "add", "cy@example.com", "--reason", "asked");
        assertThat(add.code()).as(add.err()).isZero();
        assertThat(cli("--actor", "alice", "suppressions", "add", "cy@example.com", "--reason", "again").code()).isEqualTo(5);
        Run lift = cli("--actor", "alice", "suppressions", "lift", "customer102@example.com", "--reason", "fixed");
        assertThat(lift.code()).as(lift.err()).isZero();
        assertThat(lift.out()).contains("Lifted 1 suppression(s) of customer102@example.com (hard bounce)");
        Run noReason = cli("--actor", "alice", "suppressions", "lift", "cy@example.com");
        assertThat(noReason.code()).isEqualTo(2);
        assertThat(noReason.err()).contains("reason");
    }
}
