package io.mailroom.support;

import com.fasterxml.jackson.databind.JsonNode;
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
import java.net.URLEncoder;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * "Every email we sent to ann@example.com" and the other searches of issue 26, item 2, through the
 * service, the API, the console and the CLI: each filter alone, combined, paged by keyset without
 * a row lost or repeated, and still answered after the queued payloads are gone.
 */
class EmailSearchTest {

    @RegisterExtension
    static final PostgresExtension pg = new PostgresExtension();

    static final String VIEWER = "vic-viewer-token-0123456789";

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

    private static void email(String key, String template, String topic, String to, String aboutType, String aboutId) {
        EmailOutbox outbox = new EmailOutbox(new OutboxEnqueuer(null, false));
        pg.dsl().transaction(cfg -> outbox.enqueue(cfg.dsl(), OutgoingEmail.template(template).topic(topic).to(to, "Someone")
                .about(aboutType, aboutId).idempotencyKey(key).build()));
    }

    @BeforeEach
    void history() {
        TestMail.truncate(pg.dsl());
        service = new SupportService(pg.dataSource());
        // Ann: three emails (one failed), written with her address in any case; Bo at the same domain; Cy elsewhere
        email("email-order-1", "order_confirmation", TestMail.CONFIRMATION, "Ann@Example.com", "order", "1");
        email("email-order-1-shipped", "order_shipped", TestMail.SHIPPED, "ann@example.com", "order", "1");
        email("email-user-7-reset", "password_reset", TestMail.CONFIRMATION, "ann@EXAMPLE.com", "user", "7");
        email("email-order-2", "order_confirmation", TestMail.CONFIRMATION, "bo@example.com", "order", "2");
        email("email-order-3", "order_confirmation", TestMail.CONFIRMATION, "cy@elsewhere.org", "order", "3");
        TestMail.dispatch(pg.dataSource(), Map.of("email-order-1-shipped", TestMail.Result.FAILED,
                "email-order-3", TestMail.Result.FAILED));
    }

    private List<String> keys(EmailSearch search) {
        return service.search(search).emails().stream().map(EmailView::key).toList();
    }

    private static EmailSearch parse(Map<String, String> params) {
        return EmailSearch.parse(params::get, Instant.now());
    }

    @Test
    void eachFilterFindsWhatItNames() {
        assertThat(keys(parse(Map.of("recipient", " ANN@example.COM ")))).containsExactly(
                "email-user-7-reset", "email-order-1-shipped", "email-order-1");
        assertThat(keys(parse(Map.of("domain", "@Example.com")))).containsExactlyInAnyOrder(
                "email-user-7-reset", "email-order-1-shipped", "email-order-1", "email-order-2");
        assertThat(keys(parse(Map.of("template", "password_reset")))).containsExactly("email-user-7-reset");
        assertThat(keys(parse(Map.of("topic", TestMail.SHIPPED)))).containsExactly("email-order-1-shipped");
        assertThat(keys(parse(Map.of("key", "email-order-2")))).containsExactly("email-order-2");
        assertThat(keys(parse(Map.of("keyPrefix", "email-order-1")))).containsExactly("email-order-1-shipped", "email-order-1");
        assertThat(keys(parse(Map.of("keyPrefix", "email_order")))).as("_ is not a wildcard").isEmpty();
        assertThat(keys(parse(Map.of("providerMessageId", "prov-email-order-2-1")))).containsExactly("email-order-2");
        assertThat(keys(parse(Map.of("error", "mailbox unavailable")))).containsExactly("email-order-3", "email-order-1-shipped");
        assertThat(keys(parse(Map.of("about", "user:7")))).containsExactly("email-user-7-reset");
        assertThat(keys(parse(Map.of("status", "failed")))).containsExactly("email-order-3", "email-order-1-shipped");
    }

    @Test
    void filtersCombine() {
        assertThat(keys(parse(Map.of("recipient", "ann@example.com", "status", "failed")))).containsExactly("email-order-1-shipped");
        assertThat(keys(parse(Map.of("domain", "example.com", "status", "sent", "template", "order_confirmation"))))
                .containsExactlyInAnyOrder("email-order-1", "email-order-2");
        assertThat(keys(parse(Map.of("recipient", "ann@example.com", "topic", TestMail.CONFIRMATION, "keyPrefix", "email-user"))))
                .containsExactly("email-user-7-reset");
        assertThat(keys(parse(Map.of("recipient", "ann@example.com", "until", Instant.now().minusSeconds(3600).toString()))))
                .as("queued before an hour ago").isEmpty();
        assertThat(keys(parse(Map.of("recipient", "nobody@example.com")))).isEmpty();
        pg.dsl().execute("INSERT INTO delivery_state (idempotency_key, state, detail, updated_at) VALUES "
                + "('email-order-1', 'bounced', 'hard bounce', now()), ('email-order-2', 'delivered', null, now())");
        assertThat(keys(parse(Map.of("domain", "example.com", "delivery", "bounced")))).containsExactly("email-order-1");
    }

    @Test
    void pagesFollowEachOtherWithoutLossOrRepeat() {
        for (int i = 0; i < 23; i++) {
            email("email-news-" + i, "newsletter", TestMail.SHIPPED, "dee@example.net", "user", "9");
        }
        List<String> seen = new ArrayList<>();
        EmailSearch search = parse(Map.of("recipient", "dee@example.net", "limit", "5"));
        int pages = 0;
        while (true) {
            SearchPage page = service.search(search);
            page.emails().forEach(e -> seen.add(e.key()));
            pages++;
            if (page.nextCursor() == null) {
                break;
            }
            search = search.from(Cursor.decode("cursor", page.nextCursor()));
        }
        assertThat(pages).isEqualTo(5);
        assertThat(seen).hasSize(23).doesNotHaveDuplicates();
        // the delivery state is applied after outbox-core's part: pages may be short, nothing is lost
        pg.dsl().execute("INSERT INTO delivery_state (idempotency_key, state, detail, updated_at) "
                + "SELECT idempotency_key, 'delivered', null, now() FROM outbox_effect WHERE idempotency_key LIKE 'email-news-%' "
                + "AND right(idempotency_key, 1) IN ('1', '4', '7')");
        List<String> delivered = new ArrayList<>();
        search = parse(Map.of("recipient", "dee@example.net", "delivery", "delivered", "limit", "2"));
        while (true) {
            SearchPage page = service.search(search);
            page.emails().forEach(e -> delivered.add(e.key()));
            if (page.nextCursor() == null) {
                break;
            }
            search = search.from(Cursor.decode("cursor", page.nextCursor()));
        }
        assertThat(delivered).containsExactlyInAnyOrder("email-news-1", "email-news-4", "email-news-7", "email-news-11",
                "email-news-14", "email-news-17", "email-news-21");
    }

    @Test
    void theRecipientOutlivesTheQueuedPayload() {
        // retention took the hot rows (and with them the payloads); a failed email never recorded a send
        pg.dsl().execute("UPDATE idempotency_record SET descriptor = descriptor - 'recipient'");
        pg.dsl().execute("DELETE FROM outbox_message");
        SearchPage page = service.search(parse(Map.of("recipient", "ann@example.com")));
        assertThat(page.emails()).extracting(EmailView::key).containsExactly("email-user-7-reset", "email-order-1-shipped", "email-order-1");
        assertThat(page.emails()).extracting(EmailView::recipient).containsOnly("ann@example.com");
        // the history's retention takes the terms with the effects
        pg.dsl().execute("DELETE FROM outbox_effect WHERE idempotency_key = 'email-order-1'");
        assertThat(pg.dsl().fetchCount(pg.dsl().selectFrom("outbox_effect_term").where("idempotency_key = 'email-order-1'"))).isZero();
    }

    @Test
    void badValuesAreRefusedNamingTheParameter() {
        Map<String, String> bad = new HashMap<>();
        bad.put("recipient", "not-an-address");
        bad.put("domain", "exa mple.com");
        bad.put("topic", "Email Reset");
        bad.put("delivery", "opened");
        bad.put("about", "user");
        bad.put("key", "a key");
        bad.put("error", "x".repeat(201));
        bad.put("status", "lost");
        bad.forEach((name, value) -> assertThatThrownBy(() -> parse(Map.of(name, value)))
                .as(name).isInstanceOf(InvalidParameterException.class)
                .satisfies(e -> assertThat(((InvalidParameterException) e).parameter()).isEqualTo(name)));
    }

    @Test
    void theApiAnswersEveryEmailToAnAddress() {
        HttpResponse<String> r = http.get("/api/emails?recipient=" + URLEncoder.encode("ann@example.com", StandardCharsets.UTF_8),
                Http.bearer(VIEWER));
        assertThat(r.statusCode()).as(r.body()).isEqualTo(200);
        JsonNode body = Http.json(r);
        assertThat(body.get("emails")).extracting(e -> e.get("key").asText())
                .containsExactly("email-user-7-reset", "email-order-1-shipped", "email-order-1");
        assertThat(body.get("search").get("recipient").asText()).isEqualTo("ann@example.com");
        assertThat(http.get("/api/emails?recipient=ann@example.com&colour=red", Http.bearer(VIEWER)).statusCode()).isEqualTo(400);
        HttpResponse<String> badRecipient = http.get("/api/emails?recipient=ann", Http.bearer(VIEWER));
        assertThat(badRecipient.statusCode()).isEqualTo(400);
        assertThat(Http.json(badRecipient).get("parameter").asText()).isEqualTo("recipient");
        JsonNode suggestions = Http.json(http.get("/api/emails/suggestions?field=recipient&prefix=an", Http.bearer(VIEWER)));
        assertThat(suggestions.get("values")).extracting(JsonNode::asText).containsExactly("ann@example.com");
        JsonNode templates = Http.json(http.get("/api/emails/suggestions?field=template&prefix=", Http.bearer(VIEWER)));
        assertThat(templates.get("values")).extracting(JsonNode::asText)
                .containsExactly("order_confirmation", "order_shipped", "password_reset");
    }

    @Test
    void theConsoleAndTheCliAnswerItToo() {
        String cookie = ConsoleLogin.signIn(http, VIEWER);
        String page = http.get("/console/emails?recipient=ann%40example.com", "Cookie", "mailroom_session=" + cookie).body();
        assertThat(page).contains("email-user-7-reset").contains("email-order-1-shipped").contains("email-order-1")
                .doesNotContain("email-order-2").doesNotContain("email-order-3");

        StringWriter out = new StringWriter();
        StringWriter err = new StringWriter();
        int code = SupportCli.run(CliDatabase.direct(pg.database().jdbcUrlWithCredentials()),
                new PrintWriter(out), new PrintWriter(err), "emails", "--recipient", "ann@example.com", "--status", "failed");
        assertThat(code).as(err.toString()).isZero();
        assertThat(out.toString()).contains("email-order-1-shipped").doesNotContain("email-user-7-reset");
    }
}
