package io.mailroom.support;

import io.mailroom.email.Email;
import io.mailroom.email.EmailAddress;
import io.mailroom.email.transport.SendResult;
import io.mailroom.email.transport.capture.CaptureTransport;
import io.mailroom.email.transport.capture.CapturedMail;
import io.mailroom.email.transport.smtp.SmtpConfig;
import io.mailroom.email.transport.smtp.SmtpTransport;
import io.mailroom.testing.PostgresExtension;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import java.net.http.HttpResponse;
import java.time.Instant;
import java.util.List;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The "Captured mail" page: list and message, escaped where printed, the HTML part only in a
 * sandboxed frame served under the preview CSP, and the raw message for support, not for a viewer.
 * Retention and erasure take captured mail along.
 */
class CapturedMailConsoleTest {

    @RegisterExtension
    static final PostgresExtension pg = new PostgresExtension();

    static final String VIEWER = "vic-viewer-token-0123456789";
    static final String SUPPORT = "alice-support-token-0123456789";
    private static final String HOSTILE = "<script>alert(1)</script>";

    private static SupportServer server;
    private static Http http;
    private static CaptureTransport capture;

    @BeforeAll
    static void start() {
        server = SupportServer.start(pg.dataSource(), SupportConfig.builder().host("127.0.0.1").port(0)
                .tokens("vic:viewer:" + VIEWER + ",alice:support:" + SUPPORT).build());
        http = new Http(server.baseUri());
        capture = new CaptureTransport(new SmtpTransport(SmtpConfig.builder()
                .from(EmailAddress.of("bounces@shop.example", null)).build()), pg.dataSource());
    }

    @AfterAll
    static void stop() {
        server.stop();
    }

    @BeforeEach
    void clean() {
        TestMail.truncate(pg.dsl());
        pg.dsl().execute("TRUNCATE email_capture");
    }

    private static String captured(String key, String subject, String html) {
        Email email = new Email(EmailAddress.of("shop@shop.example", "Shop"), EmailAddress.of("ann@example.com", "Ann"), subject,
                "Hello Ann,\nyour order " + HOSTILE + " shipped.\n", html, Map.of(), "test/v1");
        SendResult r = capture.send(email, key);
        assertThat(r).isInstanceOf(SendResult.Sent.class);
        return ((SendResult.Sent) r).providerMessageId();
    }

    private static String signIn(String token) {
        HttpResponse<String> form = http.get("/console/login");
        HttpResponse<String> r = http.postForm("/console/login", Map.of("csrf", Http.hidden(form.body(), "csrf"), "token", token,
                "next", "/console/about"), "Cookie", "mailroom_login=" + Http.cookies(form).get("mailroom_login"), "Origin", http.origin());
        assertThat(r.statusCode()).as(r.body()).isEqualTo(303);
        return "mailroom_session=" + Http.cookies(r).get("mailroom_session");
    }

    @Test
    void theListShowsCapturedMailNewestFirstPagedAndEscaped() {
        String first = captured("order-1", "Order 1 " + HOSTILE, "<p>one</p>");
        captured("order-2", "Order 2", "<p>two</p>");
        String viewer = signIn(VIEWER);

        HttpResponse<String> page = http.get("/console/captured", "Cookie", viewer);
        assertThat(page.statusCode()).isEqualTo(200);
        assertThat(page.body()).contains("Captured mail").contains("/console/captured/order-2").contains("/console/captured/order-1")
                .doesNotContain(HOSTILE).contains("&lt;script&gt;");
        assertThat(page.body().indexOf("order-2")).isLessThan(page.body().indexOf("order-1"));

        HttpResponse<String> one = http.get("/console/captured?limit=1", "Cookie", viewer);
        assertThat(one.body()).contains("order-2").doesNotContain("/console/captured/order-1\"");
        String next = one.body().replaceAll("(?s).*href=\"(/console/captured\\?before=\\d+)\".*", "$1");
        assertThat(http.get(next, "Cookie", viewer).body()).contains("/console/captured/order-1");
        assertThat(http.get("/console/captured?before=x", "Cookie", viewer).statusCode()).isEqualTo(400);
        assertThat(http.get("/console/captured?page=2", "Cookie", viewer).statusCode()).isEqualTo(400);

        // the API: the same list, and the capture's provider id is what the idempotency record would hold
        var json = Http.json(http.get("/api/captured", Http.bearer(VIEWER)));
        assertThat(json.get("emails").findValuesAsText("key")).containsExactly("order-2", "order-1");
        assertThat(json.get("emails").get(1).get("providerMessageId").asText()).isEqualTo(first);
    }

    @Test
    void aCapturedMessageShowsHeadersTextAndItsHtmlOnlySandboxed() {
        captured("order-3", "Your order", "<p onclick=\"x()\">Hello " + HOSTILE + "</p>");
        String viewer = signIn(VIEWER);

        String body = http.get("/console/captured/order-3", "Cookie", viewer).body();
        assertThat(body).contains("Message-ID").contains("&lt;order-3.").contains("Hello Ann,")
                .contains("<iframe class=\"email-preview\" sandbox src=\"/console/captured/order-3/preview\"")
                .doesNotContain(HOSTILE).doesNotContain("onclick=\"x()\"")
                .doesNotContain("Download .eml");
        assertThat(http.get("/console/captured/order-3", "Cookie", signIn(SUPPORT)).body()).contains("Download .eml");

        HttpResponse<String> preview = http.get("/console/captured/order-3/preview", "Cookie", viewer);
        assertThat(preview.statusCode()).isEqualTo(200);
        assertThat(preview.headers().firstValue("Content-Security-Policy")).hasValue(HtmlPreview.CSP);
        assertThat(preview.body()).contains("onclick=\"x()\"");

        // the raw message is support's; a viewer reads the bodies but does not download the message
        assertThat(http.get("/console/captured/order-3/raw", "Cookie", viewer).statusCode()).isEqualTo(403);
        assertThat(http.get("/api/captured/order-3/raw", Http.bearer(VIEWER)).statusCode()).isEqualTo(403);
        HttpResponse<String> raw = http.get("/api/captured/order-3/raw", Http.bearer(SUPPORT));
        assertThat(raw.statusCode()).isEqualTo(200);
        assertThat(raw.headers().firstValue("Content-Disposition")).hasValue("attachment; filename=\"order-3.eml\"");
        assertThat(raw.body()).contains("Message-ID: <order-3.").contains("Subject: Your order");
        assertThat(http.get("/console/captured/nope", "Cookie", viewer).statusCode()).isEqualTo(404);
        assertThat(http.get("/console/captured/order-3/preview", "Cookie", viewer).statusCode()).isEqualTo(200);
    }

    @Test
    void aRepeatedCaptureOfOneKeyKeepsOneMessageAndRetentionAndErasureTakeIt() {
        captured("order-4", "First", "<p>1</p>");
        String again = captured("order-4", "Second", "<p>2</p>");
        assertThat(pg.dsl().fetchCount(pg.dsl().selectFrom("email_capture"))).isEqualTo(1);
        assertThat(Http.json(http.get("/api/captured/order-4", Http.bearer(VIEWER))).get("email").get("providerMessageId").asText())
                .isEqualTo(again);

        // no effect holds it: retention deletes it once older than the cutoff, not before
        assertThat(pg.dsl().<Integer>transactionResult(c -> CapturedMail.retention().deleteOld(c.dsl(), Instant.now().minusSeconds(3600), 10)))
                .isZero();
        assertThat(pg.dsl().<Integer>transactionResult(c -> CapturedMail.retention().deleteOld(c.dsl(), Instant.now().plusSeconds(1), 10)))
                .isEqualTo(1);

        captured("order-5", "Fifth", "<p>5</p>");
        assertThat(pg.dsl().<Integer>transactionResult(c -> CapturedMail.erase(c.dsl(), List.of("order-5", "order-6")))).isEqualTo(1);
        assertThat(http.get("/api/captured/order-5", Http.bearer(VIEWER)).statusCode()).isEqualTo(404);
    }
}
