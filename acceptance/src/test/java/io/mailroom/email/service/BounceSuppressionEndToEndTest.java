package io.mailroom.email.service;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.github.tomakehurst.wiremock.WireMockServer;
import com.github.tomakehurst.wiremock.core.WireMockConfiguration;
import io.mailroom.acceptance.Shop;
import io.mailroom.delivery.webhook.WebhookSecrets;
import io.mailroom.delivery.webhook.WebhookVerifier;
import io.mailroom.orders.HttpSettings;
import io.mailroom.orders.OrderServer;
import io.mailroom.testing.PostgresExtension;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.openqa.selenium.By;
import org.openqa.selenium.OutputType;
import org.openqa.selenium.TakesScreenshot;
import org.openqa.selenium.WebDriver;
import org.openqa.selenium.WebElement;
import org.openqa.selenium.chrome.ChromeDriver;
import org.openqa.selenium.chrome.ChromeDriverService;
import org.openqa.selenium.chrome.ChromeOptions;
import org.openqa.selenium.support.ui.ExpectedConditions;
import org.openqa.selenium.support.ui.WebDriverWait;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.Base64;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;

import static com.github.tomakehurst.wiremock.client.WireMock.aResponse;
import static com.github.tomakehurst.wiremock.client.WireMock.postRequestedFor;
import static com.github.tomakehurst.wiremock.client.WireMock.urlEqualTo;
import static io.mailroom.db.jooq.Tables.OUTBOX_EFFECT;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/**
 * The whole bounce loop, as a shop runs it: an order is placed over the order service's API and its
 * confirmation sent by the dispatcher service to the loopback mail API; the provider's signed
 * "bounced" webhook (Resend's format) arrives at the service's webhook endpoint; support sees the
 * bounce in the console, in a real browser (Debian's headless Chromium); the next order's email to
 * the same address ends failed as suppressed with no provider request; support lifts the
 * suppression in the console; the next email goes out.
 *
 * <p>Skipped, with a message, where {@code /usr/bin/chromium} or {@code /usr/bin/chromedriver} is
 * missing ({@code apt-get install -y chromium chromium-driver}; .ci/run installs them).
 */
class BounceSuppressionEndToEndTest {

    @RegisterExtension
    static final PostgresExtension pg = new PostgresExtension();

    static final Path CHROMIUM = Path.of("/usr/bin/chromium");
    static final Path CHROMEDRIVER = Path.of("/usr/bin/chromedriver");
    static final String TOKEN = "alice-support-token-0123456789";
    static final String SECRET = "whsec_" + Base64.getEncoder().encodeToString("resend-e2e-secret-0123456789".getBytes());
    static final ObjectMapper JSON = new ObjectMapper();

    private WireMockServer provider;
    private DispatcherService service;
    private OrderServer orders;
    private ChromeDriverService driverService;
    private WebDriver browser;
    private Path profile;
    private final HttpClient http = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();

    @BeforeEach
    void start() throws Exception {
        assumeTrue(Files.isExecutable(CHROMIUM) && Files.isExecutable(CHROMEDRIVER),
                "Skipped: the end-to-end bounce test needs Debian's Chromium at " + CHROMIUM + " and its driver at "
                        + CHROMEDRIVER + " (apt-get install -y chromium chromium-driver)");
        provider = new WireMockServer(WireMockConfiguration.options().dynamicPort().bindAddress("127.0.0.1"));
        provider.start();
        provider.stubFor(com.github.tomakehurst.wiremock.client.WireMock.post(urlEqualTo("/v1/emails"))
                .willReturn(aResponse().withStatus(200).withHeader("Content-Type", "application/json")
                        .withBody("{\"id\":\"prov-{{request.headers.[Idempotency-Key]}}\"}").withTransformers("response-template")));
        Map<String, String> env = ServiceEnv.httpWithWebhooks(pg.database().jdbcUrlWithCredentials(), provider.baseUrl(),
                "resend:" + SECRET);
        env.put("MAILROOM_TEMPLATES_DIR", Shop.templatesDir().toString()); // the shop's templates, not the service tests'
        env.put("MAILROOM_SUPPORT", "on");
        env.put("MAILROOM_SUPPORT_HOST", "127.0.0.1");
        env.put("MAILROOM_SUPPORT_PORT", "0");
        env.put("MAILROOM_SUPPORT_TOKENS", "alice:support:" + TOKEN);
        service = DispatcherService.start(ServiceConfig.fromEnv(env));
        orders = OrderServer.start(pg.dataSource(), HttpSettings.of("127.0.0.1", 0));

        profile = Files.createTempDirectory("mailroom-chromium-");
        driverService = new ChromeDriverService.Builder().usingDriverExecutable(CHROMEDRIVER.toFile()).usingAnyFreePort().build();
        ChromeOptions options = new ChromeOptions();
        options.setBinary(CHROMIUM.toFile());
        options.addArguments("--headless", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--no-first-run",
                "--disable-background-networking", "--disable-component-update", "--disable-sync",
                "--user-data-dir=" + profile.toAbsolutePath(), "--window-size=1366,1000", "--lang=en-GB");
        browser = new ChromeDriver(driverService, options);
    }

    @AfterEach
    void stop() throws Exception {
        if (browser != null) {
            browser.quit();
        }
        if (driverService != null) {
            driverService.stop();
        }
        if (orders != null) {
            orders.stop();
        }
        if (service != null) {
            service.close();
        }
        if (provider != null) {
            provider.stop();
        }
        if (profile != null) {
            try (Stream<Path> files = Files.walk(profile)) {
                files.sorted(Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
            }
        }
    }

    @Test
    void aBouncedAddressIsShownSuppressedAndLifted() throws Exception {
        // 1. an order is placed; its confirmation goes to the loopback provider
        long first = place("Ann Lee", "ann@example.com");
        String firstKey = "email-order-" + first;
        awaitStatus(firstKey, "done");
        assertThat(providerRequests()).isEqualTo(1);

        // 2. the provider's signed "bounced" webhook arrives
        String bounce = """
                {"type":"email.bounced","created_at":"%s","data":{"email_id":"prov-%s","to":["ann@example.com"],
                 "subject":"Your order","bounce":{"type":"Permanent","subType":"General",
                 "message":"550 5.1.1 The email account that you tried to reach does not exist"}}}"""
                .formatted(Instant.now(), firstKey);
        byte[] body = bounce.getBytes(StandardCharsets.UTF_8);
        HttpRequest.Builder webhook = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + service.webhookPort() + "/webhooks/resend"))
                .header("Content-Type", "application/json").POST(HttpRequest.BodyPublishers.ofByteArray(body));
        Map<String, String> signed = WebhookVerifier.headers(WebhookSecrets.of("e2e", List.of(SECRET)), "msg_e2e_bounce",
                Instant.now().getEpochSecond(), body);
        // Resend sends the scheme under Svix's header names
        signed.forEach((name, value) -> webhook.header(name.replace("webhook-", "svix-"), value));
        HttpResponse<String> answer = http.send(webhook.build(), HttpResponse.BodyHandlers.ofString());
        assertThat(answer.statusCode()).as(answer.body()).isEqualTo(200);

        // 3. the console shows the bounce, in a real browser
        WebDriverWait wait = new WebDriverWait(browser, Duration.ofSeconds(15));
        browser.get(console("/console/orders?orderId=" + first));
        wait.until(ExpectedConditions.urlContains("/console/login"));
        browser.findElement(By.id("token")).sendKeys(TOKEN);
        browser.findElement(By.id("sign-in")).click();
        wait.until(ExpectedConditions.presenceOfElementLocated(By.cssSelector("section.email[data-key='" + firstKey + "']")));
        WebElement card = browser.findElement(By.cssSelector("section.email[data-key='" + firstKey + "']"));
        assertThat(card.findElement(By.cssSelector("dd.arrival")).getText())
                .startsWith("No: bounced (hard): 550 5.1.1 The email account that you tried to reach does not exist");
        assertThat(card.findElements(By.cssSelector("table.timeline tr.delivery td:nth-child(2)")))
                .extracting(WebElement::getText).containsExactly("Bounced (hard)");
        screenshot("bounce-order-page.png");
        browser.findElement(By.linkText("Bounced")).click();
        wait.until(ExpectedConditions.presenceOfElementLocated(By.cssSelector("tr[data-key='" + firstKey + "']")));

        // 4. the next email to that address fails as suppressed, and the provider hears nothing
        long second = place("Ann Lee", "Ann@Example.com");
        String secondKey = "email-order-" + second;
        awaitStatus(secondKey, "failed");
        assertThat(lastError(secondKey)).startsWith("suppressed (hard bounce on ")
                .contains("550 5.1.1 The email account that you tried to reach does not exist");
        assertThat(providerRequests()).isEqualTo(1);

        // 5. support lifts the suppression in the console; the next email goes out
        browser.findElement(By.linkText("Suppressed")).click();
        WebElement row = wait.until(ExpectedConditions.presenceOfElementLocated(By.cssSelector("tr[data-address='ann@example.com']")));
        row.findElement(By.name("reason")).sendKeys("Customer fixed the mailbox (phone call)");
        row.findElement(By.cssSelector("button[data-action='lift']")).click();
        wait.until(ExpectedConditions.textToBePresentInElementLocated(By.cssSelector(".flash"), "Lifted 1 suppression(s) of ann@example.com"));
        screenshot("bounce-suppression-lifted.png");

        long third = place("Ann Lee", "ann@example.com");
        awaitStatus("email-order-" + third, "done");
        assertThat(providerRequests()).isEqualTo(2);
    }

    private String console(String path) {
        return "http://127.0.0.1:" + service.supportPort() + path;
    }

    private long place(String name, String email) throws Exception {
        String order = JSON.writeValueAsString(Map.of("customerEmail", email, "customerName", name, "currency", "VND",
                "lines", List.of(Map.of("sku", "CF-1", "name", "Cà phê sữa đá", "quantity", 1, "unitPrice", 45000))));
        HttpResponse<String> r = http.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + orders.port() + "/orders"))
                .header("Content-Type", "application/json; charset=utf-8")
                .POST(HttpRequest.BodyPublishers.ofString(order, StandardCharsets.UTF_8)).build(), HttpResponse.BodyHandlers.ofString());
        assertThat(r.statusCode()).as(r.body()).isEqualTo(201);
        JsonNode created = JSON.readTree(r.body());
        return created.get("orderId").asLong();
    }

    private static void awaitStatus(String key, String status) {
        await().atMost(Duration.ofSeconds(30)).until(() -> status.equals(pg.dsl().select(OUTBOX_EFFECT.STATUS).from(OUTBOX_EFFECT)
                .where(OUTBOX_EFFECT.IDEMPOTENCY_KEY.eq(key)).fetchOne(OUTBOX_EFFECT.STATUS)));
    }

    private static String lastError(String key) {
        return pg.dsl().select(OUTBOX_EFFECT.LAST_ERROR).from(OUTBOX_EFFECT).where(OUTBOX_EFFECT.IDEMPOTENCY_KEY.eq(key))
                .fetchOne(OUTBOX_EFFECT.LAST_ERROR);
    }

    private int providerRequests() {
        return provider.findAll(postRequestedFor(urlEqualTo("/v1/emails"))).size();
    }

    private void screenshot(String name) throws Exception {
        Path dir = Path.of("target", "screenshots");
        Files.createDirectories(dir);
        Files.write(dir.resolve(name), ((TakesScreenshot) browser).getScreenshotAs(OutputType.BYTES));
    }
}
