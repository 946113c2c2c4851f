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
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * Emails about anything but an order (issue 26, item 1): a password reset about user 42 and an
 * invoice reminder about invoice 2026-17 are named by their own type in the service, the API, the
 * console and the CLI, and found by type and id; an order of the same id is a different entity.
 */
class AboutAnyEntityTest {

    @RegisterExtension
    static final PostgresExtension pg = new PostgresExtension();

    static final String VIEWER = "vic-viewer-token-0123456789";

    private static SupportServer server;
    private static Http http;

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
    void emails() {
        TestMail.truncate(pg.dsl());
        TestMail.enqueue(pg.dsl(), NewMessage.of("email.password_reset", "user", "42", "email-user-42-password-reset",
                TestMail.envelope("password_reset", "bo@example.com", "Bo Chen")));
        TestMail.enqueue(pg.dsl(), NewMessage.of("email.invoice_due", "invoice", "2026-17", "email-invoice-2026-17",
                TestMail.envelope("invoice", "billing@example.org", "Billing")));
        TestMail.confirmation(pg.dsl(), 42); // order 42: another entity with the same id
    }

    @Test
    void theServiceFindsEmailsByTypeAndIdAndNamesTheirType() {
        SupportService service = new SupportService(pg.dataSource());
        AboutEmails user = service.emailsAbout("user", "42");
        assertThat(user.about().label()).isEqualTo("User 42");
        assertThat(user.emails()).extracting(EmailView::key).containsExactly("email-user-42-password-reset");
        assertThat(user.emails().getFirst().about()).isEqualTo(new About("user", "42"));
        assertThat(user.emails().getFirst().recipient()).isEqualTo("bo@example.com");

        assertThat(service.emailsAbout("invoice", "2026-17").emails()).extracting(e -> e.about().label())
                .containsExactly("Invoice 2026-17");
        assertThat(service.emailsOfOrder("42").emails()).extracting(EmailView::key).containsExactly("email-order-42");
        assertThat(service.emailsAbout("user", "43").emails()).isEmpty();
        assertThat(service.aboutTypes()).containsExactly("invoice", "order", "user");

        assertThatThrownBy(() -> service.emailsAbout("", "42")).isInstanceOf(InvalidParameterException.class)
                .satisfies(e -> assertThat(((InvalidParameterException) e).parameter()).isEqualTo("type"));
        assertThatThrownBy(() -> service.emailsAbout("user", "4\n2")).isInstanceOf(InvalidParameterException.class)
                .hasMessageContaining("control characters");
        assertThatThrownBy(() -> service.emailsAbout("user", "x".repeat(201))).isInstanceOf(InvalidParameterException.class)
                .hasMessageContaining("at most 200");
    }

    @Test
    void theApiNamesTheEntityByItsType() {
        HttpResponse<String> r = http.get("/api/about/user/42/emails", Http.bearer(VIEWER));
        assertThat(r.statusCode()).isEqualTo(200);
        JsonNode body = Http.json(r);
        assertThat(body.get("about").get("label").asText()).isEqualTo("User 42");
        JsonNode email = body.get("emails").get(0);
        assertThat(email.get("about").get("type").asText()).isEqualTo("user");
        assertThat(email.get("about").get("id").asText()).isEqualTo("42");
        assertThat(email.has("orderId")).isFalse();
        assertThat(r.body()).doesNotContain("Order");

        JsonNode invoice = Http.json(http.get("/api/about/invoice/2026-17/emails", Http.bearer(VIEWER)));
        assertThat(invoice.get("emails").get(0).get("about").get("label").asText()).isEqualTo("Invoice 2026-17");
        assertThat(Http.json(http.get("/api/about", Http.bearer(VIEWER))).get("types"))
                .extracting(JsonNode::asText).containsExactly("invoice", "order", "user");
        // the page of failed/pending emails names each by its own entity too
        JsonNode pending = Http.json(http.get("/api/emails?status=pending", Http.bearer(VIEWER)));
        assertThat(pending.get("emails")).extracting(e -> e.get("about").get("label").asText())
                .containsExactlyInAnyOrder("User 42", "Invoice 2026-17", "Order 42");
    }

    @Test
    void theConsoleShowsUser42AsAUserAndLinksBackToIt() {
        String cookie = ConsoleLogin.signIn(http, VIEWER);
        String page = http.get("/console/about?type=user&id=42", "Cookie", "mailroom_session=" + cookie).body();
        assertThat(page).contains("User 42").contains("email-user-42-password-reset")
                .doesNotContain("Order 42").doesNotContain("email-order-42");
        String email = http.get("/console/emails/email-user-42-password-reset", "Cookie", "mailroom_session=" + cookie).body();
        assertThat(email).contains("← User 42").contains("/console/about?type=user&amp;id=42").doesNotContain("Order");
        String list = http.get("/console/emails?status=pending", "Cookie", "mailroom_session=" + cookie).body();
        assertThat(list).contains(">About<").contains(">User 42<").contains(">Invoice 2026-17<").contains(">Order 42<");
        // the old order lookup still answers, as the lookup of type order
        HttpResponse<String> old = http.get("/console/orders?orderId=42", "Cookie", "mailroom_session=" + cookie);
        assertThat(old.statusCode()).isEqualTo(303);
        assertThat(old.headers().firstValue("Location")).contains("/console/about?type=order&id=42");
        String empty = http.get("/console/about", "Cookie", "mailroom_session=" + cookie).body();
        assertThat(empty).contains("<option value=\"invoice\">").contains("<option value=\"user\">");
    }

    @Test
    void theCliLooksUpByTypeAndId() {
        StringWriter out = new StringWriter();
        StringWriter err = new StringWriter();
        int code = SupportCli.run(CliDatabase.direct(pg.database().jdbcUrlWithCredentials()),
                new PrintWriter(out), new PrintWriter(err), "emails", "--about", "user:42");
        assertThat(code).as(err.toString()).isZero();
        assertThat(out.toString()).startsWith("User 42: 1 email").contains("email-user-42-password-reset")
                .doesNotContain("Order");

        StringWriter bad = new StringWriter();
        int refused = SupportCli.run(CliDatabase.direct(pg.database().jdbcUrlWithCredentials()),
                new PrintWriter(new StringWriter()), new PrintWriter(bad), "emails", "--about", "user42");
        assertThat(refused).isNotZero();
        assertThat(bad.toString()).contains("about must be TYPE:ID");
    }
}
