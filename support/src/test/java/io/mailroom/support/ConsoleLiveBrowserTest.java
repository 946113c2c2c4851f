package io.mailroom.support;

import io.mailroom.outbox.maintenance.RollupConfig;
import io.mailroom.outbox.maintenance.StatsRollup;
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
import org.openqa.selenium.support.ui.WebDriverWait;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Base64;
import java.util.Comparator;
import java.util.Map;
import java.util.stream.Stream;

import static io.mailroom.support.TestMail.Result.FAILED;
import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/**
 * Live refresh in a real browser (Debian's headless Chromium, as {@link ConsoleBrowserTest}): a new
 * failed email appears in the open list of failed emails without a reload; nothing is fetched while
 * the tab is hidden, and the list is fresh at once when it shows again; nothing is swapped while the
 * person types in a field or has paused live updates; an ended session stops the refreshing and says
 * so. The refresh period is shortened to one second for the test (sessionStorage, see app.js). The
 * queue page with its charts by topic is saved as {@code target/screenshots/queue-by-topic.png}.
 */
class ConsoleLiveBrowserTest {

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
                "Skipped: the browser test needs Debian's Chromium and its driver (apt-get install -y chromium chromium-driver)");
        server = SupportServer.start(pg.dataSource(), SupportConfig.builder().host("127.0.0.1").port(0)
                .tokens("alice:support:" + TOKEN).build());
        profile = Files.createTempDirectory("mailroom-chromium-live-");
        driverService = new ChromeDriverService.Builder().usingDriverExecutable(ConsoleBrowserTest.CHROMEDRIVER.toFile())
                .usingAnyFreePort()
                // the viewer's time zone: swapped-in rows show their times in it too
                .withEnvironment(Map.of("TZ", "Europe/Berlin"))
                .build();
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

    private static String url(String path) {
        return server.baseUri().resolve(path).toString();
    }

    private static WebDriverWait waiting(int seconds) {
        return new WebDriverWait(browser, Duration.ofSeconds(seconds));
    }

    private static Object js(String script) {
        return ((JavascriptExecutor) browser).executeScript(script);
    }

    private static String state() {
        return (String) js("return document.documentElement.getAttribute('data-live-state')");
    }

    private static long refreshes() {
        return Long.parseLong((String) js("return document.documentElement.getAttribute('data-live-refreshes')"));
    }

    private static boolean listed(long order) {
        return !browser.findElements(By.cssSelector("tr[data-key='email-order-" + order + "']")).isEmpty();
    }

    private static void newFailedEmail(long order) {
        TestMail.confirmation(pg.dsl(), order);
        assertThat(TestMail.dispatchAll(pg.dataSource(), FAILED)).isEqualTo(1);
    }

    private static void hidden(boolean hidden) {
        js("Object.defineProperty(document, 'hidden', {configurable: true, get: function () { return " + hidden + "; }});"
                + "Object.defineProperty(document, 'visibilityState', {configurable: true, get: function () { return '"
                + (hidden ? "hidden" : "visible") + "'; }});"
                + "document.dispatchEvent(new Event('visibilitychange'));");
    }

    @Test
    void theFailedListRefreshesItselfOnlyWhileVisibleAndUntouched_andStopsWhenTheSessionEnds() throws Exception {
        TestMail.truncate(pg.dsl());
        pg.dsl().execute("TRUNCATE outbox_rollup, outbox_rollup_mark, delivery_event_rollup");
        newFailedEmail(1);

        browser.get(url("/console/emails?status=failed"));
        waiting(10).until(ExpectedConditions.urlContains("/console/login"));
        browser.findElement(By.id("token")).sendKeys(TOKEN);
        browser.findElement(By.id("sign-in")).click();
        waiting(10).until(ExpectedConditions.urlContains("status=failed"));
        js("window.sessionStorage.setItem('mailroom.refreshSeconds', '1'); window.localStorage.removeItem('mailroom.live');");
        browser.navigate().refresh();
        waiting(10).until(d -> listed(1));
        js("window.notReloaded = true;");
        assertThat(browser.findElement(By.id("live-updated")).getText()).matches("Updated \\d\\d:\\d\\d:\\d\\d");
        assertThat(browser.findElement(By.id("live-toggle")).getText()).isEqualTo("Pause live updates");
        assertThat(state()).isEqualTo("running");

        // a new failed email appears in the open list, without a reload
        newFailedEmail(2);
        waiting(10).until(d -> listed(2));
        assertThat(js("return window.notReloaded === true")).isEqualTo(true);
        assertThat(browser.findElement(By.cssSelector("tr[data-key='email-order-2'] time")).getText()).doesNotContain("UTC");
        assertThat(browser.findElement(By.cssSelector("tr[data-key='email-order-2'] time")).getAttribute("title")).contains("UTC");

        // hidden: nothing is fetched; shown again: fresh at once
        hidden(true);
        assertThat(state()).isEqualTo("hidden");
        long before = refreshes();
        newFailedEmail(3);
        Thread.sleep(3_000);
        assertThat(refreshes()).as("refreshes while hidden").isEqualTo(before);
        assertThat(listed(3)).isFalse();
        hidden(false);
        waiting(3).until(d -> listed(3));
        assertThat(state()).isEqualTo("running");

        // typing in a field: the page stays as it is until the person leaves the field
        browser.findElement(By.cssSelector("form.filters input[name='since']")).click();
        newFailedEmail(4);
        Thread.sleep(2_500);
        assertThat(listed(4)).as("swapped while typing").isFalse();
        js("document.activeElement.blur();");
        waiting(5).until(d -> listed(4));

        // paused by the person: nothing changes until they resume
        browser.findElement(By.id("live-toggle")).click();
        assertThat(state()).isEqualTo("paused");
        assertThat(browser.findElement(By.id("live-updated")).getText()).contains("live updates paused");
        newFailedEmail(5);
        Thread.sleep(2_500);
        assertThat(listed(5)).isFalse();
        browser.findElement(By.id("live-toggle")).click();
        waiting(3).until(d -> listed(5));
        assertThat(js("return window.notReloaded === true")).isEqualTo(true);

        // the queue page with its charts by topic, live too
        pg.dsl().execute("UPDATE outbox_attempt SET started_at = started_at - interval '2 minutes',"
                + " finished_at = finished_at - interval '2 minutes'");
        new StatsRollup(pg.dataSource(), RollupConfig.builder().backfill(Duration.ofHours(1)).build()).run();
        browser.get(url("/console/queue?range=1h"));
        waiting(10).until(ExpectedConditions.presenceOfElementLocated(By.cssSelector("svg.topic-chart")));
        assertThat(browser.findElement(By.cssSelector("svg.topic-chart")).getAttribute("data-topic")).isEqualTo("email.order_confirmation");
        assertThat(browser.findElements(By.cssSelector("svg.topic-chart rect.failed"))).isNotEmpty();
        waiting(5).until(d -> refreshes() > 0);
        screenshot("queue-by-topic.png");

        // the session ends: the next refresh is refused, refreshing stops and the page says so
        browser.manage().deleteCookieNamed("mailroom_session");
        waiting(5).until(d -> "ended".equals(state()));
        assertThat(browser.findElement(By.id("live-status")).getText())
                .contains("Your session has ended, so live updates stopped.").contains("Sign in again");
        long last = refreshes();
        Thread.sleep(2_500);
        assertThat(refreshes()).isEqualTo(last);
        assertThat(browser.getCurrentUrl()).contains("/console/queue");
    }

    private static void screenshot(String name) throws IOException {
        long width = ((Number) js("return document.documentElement.clientWidth")).longValue();
        long height = ((Number) js("return document.documentElement.scrollHeight")).longValue();
        Map<String, Object> shot = ((ChromeDriver) browser).executeCdpCommand("Page.captureScreenshot", Map.of(
                "format", "png", "captureBeyondViewport", true,
                "clip", Map.of("x", 0, "y", 0, "width", width, "height", Math.min(height, 6000), "scale", 1)));
        Files.createDirectories(ConsoleBrowserTest.SCREENSHOTS);
        Files.write(ConsoleBrowserTest.SCREENSHOTS.resolve(name), Base64.getDecoder().decode((String) shot.get("data")));
    }
}
