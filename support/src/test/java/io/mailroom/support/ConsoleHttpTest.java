package io.mailroom.support;

import io.mailroom.outbox.NewMessage;
import io.mailroom.testing.PostgresExtension;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import java.net.http.HttpResponse;
import java.util.List;
import java.util.Map;

import static io.mailroom.db.jooq.Tables.AUDIT_LOG;
import static io.mailroom.support.TestMail.Result.FAILED;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * The console over plain HTTP: sign-in and its cookie, CSRF checks (token and origin) on every
 * form post, roles, escaping of hostile content. The browser test drives the same pages for real.
 */
class ConsoleHttpTest {

    @RegisterExtension
    static final PostgresExtension pg = new PostgresExtension();

    static final String VIEWER = "vic-viewer-token-0123456789";
    static final String SUPPORT = "alice-support-token-0123456789";
    static final String OPERATOR = "olga-operator-token-0123456789";

    private static SupportServer server;
    private static Http http;

    @BeforeAll
    static void start() {
        server = SupportServer.start(pg.dataSource(), SupportConfig.builder().host("127.0.0.1").port(0)
                .tokens("vic:viewer:" + VIEWER + ",alice:support:" + SUPPORT + ",olga:operator:" + OPERATOR).build());
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

    @Test
    void aRequestJettyRefusesItselfSaysConnectionCloseBeforeTheServerCloses() throws Exception {
        // Jetty answers an unparsable request line itself and closes; without saying so, a pooling
        // client would send its next request on the closed connection
        try (java.net.Socket socket = new java.net.Socket("127.0.0.1", server.port())) {
            socket.setSoTimeout(5_000);
            socket.getOutputStream().write("GET /api/orders/%00/emails HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n"
                    .getBytes(java.nio.charset.StandardCharsets.US_ASCII));
            String response = new String(socket.getInputStream().readAllBytes(), java.nio.charset.StandardCharsets.ISO_8859_1);
            String head = response.substring(0, response.indexOf("\r\n\r\n")).toLowerCase(java.util.Locale.ROOT);

            assertThat(head).startsWith("http/1.1 400").contains("\r\nconnection: close");
        }
    }

    /** A signed-in browser: the session cookie and the CSRF token of its pages. */
    record Browser(String cookie, String csrf) {
        String[] headers(String origin) {
            return new String[]{"Cookie", "mailroom_session=" + cookie, "Origin", origin};
        }
    }

    private static Browser signIn(String token) {
        HttpResponse<String> form = http.get("/console/login");
        assertThat(form.statusCode()).isEqualTo(200);
        String loginCookie = Http.cookies(form).get("mailroom_login");
        String csrf = Http.hidden(form.body(), "csrf");
        HttpResponse<String> r = http.postForm("/console/login", Map.of("csrf", csrf, "token", token, "next", "/console/about"),
                "Cookie", "mailroom_login=" + loginCookie, "Origin", http.origin());
        assertThat(r.statusCode()).as(r.body()).isEqualTo(303);
        assertThat(r.headers().firstValue("Location")).contains("/console/about");
        String session = Http.cookies(r).get("mailroom_session");
        assertThat(session).isNotBlank();
        HttpResponse<String> page = http.get("/console/about", "Cookie", "mailroom_session=" + session);
        assertThat(page.statusCode()).isEqualTo(200);
        return new Browser(session, Http.hidden(page.body(), "csrf"));
    }

    @Test
    void signingInSetsAnHttpOnlySameSiteStrictSessionCookie() {
        HttpResponse<String> anonymous = http.get("/console/about?type=order&id=102");
        assertThat(anonymous.statusCode()).isEqualTo(303);
        assertThat(anonymous.headers().firstValue("Location")).contains("/console/login?next=%2Fconsole%2Fabout%3Ftype%3Dorder%26id%3D102");
        assertThat(http.get("/").headers().firstValue("Location")).contains("/console/about");

        HttpResponse<String> form = http.get("/console/login");
        assertThat(Http.setCookies(form)).singleElement().asString()
                .startsWith("mailroom_login=").contains("HttpOnly").contains("SameSite=Strict").contains("Path=/console/login");
        String loginCookie = Http.cookies(form).get("mailroom_login");
        HttpResponse<String> ok = http.postForm("/console/login", Map.of("csrf", Http.hidden(form.body(), "csrf"), "token", SUPPORT),
                "Cookie", "mailroom_login=" + loginCookie, "Origin", http.origin());
        assertThat(ok.statusCode()).isEqualTo(303);
        assertThat(Http.setCookies(ok)).filteredOn(c -> c.startsWith("mailroom_session=")).singleElement().asString()
                .contains("HttpOnly").contains("SameSite=Strict").contains("Path=/").contains("Max-Age=28800")
                .doesNotContain(SUPPORT);
        assertThat(ok.body()).doesNotContain(SUPPORT);
    }

    @Test
    void aWrongTokenOrAForgedSignInFormGetsNoSession() {
        HttpResponse<String> form = http.get("/console/login");
        String loginCookie = Http.cookies(form).get("mailroom_login");
        String csrf = Http.hidden(form.body(), "csrf");
        HttpResponse<String> wrong = http.postForm("/console/login", Map.of("csrf", csrf, "token", "guess-guess-guess-guess"),
                "Cookie", "mailroom_login=" + loginCookie, "Origin", http.origin());
        assertThat(wrong.statusCode()).isEqualTo(401);
        assertThat(wrong.body()).contains("That token is not valid");
        assertThat(Http.cookies(wrong)).doesNotContainKey("mailroom_session");
        // no double-submit cookie (a form posted from elsewhere), or another site's origin
        assertThat(http.postForm("/console/login", Map.of("csrf", csrf, "token", SUPPORT), "Origin", http.origin()).statusCode())
                .isEqualTo(403);
        assertThat(http.postForm("/console/login", Map.of("csrf", csrf, "token", SUPPORT), "Cookie", "mailroom_login=" + loginCookie,
                "Origin", "https://evil.example").statusCode()).isEqualTo(403);
    }

    @Test
    void everyFormPostNeedsTheSessionsCsrfTokenAndThisServersOrigin() {
        TestMail.confirmation(pg.dsl(), 102);
        TestMail.dispatchAll(pg.dataSource(), FAILED);
        Browser alice = signIn(SUPPORT);
        String action = "/console/emails/email-order-102/retry";

        assertThat(http.postForm(action, Map.of("back", "/console/about?type=order&id=102"), alice.headers(http.origin())).statusCode())
                .isEqualTo(403);
        assertThat(http.postForm(action, Map.of("csrf", "forged", "back", "/console/about"), alice.headers(http.origin())).statusCode())
                .isEqualTo(403);
        assertThat(http.postForm(action, Map.of("csrf", alice.csrf()), alice.headers("https://evil.example")).statusCode())
                .isEqualTo(403);
        assertThat(http.postForm(action, Map.of("csrf", alice.csrf()), alice.headers("null")).statusCode()).isEqualTo(403);
        assertThat(http.postForm(action, Map.of("csrf", alice.csrf()), "Cookie", "mailroom_session=" + alice.cookie(),
                "Referer", "https://evil.example/page").statusCode()).isEqualTo(403);
        assertThat(pg.dsl().fetchCount(AUDIT_LOG)).isZero();
        // without a session at all: 401, not a redirect
        assertThat(http.postForm(action, Map.of("csrf", alice.csrf()), "Origin", http.origin()).statusCode()).isEqualTo(401);

        HttpResponse<String> ok = http.postForm(action, Map.of("csrf", alice.csrf(), "back", "/console/about?type=order&id=102"),
                alice.headers(http.origin()));
        assertThat(ok.statusCode()).isEqualTo(303);
        assertThat(ok.headers().firstValue("Location")).contains("/console/about?type=order&id=102");
        assertThat(pg.dsl().fetchValue("SELECT actor || ' ' || role || ' ' || action FROM audit_log")).isEqualTo("alice support retry");
        String page = http.get("/console/about?type=order&id=102", "Cookie", "mailroom_session=" + alice.cookie()).body();
        assertThat(page).contains("Retry requested for email-order-102").contains("Retry requested by alice (support)")
                .contains("Waiting to send");
        // a redirect target outside the console is ignored
        TestMail.dispatchAll(pg.dataSource(), FAILED);
        HttpResponse<String> offsite = http.postForm(action, Map.of("csrf", alice.csrf(), "back", "//evil.example/x"), alice.headers(http.origin()));
        assertThat(offsite.headers().firstValue("Location")).contains("/console/emails/email-order-102");
    }

    private static String page(Browser b, String path) {
        HttpResponse<String> r = http.get(path, "Cookie", "mailroom_session=" + b.cookie());
        assertThat(r.statusCode()).as(path).isEqualTo(200);
        return r.body();
    }

    @Test
    void aPermanentFailureOffersWontSendAsTheMainActionAndRetryOnlyBesideIt() {
        TestMail.confirmation(pg.dsl(), 120);
        TestMail.dispatchAll(pg.dataSource(), FAILED); // 550: the same send fails the same way
        // and one that used up its tries on transient errors: a retry may well work now
        TestMail.confirmation(pg.dsl(), 121);
        pg.dsl().execute("UPDATE outbox_message SET max_attempts = 1 WHERE idempotency_key = 'email-order-121'");
        TestMail.dispatchAll(pg.dataSource(), TestMail.Result.RETRY);
        Browser alice = signIn(SUPPORT);

        String permanent = page(alice, "/console/emails/email-order-120");
        assertThat(permanent).contains("class=\"secondary\" data-action=\"retry\"")
                .doesNotContain("class=\"primary\" data-action=\"retry\"")
                .contains("class=\"primary\" data-action=\"close\"")
                .contains("name=\"reason\" required");
        assertThat(permanent.indexOf("data-action=\"close\"")).isLessThan(permanent.indexOf("data-action=\"retry\""));

        String exhausted = page(alice, "/console/emails/email-order-121");
        assertThat(exhausted).contains("class=\"primary\" data-action=\"retry\"")
                .contains("class=\"secondary\" data-action=\"close\"");
    }

    @Test
    void wontSendClosesAFailedEmailWithTheReasonAudited() {
        TestMail.confirmation(pg.dsl(), 122);
        TestMail.dispatchAll(pg.dataSource(), FAILED);
        Browser alice = signIn(SUPPORT);
        String action = "/console/emails/email-order-122/close";
        HttpResponse<String> noReason = http.postForm(action, Map.of("csrf", alice.csrf()), alice.headers(http.origin()));
        assertThat(noReason.statusCode()).isEqualTo(400);
        assertThat(noReason.body()).contains("reason");
        HttpResponse<String> ok = http.postForm(action, Map.of("csrf", alice.csrf(), "reason", "name the renderer refuses; customer informed",
                "back", "/console/emails/email-order-122"), alice.headers(http.origin()));
        assertThat(ok.statusCode()).isEqualTo(303);
        String after = page(alice, "/console/emails/email-order-122");
        assertThat(after).contains("email-order-122 is closed; it will not be sent.")
                .contains("Closed: won&#39;t send")
                .contains("Closed (won&#39;t send) by alice (support)")
                .contains("name the renderer refuses; customer informed")
                .doesNotContain("data-action=\"retry\"");
        assertThat(pg.dsl().fetchValue("SELECT action || ' ' || reason || ' ' || (detail->>'from') || '->' || (detail->>'to') FROM audit_log"))
                .isEqualTo("close name the renderer refuses; customer informed failed->closed");
        assertThat(page(alice, "/console/emails?status=closed")).contains("email-order-122");
        assertThat(page(alice, "/console/emails?status=failed")).doesNotContain("email-order-122");
    }

    @Test
    void aSupersededOriginalShowsNoRetry() {
        TestMail.confirmation(pg.dsl(), 123);
        TestMail.dispatchAll(pg.dataSource(), TestMail.Result.REVIEW);
        Browser alice = signIn(SUPPORT);
        http.postForm("/console/emails/email-order-123/resend", Map.of("csrf", alice.csrf(), "reason", "not received"),
                alice.headers(http.origin()));
        assertThat(pg.dsl().fetchCount(AUDIT_LOG)).isEqualTo(1);
        String original = page(alice, "/console/emails/email-order-123");
        assertThat(original).contains("Resent as").doesNotContain("data-action=\"retry\"");
        assertThat(page(alice, "/console/emails?status=failed")).contains("email-order-123").doesNotContain("Retry now");
    }

    @Test
    void theSmtpServersReplyWithItsQueueIdAndTheRealHandBackReasonAreShown() {
        TestMail.confirmation(pg.dsl(), 124);
        TestMail.dispatchAll(pg.dataSource(), TestMail.Result.SENT_WITHOUT_RECORD);
        TestMail.confirmation(pg.dsl(), 125);
        TestMail.dispatchAll(pg.dataSource(), TestMail.Result.NOT_ATTEMPTED);
        Browser vic = signIn(VIEWER);
        assertThat(page(vic, "/console/emails/email-order-124")).contains("250 2.0.0 Ok: queued as Q1X124");
        assertThat(page(vic, "/console/emails/email-order-125")).contains("Held back without trying; will try again")
                .contains(TestMail.BREAKER_OPEN).doesNotContain("dispatcher stopping");
    }

    @Test
    void aViewerSeesNoActionsAndMayNotPostThem() {
        TestMail.confirmation(pg.dsl(), 102);
        TestMail.dispatchAll(pg.dataSource(), FAILED);
        Browser vic = signIn(VIEWER);
        String page = http.get("/console/about?type=order&id=102", "Cookie", "mailroom_session=" + vic.cookie()).body();
        assertThat(page).contains("Failed").doesNotContain("Retry now");
        HttpResponse<String> r = http.postForm("/console/emails/email-order-102/retry", Map.of("csrf", vic.csrf()), vic.headers(http.origin()));
        assertThat(r.statusCode()).isEqualTo(403);
        assertThat(r.body()).contains("needs the role support");
        assertThat(http.postForm("/console/control/pause", Map.of("csrf", vic.csrf()), vic.headers(http.origin())).statusCode()).isEqualTo(403);
        assertThat(pg.dsl().fetchCount(AUDIT_LOG)).isZero();
    }

    @Test
    void hostileContentIsEscapedEverywhereItIsShown() {
        String payload = "{\"orderId\":666,\"customerEmail\":\"x@example.com\",\"customerName\":\"<img src=x onerror=alert(1)>\"}";
        TestMail.enqueue(pg.dsl(), NewMessage.of(TestMail.CONFIRMATION, "order", "666", "email-order-666", payload));
        TestMail.dispatch(pg.dataSource(), k -> TestMail.Result.SENT_WITHOUT_RECORD);
        pg.dsl().execute("UPDATE outbox_effect SET status = 'failed', last_error = '<script>alert(\"x\")</script> & ''quoted'''");
        pg.dsl().execute("UPDATE outbox_message SET status = 'failed', last_error = '<script>alert(\"x\")</script> & ''quoted'''");
        Browser alice = signIn(SUPPORT);
        for (String path : new String[]{"/console/about?type=order&id=666", "/console/emails/email-order-666", "/console/emails?status=failed"}) {
            String page = http.get(path, "Cookie", "mailroom_session=" + alice.cookie()).body();
            assertThat(page).as(path).doesNotContain("<script>alert").doesNotContain("<img src=x")
                    .contains("&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt; &amp; &#39;quoted&#39;");
        }
        assertThat(http.get("/console/about?type=order&id=666", "Cookie", "mailroom_session=" + alice.cookie()).body())
                .contains("&lt;img src=x onerror=alert(1)&gt;");
        HttpResponse<String> bad = http.get("/console/orders?orderId=%3Cscript%3Ealert(1)%3C/script%3E", "Cookie", "mailroom_session=" + alice.cookie());
        assertThat(bad.statusCode()).isEqualTo(400);
        assertThat(bad.body()).contains("orderId").doesNotContain("<script>alert");
        assertThat(bad.headers().firstValue("Content-Security-Policy").orElse("")).contains("script-src 'self'");
    }

    @Test
    void hostileNamesReasonsAndFailuresAreEscapedOnEveryPageThatShowsThem() throws Exception {
        String hostile = "<script>alert(1)</script>\"'&";
        String escaped = "&lt;script&gt;alert(1)&lt;/script&gt;&quot;&#39;&amp;";
        String vietnamese = "Nguyễn Thị Ánh";
        String payload = SupportJson.mapper().writeValueAsString(Map.of("orderId", 667, "customerEmail", "anh@example.com",
                "customerName", vietnamese + " " + hostile));
        TestMail.enqueue(pg.dsl(), NewMessage.of(TestMail.CONFIRMATION, "order", "667", "email-order-667", payload));
        TestMail.dispatchAll(pg.dataSource(), FAILED);
        String failure = "550 rejected </textarea><script>alert(2)</script> " + hostile;
        pg.dsl().execute("UPDATE outbox_effect SET last_error = ?", failure);
        pg.dsl().execute("UPDATE outbox_message SET last_error = ?", failure);
        pg.dsl().execute("UPDATE outbox_attempt SET error = ?", failure);
        String failureEscaped = "550 rejected &lt;/textarea&gt;&lt;script&gt;alert(2)&lt;/script&gt; " + escaped;
        // a person whose name comes from outside the token list (the CLI takes the operating-system user's)
        SupportService service = new SupportService(pg.dataSource(), TransportStatus.UNKNOWN);
        Actor person = new Actor(vietnamese + " " + hostile, Role.OPERATOR);
        service.close(person, "email-order-667", "reason " + hostile + " " + vietnamese);
        service.pause(person, "*", "pause " + hostile);
        Browser olga = signIn(OPERATOR);

        Map<String, List<String>> shown = Map.of(
                "/console/about?type=order&id=667", List.of(vietnamese + " " + escaped + " &lt;anh@example.com&gt;", failureEscaped,
                        "Closed (won&#39;t send) by " + vietnamese + " " + escaped + " (operator)",
                        "“reason " + escaped + " " + vietnamese + "”"),
                "/console/emails/email-order-667", List.of(vietnamese + " " + escaped + " &lt;anh@example.com&gt;", failureEscaped,
                        "“reason " + escaped + " " + vietnamese + "”"),
                "/console/emails?status=closed", List.of(failureEscaped),
                "/console/queue", List.of("by " + vietnamese + " " + escaped + " since", "“pause " + escaped + "”"));
        for (Map.Entry<String, List<String>> page : shown.entrySet()) {
            HttpResponse<String> r = http.get(page.getKey(), "Cookie", "mailroom_session=" + olga.cookie());
            assertThat(r.statusCode()).as(page.getKey()).isEqualTo(200);
            // UTF-8 bytes, as the page's <meta charset> says (the Content-Type names no charset)
            assertThat(r.body()).as(page.getKey()).contains("<meta charset=\"utf-8\">").doesNotContain("<script>alert").doesNotContain("</textarea>")
                    .doesNotContain(hostile).contains(page.getValue());
        }
    }

    @Test
    void demoModeOffersASignInWithoutTokenAndOnlyThere() {
        assertThat(http.get("/console/login").body()).doesNotContain("Enter the demo");
        HttpResponse<String> form = http.get("/console/login");
        HttpResponse<String> refused = http.postForm("/console/login", Map.of("csrf", Http.hidden(form.body(), "csrf"), "demo", "1"),
                "Cookie", "mailroom_login=" + Http.cookies(form).get("mailroom_login"), "Origin", http.origin());
        assertThat(refused.statusCode()).isEqualTo(401);
        try (SupportServer demo = SupportServer.start(pg.dataSource(), SupportConfig.builder().host("127.0.0.1").port(0).demo(true).build())) {
            Http h = new Http(demo.baseUri());
            HttpResponse<String> page = h.get("/console/login");
            assertThat(page.body()).contains("Enter the demo without a token");
            HttpResponse<String> in = h.postForm("/console/login", Map.of("csrf", Http.hidden(page.body(), "csrf"), "demo", "1"),
                    "Cookie", "mailroom_login=" + Http.cookies(page).get("mailroom_login"), "Origin", h.origin());
            assertThat(in.statusCode()).isEqualTo(303);
            String orders = h.get("/console/about", "Cookie", "mailroom_session=" + Http.cookies(in).get("mailroom_session")).body();
            assertThat(orders).contains("<span class=\"who-name\">demo</span>").contains("operator");
        }
    }

    @Test
    void signingOutEndsTheSession() {
        Browser alice = signIn(SUPPORT);
        HttpResponse<String> out = http.postForm("/console/logout", Map.of("csrf", alice.csrf()), alice.headers(http.origin()));
        assertThat(out.statusCode()).isEqualTo(303);
        assertThat(Http.setCookies(out)).anySatisfy(c -> assertThat(c).startsWith("mailroom_session=;").contains("Max-Age=0"));
        assertThat(http.get("/console/about", "Cookie", "mailroom_session=" + alice.cookie()).statusCode()).isEqualTo(303);
    }

    @Test
    void emailsOnATopicNoRunningDispatcherServesShowABannerOnTheQueue() {
        Browser alice = signIn(SUPPORT);
        assertThat(http.get("/console/queue", "Cookie", "mailroom_session=" + alice.cookie()).body())
                .doesNotContain("id=\"unserved-topics\"");
        TestMail.enqueue(pg.dsl(), NewMessage.of("email.welcome_back", "user", "9", "email-welcome-9", "{}")
                .withAvailableAt(java.time.Instant.now().minus(java.time.Duration.ofMinutes(5))));
        String queue = http.get("/console/queue", "Cookie", "mailroom_session=" + alice.cookie()).body();
        assertThat(queue).contains("id=\"unserved-topics\"")
                .contains("Emails wait on a topic no running dispatcher serves:</strong> 1 on email.welcome_back.");
    }

    @Test
    void queueListAndAssetPagesRender() {
        TestMail.confirmation(pg.dsl(), 7);
        TestMail.dispatchAll(pg.dataSource(), FAILED);
        Browser alice = signIn(SUPPORT);
        String queue = http.get("/console/queue", "Cookie", "mailroom_session=" + alice.cookie()).body();
        assertThat(queue).contains("<svg class=\"chart\"").contains("Sending is running").contains("Breaker state: unknown")
                .doesNotContain("Pause all sending"); // support is not operator
        String list = http.get("/console/emails?status=failed", "Cookie", "mailroom_session=" + alice.cookie()).body();
        assertThat(list).contains("Failed emails").contains("email-order-7").contains("Retry now");
        HttpResponse<String> css = http.get("/console/assets/app.css");
        assertThat(css.statusCode()).isEqualTo(200);
        assertThat(css.headers().firstValue("Content-Type").orElse("")).startsWith("text/css");
        assertThat(http.get("/console/assets/app.js").body()).contains("Intl.DateTimeFormat");
        assertThat(http.get("/console/assets/..%2F..%2Fapp.css").statusCode()).isIn(400, 404);
        assertThat(http.get("/console/assets/secret.properties").statusCode()).isEqualTo(404);
        // the page templates live beside the assets but are not served
        assertThat(http.get("/console/assets/layout.peb").statusCode()).isEqualTo(404);
    }
}
