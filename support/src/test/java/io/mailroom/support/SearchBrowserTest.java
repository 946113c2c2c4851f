package io.mailroom.support;

import io.mailroom.email.api.EmailOutbox;
import io.mailroom.email.api.OutgoingEmail;
import io.mailroom.outbox.OutboxEnqueuer;
import io.mailroom.testing.PostgresExtension;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.openqa.selenium.By;
import org.openqa.selenium.JavascriptExecutor;
import org.openqa.selenium.WebDriver;
import org.openqa.selenium.chrome.ChromeDriver;
import org.openqa.selenium.chrome.ChromeDriverService;
import org.openqa.selenium.chrome.ChromeOptions;
import org.openqa.selenium.support.ui.ExpectedConditions;
import org.openqa.selenium.support.ui.Select;
import org.openqa.selenium.support.ui.WebDriverWait;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Base64;
import java.util.Comparator;
import java.util.Map;
import java.util.stream.Stream;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/**
 * Search and bulk action in a real browser (Debian's headless Chromium, as {@link ConsoleBrowserTest}),
 * as support staff use them after a provider outage: every email to one address found by typing it,
 * then the 500 emails that failed at one domain retried in one confirmed bulk action, with its
 * progress page; then the address erased on the customer's request, after which no search finds it.
 * Screenshots: {@code target/screenshots/search-by-recipient.png}, {@code bulk-confirm.png},
 * {@code bulk-done.png}, {@code erase-form.png}, {@code erase-done.png} (copies in docs/screenshots/).
 */
class SearchBrowserTest {

    @RegisterExtension
    static final PostgresExtension pg = new PostgresExtension();

    static final String TOKEN = "alice-support-token-0123456789";

    private static SupportServer server;
    private static ChromeDriverService driverService;
    private static WebDriver browser;
    private static Path profile;

    @BeforeAll
    static void start() throws IOException {
        assumeTrue(Files.isExecutable(ConsoleBrowserTest.CHROMIUM) && Files.isExecutable(ConsoleBrowserTest.CHROMEDRIVER),
                "Skipped: the browser test needs Debian's Chromium and chromedriver (apt-get install -y chromium chromium-driver)");
        server = SupportServer.start(pg.dataSource(), SupportConfig.builder().host("127.0.0.1").port(0)
                .tokens("alice:support:" + TOKEN).build());
        profile = Files.createTempDirectory("mailroom-chromium-");
        driverService = new ChromeDriverService.Builder().usingDriverExecutable(ConsoleBrowserTest.CHROMEDRIVER.toFile())
                .usingAnyFreePort().withEnvironment(Map.of("TZ", "Europe/Berlin")).build();
        ChromeOptions options = new ChromeOptions();
        options.setBinary(ConsoleBrowserTest.CHROMIUM.toFile());
        options.addArguments("--headless", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--no-first-run",
                "--disable-background-networking", "--disable-component-update", "--disable-sync",
                "--user-data-dir=" + profile.toAbsolutePath(), "--window-size=1366,900", "--lang=en-GB");
        browser = new ChromeDriver(driverService, options);
        browser.manage().timeouts().pageLoadTimeout(Duration.ofSeconds(30));
    }

    @AfterAll
    static void stop() throws IOException {
        if (browser != null) {
            browser.quit();
        }
        if (driverService != null) {
            driverService.stop();
        }
        if (server != null) {
            server.stop();
        }
        if (profile != null) {
            try (Stream<Path> files = Files.walk(profile)) {
                files.sorted(Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
            }
        }
    }

    private static void emails(String prefix, String domain, int n, String template) {
        EmailOutbox outbox = new EmailOutbox(new OutboxEnqueuer(null, false));
        pg.dsl().transaction(cfg -> {
            for (int i = 0; i < n; i++) {
                outbox.enqueue(cfg.dsl(), OutgoingEmail.template(template).topic(TestMail.CONFIRMATION)
                        .to((n == 1 ? "ann" : "user" + i) + "@" + domain, "User " + i).about("order", prefix + i)
                        .idempotencyKey(prefix + "-" + i).build());
            }
        });
    }

    @Test
    void supportFindsEveryEmailToAnAddressThenRetriesTheOutagesFailuresInBulk() throws IOException {
        TestMail.truncate(pg.dsl());
        emails("ann-welcome", "example.com", 1, "welcome");
        emails("ann-receipt", "example.com", 1, "receipt");
        emails("outage", "example.net", 500, "order_confirmation");
        TestMail.dispatch(pg.dataSource(), k -> k.startsWith("outage") ? TestMail.Result.FAILED : TestMail.Result.SENT);
        while (TestMail.dispatchAll(pg.dataSource(), TestMail.Result.FAILED) > 0) {
            // the rest of the outage's emails fail too
        }

        browser.get(server.baseUri().resolve("/console/emails").toString());
        new WebDriverWait(browser, Duration.ofSeconds(10)).until(ExpectedConditions.urlContains("/console/login"));
        browser.findElement(By.id("token")).sendKeys(TOKEN);
        browser.findElement(By.id("sign-in")).click();
        WebDriverWait waiting = new WebDriverWait(browser, Duration.ofSeconds(30));
        waiting.until(ExpectedConditions.presenceOfElementLocated(By.id("search-form")));

        // "every email we sent to ann@example.com", typed as the customer wrote it
        browser.findElement(By.id("search-recipient")).sendKeys("Ann@Example.com");
        browser.findElement(By.id("search")).click();
        waiting.until(ExpectedConditions.presenceOfElementLocated(By.id("search-results")));
        assertThat(browser.findElements(By.cssSelector("#search-results tbody tr"))).hasSize(2);
        assertThat(browser.findElement(By.id("search-results")).getText()).contains("ann-welcome-0").contains("ann-receipt-0")
                .doesNotContain("outage");
        screenshot("search-by-recipient.png");

        // the outage: every failed email at example.net, retried after confirming the count
        browser.get(server.baseUri().resolve("/console/emails?status=failed&domain=example.net").toString());
        waiting.until(ExpectedConditions.presenceOfElementLocated(By.id("bulk-form")));
        new Select(browser.findElement(By.id("bulk-action"))).selectByValue("retry");
        browser.findElement(By.id("bulk-count-button")).click();
        waiting.until(ExpectedConditions.presenceOfElementLocated(By.id("bulk-count")));
        assertThat(browser.findElement(By.id("bulk-count")).getText()).contains("500 emails");
        browser.findElement(By.id("bulk-reason")).sendKeys("provider outage over");
        screenshot("bulk-confirm.png");
        browser.findElement(By.id("bulk-start")).click();
        waiting.until(ExpectedConditions.attributeToBe(By.id("bulk-state"), "data-state", "done"));
        assertThat(browser.findElement(By.id("bulk-applied")).getText()).isEqualTo("500");
        screenshot("bulk-done.png");
        assertThat(pg.dsl().fetchSingle("SELECT count(*) FROM outbox_effect WHERE idempotency_key LIKE 'outage-%' AND status = 'pending'")
                .get(0, Long.class)).isEqualTo(500);

        // Ann asks to be forgotten: erased from the whole history, her emails stay counted
        browser.get(server.baseUri().resolve("/console/erase").toString());
        waiting.until(ExpectedConditions.presenceOfElementLocated(By.name("address")));
        browser.findElement(By.name("address")).sendKeys("ann@example.com");
        browser.findElement(By.name("reason")).sendKeys("customer's request, ticket 4411");
        browser.findElement(By.name("confirm")).click();
        screenshot("erase-form.png");
        browser.findElement(By.cssSelector("button[data-action='erase']")).click();
        waiting.until(ExpectedConditions.alertIsPresent()).accept();
        waiting.until(ExpectedConditions.presenceOfElementLocated(By.cssSelector(".flash")));
        screenshot("erase-done.png");
        browser.get(server.baseUri().resolve("/console/emails?recipient=ann%40example.com").toString());
        waiting.until(ExpectedConditions.presenceOfElementLocated(By.id("search-empty")));
        assertThat(pg.dsl().fetchSingle("SELECT count(*) FROM outbox_effect WHERE idempotency_key LIKE 'ann-%'")
                .get(0, Long.class)).isEqualTo(2);
    }

    private static void screenshot(String name) throws IOException {
        JavascriptExecutor js = (JavascriptExecutor) browser;
        long width = ((Number) js.executeScript("return document.documentElement.clientWidth")).longValue();
        long height = ((Number) js.executeScript("return document.documentElement.scrollHeight")).longValue();
        Map<String, Object> shot = ((ChromeDriver) browser).executeCdpCommand("Page.captureScreenshot", Map.of(
                "format", "png", "captureBeyondViewport", true,
                "clip", Map.of("x", 0, "y", 0, "width", width, "height", Math.min(height, 2400), "scale", 1)));
        Files.createDirectories(ConsoleBrowserTest.SCREENSHOTS);
        Files.write(ConsoleBrowserTest.SCREENSHOTS.resolve(name), Base64.getDecoder().decode((String) shot.get("data")));
    }
}
