package io.mailroom.support;

import io.mailroom.outbox.NewMessage;
import io.mailroom.outbox.OutboxEnqueuer;
import io.mailroom.outbox.runtime.Dispatcher;
import io.mailroom.outbox.runtime.DispatcherConfig;
import io.mailroom.outbox.runtime.Outcome;
import io.mailroom.testing.PostgresExtension;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.openqa.selenium.By;
import org.openqa.selenium.JavascriptExecutor;
import org.openqa.selenium.WebDriver;
import org.openqa.selenium.WebElement;
import org.openqa.selenium.chrome.ChromeDriver;
import org.openqa.selenium.chrome.ChromeDriverService;
import org.openqa.selenium.chrome.ChromeOptions;
import org.openqa.selenium.support.ui.ExpectedConditions;
import org.openqa.selenium.support.ui.WebDriverWait;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.Base64;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/**
 * The dispatchers page in a real browser (Debian's headless Chromium, as {@link ConsoleBrowserTest}):
 * an operator sees two running dispatchers with their breakers, the topic nobody serves flagged at
 * the top, and resumes a topic paused from the CLI with its button. The page is saved as
 * {@code target/screenshots/dispatchers-page.png} (docs/screenshots/support-dispatchers-page.png is a copy).
 */
class DispatchersBrowserTest {

    @RegisterExtension
    static final PostgresExtension pg = new PostgresExtension();

    static final String TOKEN = "olga-operator-token-0123456789";

    private static SupportServer server;
    private static ChromeDriverService driverService;
    private static WebDriver browser;
    private static Path profile;

    @BeforeAll
    static void start() throws IOException {
        assumeTrue(Files.isExecutable(ConsoleBrowserTest.CHROMIUM) && Files.isExecutable(ConsoleBrowserTest.CHROMEDRIVER),
                "Skipped: the browser test needs Debian's Chromium and chromedriver (apt-get install -y chromium chromium-driver)");
        server = SupportServer.start(pg.dataSource(), SupportConfig.builder().host("127.0.0.1").port(0)
                .tokens("olga:operator:" + TOKEN).build());
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

    private static Dispatcher dispatcher(String workerId, String details, String... topics) {
        DispatcherConfig config = DispatcherConfig.builder().workerId(workerId).listenForNotifications(false).build();
        Map<String, io.mailroom.outbox.runtime.MessageHandler> handlers = new java.util.HashMap<>();
        for (String topic : topics) {
            handlers.put(topic, (m, ctx) -> Outcome.done());
        }
        Dispatcher d = new Dispatcher(pg.dataSource(), config, handlers).registrationDetails(() -> details);
        d.start();
        return d;
    }

    @Test
    void anOperatorSeesEveryDispatcherAndTheUnservedTopic_andResumesAPausedTopic() throws IOException {
        TestMail.truncate(pg.dsl());
        pg.dsl().execute("TRUNCATE outbox_dispatcher");
        new OutboxEnqueuer().enqueueAll(pg.dsl(), List.of(NewMessage.of("email.invoice_reminder", "invoice", "2026-17",
                "email-invoice-2026-17", "{}").withAvailableAt(Instant.now().minus(Duration.ofMinutes(5)))));
        new io.mailroom.outbox.admin.OutboxControl(pg.dataSource()).pause("email.password_reset", "template being fixed", "cli:olga");
        Dispatcher a = dispatcher("mailroom-dispatcher-0", "{\"transports\": [{\"name\": \"smtp\", \"breaker\": \"closed\"}]}",
                "email.order_confirmation", "email.shipped", "email.password_reset");
        Dispatcher b = dispatcher("mailroom-dispatcher-1", "{\"transports\": [{\"name\": \"http\", \"breaker\": \"half_open\"}]}",
                "email.order_confirmation", "email.shipped");
        try {
            browser.get(server.baseUri().resolve("/console/dispatchers").toString());
            new WebDriverWait(browser, Duration.ofSeconds(10)).until(ExpectedConditions.urlContains("/console/login"));
            browser.findElement(By.id("token")).sendKeys(TOKEN);
            browser.findElement(By.id("sign-in")).click();
            WebDriverWait waiting = new WebDriverWait(browser, Duration.ofSeconds(20));
            waiting.until(ExpectedConditions.presenceOfElementLocated(By.id("dispatchers")));
            // both register at start; a reload shows them once they have
            waiting.until(d -> {
                if (d.findElements(By.cssSelector("#dispatchers tr.live")).size() == 2) {
                    return true;
                }
                d.navigate().refresh();
                return false;
            });
            assertThat(browser.findElement(By.id("unserved-topics")).getText()).contains("1 on email.invoice_reminder");
            assertThat(browser.findElement(By.cssSelector("tr[data-worker='mailroom-dispatcher-1']")).getText())
                    .contains("live").contains("http: half open (testing the provider)");
            WebElement paused = browser.findElement(By.cssSelector("tr[data-topic='email.password_reset']"));
            assertThat(paused.getText()).contains("Paused by cli:olga").contains("template being fixed");
            screenshot("dispatchers-page.png");

            paused.findElement(By.cssSelector("button[data-action='resume-topic']")).click();
            waiting.until(ExpectedConditions.textToBePresentInElementLocated(By.cssSelector(".flash"),
                    "Sending of email.password_reset is running again."));
            assertThat(browser.findElement(By.cssSelector("tr[data-topic='email.password_reset']")).getText()).contains("Running")
                    .contains("1 dispatcher");
        } finally {
            a.stop();
            b.stop();
        }
    }

    private static void screenshot(String name) throws IOException {
        JavascriptExecutor js = (JavascriptExecutor) browser;
        long width = ((Number) js.executeScript("return document.documentElement.clientWidth")).longValue();
        long height = ((Number) js.executeScript("return document.documentElement.scrollHeight")).longValue();
        Map<String, Object> shot = ((ChromeDriver) browser).executeCdpCommand("Page.captureScreenshot", Map.of(
                "format", "png", "captureBeyondViewport", true,
                "clip", Map.of("x", 0, "y", 0, "width", width, "height", Math.min(height, 6000), "scale", 1)));
        Files.createDirectories(ConsoleBrowserTest.SCREENSHOTS);
        Files.write(ConsoleBrowserTest.SCREENSHOTS.resolve(name), Base64.getDecoder().decode((String) shot.get("data")));
    }
}
