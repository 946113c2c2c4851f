package io.mailroom.support;

import com.fasterxml.jackson.databind.JsonNode;
import io.mailroom.outbox.NewMessage;
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
import java.util.ArrayList;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * An email not sent because its recipient is suppressed, as support meets it: the console and the
 * API name the address (the email never got an idempotency record, so it comes from the payload
 * the business wrote) and link to the suppression entry; Retry is not offered, and asked for anyway
 * it is refused with 409 naming the suppression, until the suppression is lifted.
 */
class SuppressedEmailTest {

    @RegisterExtension
    static final PostgresExtension pg = new PostgresExtension();

    static final String VIEWER = "vic-viewer-token-0123456789";
    static final String SUPPORT = "alice-support-token-0123456789";
    static final String KEY = "email-order-102";
    static final String ADDRESS = "ann.lee@example.com";
    static final String RETRY_FORM = "action=\"/console/emails/" + KEY + "/retry\"";

    private static SupportServer server;
    private static Http http;

    @BeforeAll
    static void start() {
        server = SupportServer.start(pg.dataSource(), SupportConfig.builder().host("127.0.0.1").port(0)
                .tokens("vic:viewer:" + VIEWER + ",alice:support:" + SUPPORT).build(), List::of);
        http = new Http(server.baseUri());
    }

    @AfterAll
    static void stop() {
        server.stop();
    }

    /** The shop's confirmation, enqueued through email-api's envelope, to an address suppressed by hand, then dispatched. */
    @BeforeEach
    void suppressedEmail() {
        TestMail.truncate(pg.dsl());
        TestMail.enqueue(pg.dsl(), NewMessage.of(TestMail.CONFIRMATION, "order", "102", KEY,
                TestMail.envelope("order_confirmation", ADDRESS, "Ann Lee")));
        HttpResponse<String> added = http.postJson("/api/suppressions",
                "{\"address\":\"" + ADDRESS + "\",\"reason\":\"asked by phone\"}", Http.bearer(SUPPORT));
        assertThat(added.statusCode()).as(added.body()).isEqualTo(201);
        assertThat(TestMail.dispatchAll(pg.dataSource(), TestMail.Result.SUPPRESSED)).isEqualTo(1);
    }

    private static JsonNode email() {
        HttpResponse<String> r = http.get("/api/emails/" + KEY, Http.bearer(VIEWER));
        assertThat(r.statusCode()).as(r.body()).isEqualTo(200);
        return Http.json(r);
    }

    private static List<String> actions(JsonNode email) {
        List<String> out = new ArrayList<>();
        email.get("actions").forEach(a -> out.add(a.asText()));
        return out;
    }

    private static HttpResponse<String> retry() {
        return http.postJson("/api/emails/" + KEY + "/retry", "{\"reason\":\"try again\"}", Http.bearer(SUPPORT));
    }

    @Test
    void theApiNamesTheAddressAndItsSuppression_andRefusesRetryWith409UntilItIsLifted() {
        JsonNode email = email();
        assertThat(email.get("status").asText()).isEqualTo("failed");
        assertThat(email.get("recipient").asText()).isEqualTo(ADDRESS);
        assertThat(email.get("recipientName").asText()).isEqualTo("Ann Lee");
        JsonNode suppression = email.get("suppression");
        assertThat(suppression.get("address").asText()).isEqualTo(ADDRESS);
        assertThat(suppression.get("reason").asText()).isEqualTo("manual");
        assertThat(suppression.get("consoleUrl").asText()).isEqualTo("/console/suppressions?address=ann.lee%40example.com");
        assertThat(actions(email)).doesNotContain(EmailView.RETRY).contains(EmailView.CLOSE);

        HttpResponse<String> refused = retry();
        assertThat(refused.statusCode()).as(refused.body()).isEqualTo(409);
        JsonNode error = Http.json(refused);
        assertThat(error.get("code").asText()).isEqualTo("suppressed");
        assertThat(error.get("error").asText()).contains(ADDRESS).contains("suppressed").contains("added by hand")
                .contains("lift");
        assertThat(email().get("status").asText()).isEqualTo("failed");

        HttpResponse<String> lifted = http.postJson("/api/suppressions/lift",
                "{\"address\":\"" + ADDRESS + "\",\"reason\":\"mailbox fixed\"}", Http.bearer(SUPPORT));
        assertThat(lifted.statusCode()).as(lifted.body()).isEqualTo(200);

        JsonNode after = email();
        assertThat(after.get("suppression").isNull()).isTrue();
        assertThat(actions(after)).contains(EmailView.RETRY);
        HttpResponse<String> retried = retry();
        assertThat(retried.statusCode()).as(retried.body()).isEqualTo(200);
        assertThat(email().get("status").asText()).isEqualTo("pending");
    }

    @Test
    void theConsoleShowsTheAddressWithALinkToItsSuppression_andNoRetryButtonUntilItIsLifted() {
        String cookie = ConsoleLogin.signIn(http, SUPPORT);
        String page = http.get("/console/emails/" + KEY, "Cookie", "mailroom_session=" + cookie).body();
        assertThat(page).doesNotContain("not known")
                .contains("Ann Lee &lt;" + ADDRESS + "&gt;")
                .contains("href=\"/console/suppressions?address=ann.lee%40example.com\"")
                .doesNotContain(RETRY_FORM);

        http.postJson("/api/suppressions/lift", "{\"address\":\"" + ADDRESS + "\",\"reason\":\"mailbox fixed\"}", Http.bearer(SUPPORT));
        String after = http.get("/console/emails/" + KEY, "Cookie", "mailroom_session=" + cookie).body();
        assertThat(after).contains(RETRY_FORM).doesNotContain("/console/suppressions?address=");
    }

    @Test
    void theCliShowsTheSuppressionAndRefusesTheRetryNamingIt() {
        StringWriter shown = new StringWriter();
        assertThat(SupportCli.run(io.mailroom.support.cli.CliDatabase.direct(pg.database().jdbcUrlWithCredentials()),
                new PrintWriter(shown), new PrintWriter(new StringWriter()), "email", KEY)).isZero();
        assertThat(shown.toString()).contains("to:          " + ADDRESS)
                .contains("suppressed:  added by hand since").contains("lift it before retrying");

        StringWriter out = new StringWriter();
        StringWriter err = new StringWriter();
        int code = SupportCli.run(io.mailroom.support.cli.CliDatabase.direct(pg.database().jdbcUrlWithCredentials()),
                new PrintWriter(out), new PrintWriter(err), "--actor", "alice", "retry", KEY);
        assertThat(code).as(out + " / " + err).isEqualTo(io.mailroom.support.cli.ExitCodes.NOT_ALLOWED);
        assertThat(err.toString()).contains(ADDRESS).contains("suppressed");
    }
}
