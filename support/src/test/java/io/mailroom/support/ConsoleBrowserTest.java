package io.mailroom.support;

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
import java.util.Base64;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;

import static io.mailroom.support.TestMail.Result.FAILED;
import static io.mailroom.support.TestMail.Result.SENT;
import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/**
 * The console in a real browser: Debian's headless Chromium, driven by Selenium through Debian's
 * chromedriver (both paths set explicitly, so Selenium Manager never downloads anything). A
 * support person signs in, looks up an order, sees its sent email, opens a failed one from the
 * failed list, presses retry and, after the dispatcher's next pass, sees the new attempt. The
 * order page is saved as {@code target/screenshots/order-page.png}.
 *
 * <p>Skipped, with a message, where {@code /usr/bin/chromium} or {@code /usr/bin/chromedriver} is
 * missing: {@code apt-get install -y chromium chromium-driver}.
 */
class ConsoleBrowserTest {

    @RegisterExtension
    static final PostgresExtension pg = new PostgresExtension();

    static final Path CHROMIUM = Path.of("/usr/bin/chromium");
    static final Path CHROMEDRIVER = Path.of("/usr/bin/chromedriver");
    static final Path SCREENSHOTS = Path.of("target", "screenshots");
    static final String TOKEN = "alice-support-token-0123456789";

    private static SupportServer server;
    private static ChromeDriverService driverService;
    private static WebDriver browser;
    private static Path profile;

    @BeforeAll
    static void start() throws IOException {
        assumeTrue(Files.isExecutable(CHROMIUM) && Files.isExecutable(CHROMEDRIVER),
                "Skipped: the browser test needs Debian's Chromium at " + CHROMIUM + " and its driver at " + CHROMEDRIVER
                        + " (apt-get install -y chromium chromium-driver)");
        server = SupportServer.start(pg.dataSource(), SupportConfig.builder().host("127.0.0.1").port(0)
                .tokens("alice:support:" + TOKEN).build());
        profile = Files.createTempDirectory("mailroom-chromium-");
        driverService = new ChromeDriverService.Builder()
                .usingDriverExecutable(CHROMEDRIVER.toFile())
                .usingAnyFreePort()
                // the viewer's time zone: the console must show times in it
                .withEnvironment(Map.of("TZ", "Europe/Berlin"))
                .build();
        ChromeOptions options = new ChromeOptions();
        options.setBinary(CHROMIUM.toFile());
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

    private static String url(String path) {
        return server.baseUri().resolve(path).toString();
    }

    private static WebDriverWait waiting() {
        return new WebDriverWait(browser, Duration.ofSeconds(10));
    }

    private static WebElement email(String key) {
        return browser.findElement(By.cssSelector("section.email[data-key='" + key + "']"));
    }

    private static List<String> timeline(WebElement email) {
        return email.findElements(By.cssSelector("table.timeline tbody tr td:nth-child(2)")).stream().map(WebElement::getText).toList();
    }

    @Test
    void supportLooksUpAnOrderOpensTheFailedEmailRetriesItAndSeesTheNewAttempt() throws IOException {
        TestMail.truncate(pg.dsl());
        TestMail.confirmation(pg.dsl(), 102);
        TestMail.shipped(pg.dsl(), 102);
        TestMail.dispatch(pg.dataSource(), Map.of("email-order-102-shipped", FAILED));

        // sign in: an unauthenticated visit lands on the sign-in page
        browser.get(url("/console/about"));
        waiting().until(ExpectedConditions.urlContains("/console/login"));
        browser.findElement(By.id("token")).sendKeys(TOKEN);
        browser.findElement(By.id("sign-in")).click();
        waiting().until(ExpectedConditions.presenceOfElementLocated(By.id("about-id")));
        assertThat(browser.findElement(By.cssSelector(".who-name")).getText()).isEqualTo("alice");

        // look up the order and see its sent email
        browser.findElement(By.id("about-type")).sendKeys("order");
        browser.findElement(By.id("about-id")).sendKeys("102");
        browser.findElement(By.id("look-up")).click();
        waiting().until(ExpectedConditions.textToBePresentInElementLocated(By.id("about-heading"), "Order 102"));
        WebElement confirmation = email("email-order-102");
        assertThat(confirmation.findElement(By.cssSelector(".badge")).getText()).isEqualTo("Sent");
        assertThat(confirmation.getText()).contains("Order confirmation").contains("Ann Lee <ann102@example.com>")
                .contains("prov-email-order-102-1");
        assertThat(timeline(confirmation)).containsExactly("Attempt 1: Sent");
        assertThat(email("email-order-102-shipped").findElement(By.cssSelector(".badge")).getText()).isEqualTo("Failed");
        // times are shown in the viewer's zone, not in UTC
        assertThat(browser.findElement(By.id("tz")).getText()).contains("Europe/Berlin");
        assertThat(confirmation.findElement(By.cssSelector("time")).getText()).doesNotContain("UTC");
        screenshot("order-page-before-retry.png");

        // open the failed one from the list of failed emails
        browser.findElement(By.linkText("Failed")).click();
        waiting().until(ExpectedConditions.urlContains("status=failed"));
        browser.findElement(By.cssSelector("tr[data-key='email-order-102-shipped'] td a")).click();
        waiting().until(ExpectedConditions.urlContains("/console/emails/email-order-102-shipped"));
        WebElement failed = email("email-order-102-shipped");
        assertThat(failed.findElement(By.cssSelector(".badge")).getText()).isEqualTo("Failed");
        assertThat(failed.findElement(By.cssSelector(".error-box")).getText()).contains("mailbox unavailable");
        assertThat(timeline(failed)).containsExactly("Attempt 1: Did not go out; gave up");

        // press retry: the email waits to be sent, and the action is in its history
        failed.findElement(By.cssSelector("button[data-action='retry']")).click();
        waiting().until(ExpectedConditions.textToBePresentInElementLocated(By.cssSelector(".flash"), "Retry requested for email-order-102-shipped"));
        WebElement waitingEmail = email("email-order-102-shipped");
        assertThat(waitingEmail.findElement(By.cssSelector(".badge")).getText()).isEqualTo("Waiting to send");
        assertThat(timeline(waitingEmail)).containsExactly("Attempt 1: Did not go out; gave up", "Retry requested by alice (support)");

        // the dispatcher's next pass sends it; the page shows the new attempt
        assertThat(TestMail.dispatchAll(pg.dataSource(), SENT)).isEqualTo(1);
        browser.navigate().refresh();
        WebElement sent = waiting().until(d -> email("email-order-102-shipped"));
        assertThat(sent.findElement(By.cssSelector(".badge")).getText()).isEqualTo("Sent");
        assertThat(timeline(sent)).containsExactly("Attempt 1: Did not go out; gave up", "Retry requested by alice (support)",
                "Attempt 2: Sent");
        assertThat(sent.getText()).contains("2 of 10");

        // back on the order page: both emails sent, and the whole story readable
        browser.findElement(By.linkText("← Order 102")).click();
        waiting().until(ExpectedConditions.textToBePresentInElementLocated(By.id("about-heading"), "Order 102"));
        assertThat(timeline(email("email-order-102-shipped"))).hasSize(3);
        Path shot = screenshot("order-page.png");
        assertThat(Files.size(shot)).isGreaterThan(10_000);

        // the queue overview: counts in words and the chart of the last hour
        browser.findElement(By.linkText("Queue")).click();
        waiting().until(ExpectedConditions.presenceOfElementLocated(By.id("queue-chart")));
        assertThat(browser.findElement(By.id("dispatch-state")).getText()).contains("Sending is running");
        assertThat(browser.findElements(By.cssSelector("#queue-chart rect.sent"))).isNotEmpty();
        assertThat(browser.findElements(By.cssSelector("#queue-chart rect.failed"))).isNotEmpty();
        screenshot("queue-page.png");
    }

    /** A full-page screenshot, through the DevTools protocol (the window itself stays laptop-sized). */
    private static Path screenshot(String name) throws IOException {
        JavascriptExecutor js = (JavascriptExecutor) browser;
        long width = ((Number) js.executeScript("return document.documentElement.clientWidth")).longValue();
        long height = ((Number) js.executeScript("return document.documentElement.scrollHeight")).longValue();
        Map<String, Object> shot = ((ChromeDriver) browser).executeCdpCommand("Page.captureScreenshot", Map.of(
                "format", "png", "captureBeyondViewport", true,
                "clip", Map.of("x", 0, "y", 0, "width", width, "height", Math.min(height, 6000), "scale", 1)));
        Files.createDirectories(SCREENSHOTS);
        Path target = SCREENSHOTS.resolve(name);
        Files.write(target, Base64.getDecoder().decode((String) shot.get("data")));
        return target;
    }
}
