package io.mailroom.support;

import com.fasterxml.jackson.databind.JsonNode;
import io.mailroom.delivery.BounceType;
import io.mailroom.delivery.DeliveryEvent;
import io.mailroom.delivery.DeliveryEventStore;
import io.mailroom.delivery.DeliveryKind;
import io.mailroom.email.api.EmailOutbox;
import io.mailroom.email.api.OutgoingEmail;
import io.mailroom.outbox.OutboxEnqueuer;
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
import java.time.Instant;
import java.util.List;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Support with several recipients and tags: the detail lists every recipient (To, Cc, Bcc) with its
 * own delivery state and the tags, and a search by tag finds the email through the service, the
 * API, the console and the CLI.
 */
class RecipientsAndTagsSupportTest {

    @RegisterExtension
    static final PostgresExtension pg = new PostgresExtension();

    static final String VIEWER = "vic-viewer-token-0123456789";
    static final String KEY = "email-invoice-7";

    private static SupportServer server;
    private static Http http;
    private SupportService service;

    @BeforeAll
    static void start() {
        server = SupportServer.start(pg.dataSource(), SupportConfig.builder().host("127.0.0.1").port(0)
                .tokens("vic:viewer:" + VIEWER).build());
        http = new Http(server.baseUri());
    }

    @AfterAll
    static void stop() {
        server.stop();
    }

    @BeforeEach
    void history() {
        TestMail.truncate(pg.dsl());
        service = new SupportService(pg.dataSource());
        EmailOutbox outbox = new EmailOutbox(new OutboxEnqueuer(null, false));
        pg.dsl().transaction(cfg -> {
            outbox.enqueue(cfg.dsl(), OutgoingEmail.template("order_confirmation").topic(TestMail.CONFIRMATION)
                    .to("ann@example.com", "Ann").to("bo@example.com", null).cc("billing@corp.example", "Billing")
                    .bcc("audit@shop.example", null).tag("category", "invoice").tag("plan", "pro")
                    .about("invoice", "7").idempotencyKey(KEY).build());
            outbox.enqueue(cfg.dsl(), OutgoingEmail.template("order_confirmation").topic(TestMail.CONFIRMATION)
                    .to("cy@example.com", null).tag("category", "receipt").about("order", "8").idempotencyKey("email-order-8").build());
        });
        TestMail.dispatchAll(pg.dataSource(), TestMail.Result.SENT);
        // the provider reports the Cc's hard bounce, echoing the tags
        pg.dsl().transaction(cfg -> new DeliveryEventStore(List.of(), null).ingest(cfg.dsl(), "neutral", "d-1", List.of(
                new DeliveryEvent(DeliveryKind.BOUNCED, BounceType.HARD, "bounced", null, KEY, "billing@corp.example",
                        Instant.parse("2026-12-05T10:00:00Z"), "smtp; 550 5.1.1 user unknown", null,
                        Map.of("category", "invoice")))));
    }

    @Test
    void theDetailShowsEachRecipientWithItsOwnDeliveryState_andTheTags() {
        EmailView e = service.email(KEY).orElseThrow();

        assertThat(e.recipients()).extracting(RecipientView::role, RecipientView::address, RecipientView::deliveryState)
                .containsExactly(
                        org.assertj.core.groups.Tuple.tuple("to", "ann@example.com", null),
                        org.assertj.core.groups.Tuple.tuple("to", "bo@example.com", null),
                        org.assertj.core.groups.Tuple.tuple("cc", "billing@corp.example", "bounced"),
                        org.assertj.core.groups.Tuple.tuple("bcc", "audit@shop.example", null));
        assertThat(e.recipients().get(2).deliveryText()).isEqualTo("Bounced (hard)");
        assertThat(e.tags()).containsExactlyInAnyOrderEntriesOf(Map.of("category", "invoice", "plan", "pro"));
        assertThat(e.timeline()).filteredOn(t -> t instanceof TimelineEntry.Delivery).singleElement()
                .satisfies(t -> {
                    assertThat(((TimelineEntry.Delivery) t).recipient()).isEqualTo("billing@corp.example");
                    assertThat(((TimelineEntry.Delivery) t).tags()).containsEntry("category", "invoice");
                });
        assertThat(service.emails(EmailFilter.of(EmailStatus.SENT)).emails()).allSatisfy(v -> assertThat(v.recipients()).isNull());

        JsonNode api = Http.json(http.get("/api/emails/" + KEY, Http.bearer(VIEWER)));
        assertThat(api.at("/recipients/2/role").asText()).isEqualTo("cc");
        assertThat(api.at("/recipients/2/deliveryText").asText()).isEqualTo("Bounced (hard)");
        assertThat(api.at("/tags/plan").asText()).isEqualTo("pro");

        String cookie = ConsoleLogin.signIn(http, VIEWER);
        String page = http.get("/console/emails/" + KEY, "Cookie", "mailroom_session=" + cookie).body();
        assertThat(page).contains("<dt>Recipients</dt>").contains("billing@corp.example").contains("Bounced (hard)")
                .contains("<code>category=invoice</code>").contains("for billing@corp.example");

        StringWriter out = new StringWriter();
        StringWriter err = new StringWriter();
        int code = SupportCli.run(CliDatabase.direct(pg.database().jdbcUrlWithCredentials()),
                new PrintWriter(out), new PrintWriter(err), "email", KEY);
        assertThat(code).as(err.toString()).isZero();
        assertThat(out.toString()).contains("cc   billing@corp.example  Bounced (hard)").contains("tags:        category=invoice plan=pro");
    }

    @Test
    void aSearchByTagFindsTheEmail_inTheServiceTheApiTheConsoleAndTheCli() {
        EmailSearch byTag = EmailSearch.parse(Map.of(SupportParams.TAG, "category=invoice")::get, Instant.now());
        assertThat(service.search(byTag).emails()).extracting(EmailView::key).containsExactly(KEY);
        // any recipient, Cc and Bcc too, finds it
        EmailSearch byBcc = EmailSearch.parse(Map.of(SupportParams.RECIPIENT, "audit@shop.example")::get, Instant.now());
        assertThat(service.search(byBcc).emails()).extracting(EmailView::key).containsExactly(KEY);

        JsonNode api = Http.json(http.get("/api/emails?tag=category%3Dreceipt", Http.bearer(VIEWER)));
        assertThat(api.get("emails")).extracting(n -> n.get("key").asText()).containsExactly("email-order-8");
        HttpResponse<String> bad = http.get("/api/emails?tag=category", Http.bearer(VIEWER));
        assertThat(bad.statusCode()).isEqualTo(400);
        assertThat(bad.body()).contains("\"tag\"");

        String cookie = ConsoleLogin.signIn(http, VIEWER);
        String page = http.get("/console/emails?tag=category%3Dinvoice", "Cookie", "mailroom_session=" + cookie).body();
        assertThat(page).contains(KEY).doesNotContain("email-order-8");

        StringWriter out = new StringWriter();
        StringWriter err = new StringWriter();
        int code = SupportCli.run(CliDatabase.direct(pg.database().jdbcUrlWithCredentials()),
                new PrintWriter(out), new PrintWriter(err), "emails", "--tag", "category=receipt");
        assertThat(code).as(err.toString()).isZero();
        assertThat(out.toString()).contains("email-order-8").doesNotContain(KEY);
    }
}
