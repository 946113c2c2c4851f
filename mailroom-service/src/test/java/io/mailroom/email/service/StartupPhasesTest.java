package io.mailroom.email.service;

import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.read.ListAppender;
import com.icegreen.greenmail.junit5.GreenMailExtension;
import com.icegreen.greenmail.util.ServerSetupTest;
import io.mailroom.outbox.InvalidSettingException;
import io.mailroom.testing.PostgresExtension;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;
import org.slf4j.LoggerFactory;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

/**
 * Start-up says where its time went, phase by phase, and the template check, which runs beside
 * the database wait instead of before it, still refuses a bad template at once, database or not.
 */
class StartupPhasesTest {

    @RegisterExtension
    static final PostgresExtension pg = new PostgresExtension();

    @RegisterExtension
    static final GreenMailExtension greenMail = new GreenMailExtension(ServerSetupTest.SMTP.dynamicPort());

    private final ListAppender<ILoggingEvent> logs = new ListAppender<>();
    private final Logger logger = (Logger) LoggerFactory.getLogger(StartupPhases.class);
    private final Logger startup = (Logger) LoggerFactory.getLogger(DatabaseStartup.class);

    @BeforeEach
    void capture() {
        logs.start();
        logger.addAppender(logs);
        startup.addAppender(logs);
    }

    @AfterEach
    void release() {
        logger.detachAppender(logs);
        startup.detachAppender(logs);
    }

    @Test
    void readyLogsEachPhaseFromTheJvmsStart_andTheFirstClaim() {
        Map<String, String> env = ServiceEnv.smtp(pg.database().jdbcUrlWithCredentials(), greenMail.getSmtp().getPort());
        try (DispatcherService service = DispatcherService.start(ServiceConfig.fromEnv(env))) {
            assertThat(logs.list).extracting(ILoggingEvent::getFormattedMessage).filteredOn(m -> m.startsWith("Start-up took"))
                    .singleElement().asString()
                    .containsPattern("^Start-up took \\d+ ms from the JVM's start: JVM until start\\(\\) \\d+ ms, ")
                    .contains("health server ", "templates (in parallel) ", "database (wait, version, migrations) ",
                            "connection checks ", "waiting for the template check ", "dispatcher start ",
                            "support and webhook servers ");
            await().atMost(Duration.ofSeconds(10)).until(() -> logs.list.stream()
                    .anyMatch(e -> e.getFormattedMessage().matches("First claim \\d+ ms after the JVM's start")));
            // the test database is migrated already: Flyway applies nothing and reports no target version
            assertThat(logs.list).extracting(ILoggingEvent::getFormattedMessage)
                    .anyMatch(m -> m.matches("Schema at version \\d+ \\(0 migrations applied now\\)"))
                    .noneMatch(m -> m.contains("version null"));
        }
    }

    @Test
    void aTemplateThatFailsItsCheckStopsTheStartWhileTheDatabaseIsStillAwaited(@TempDir Path templates) throws Exception {
        Path t = Files.createDirectories(templates.resolve("broken"));
        Files.writeString(t.resolve("subject.peb"), "Hello");
        Files.writeString(t.resolve("text.peb"), "{% if x %}never closed");
        Files.writeString(t.resolve("html.peb"), "<p>hi</p>");
        Map<String, String> env = ServiceEnv.smtp("jdbc:postgresql://127.0.0.1:1/nowhere?user=x&connectTimeout=1",
                greenMail.getSmtp().getPort());
        env.put("MAILROOM_TEMPLATES_DIR", templates.toString());
        env.remove("MAILROOM_DB_STARTUP_TIMEOUT"); // wait for the database as long as it takes
        long started = System.nanoTime();
        assertThatThrownBy(() -> DispatcherService.start(ServiceConfig.fromEnv(env)))
                .isInstanceOfSatisfying(InvalidSettingException.class,
                        e -> assertThat(e.setting()).isEqualTo("MAILROOM_TEMPLATES_DIR"))
                .hasMessageContaining("broken/text.peb");
        assertThat(Duration.ofNanos(System.nanoTime() - started)).isLessThan(Duration.ofSeconds(30));
        assertThat(Thread.currentThread().isInterrupted()).as("the interrupt that stopped the wait is not left behind").isFalse();
    }
}
