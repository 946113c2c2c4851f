package io.mailroom.email.service;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.read.ListAppender;
import io.mailroom.db.Schema;
import io.mailroom.testing.PostgresExtension;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.slf4j.LoggerFactory;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * The docker compose race: a dispatcher that does not migrate (the order service does) starts on
 * an empty schema. It logs one line saying what it waits for and waits, instead of starting and
 * logging a stack trace for every claim on a table that does not exist; once the other service has
 * migrated, it starts.
 */
class EmptySchemaStartupTest {

    @RegisterExtension
    static final PostgresExtension pg = new PostgresExtension();

    private final Logger root = (Logger) LoggerFactory.getLogger(org.slf4j.Logger.ROOT_LOGGER_NAME);
    private final ListAppender<ILoggingEvent> logged = new ListAppender<>();

    @BeforeEach
    void emptySchema() {
        pg.dsl().execute("DROP SCHEMA mailroom CASCADE");
        pg.dsl().execute("DROP SCHEMA public CASCADE");
        pg.dsl().execute("CREATE SCHEMA public");
        logged.start();
        root.addAppender(logged);
    }

    @AfterEach
    void detach() {
        root.detachAppender(logged);
    }

    private List<ILoggingEvent> events() {
        synchronized (logged.list) {
            return List.copyOf(logged.list);
        }
    }

    @Test
    void aDispatcherThatDoesNotMigrateWaitsForTheSchemaWithOneLine_thenStarts() throws Exception {
        Map<String, String> env = ServiceEnv.smtp(pg.database().jdbcUrlWithCredentials(), 1);
        env.put("MAILROOM_MIGRATE", "false");
        env.put("MAILROOM_POLL_INTERVAL", "100ms");
        CompletableFuture<DispatcherService> started = CompletableFuture.supplyAsync(
                () -> DispatcherService.start(ServiceConfig.fromEnv(env)));
        try {
            await().atMost(Duration.ofSeconds(20)).until(() -> events().stream()
                    .anyMatch(e -> e.getFormattedMessage().contains("MAILROOM_MIGRATE=false")));
            // a few poll intervals pass: no claim runs on the empty schema, so nothing fails
            await().pollDelay(Duration.ofSeconds(2)).atMost(Duration.ofSeconds(3)).until(() -> true);
            assertThat(started).as("not started before the schema is there").isNotDone();
            assertThat(events()).as("no stack trace, no error while waiting")
                    .allSatisfy(e -> {
                        assertThat(e.getThrowableProxy()).as(e.getFormattedMessage()).isNull();
                        assertThat(e.getLevel().isGreaterOrEqual(Level.ERROR)).as(e.getFormattedMessage()).isFalse();
                    });
            assertThat(events()).filteredOn(e -> e.getLoggerName().equals(SchemaWait.class.getName())).hasSize(1)
                    .first().satisfies(e -> assertThat(e.getFormattedMessage())
                            .contains("version none").contains("waiting for the service that migrates it"));

            Schema.migrate(pg.dataSource());
            DispatcherService service = started.get(30, java.util.concurrent.TimeUnit.SECONDS);
            assertThat(service.port()).isPositive();
            assertThat(events()).filteredOn(e -> e.getLoggerName().equals(SchemaWait.class.getName()))
                    .extracting(ILoggingEvent::getFormattedMessage).last().asString().contains("starting");
        } finally {
            started.thenAccept(DispatcherService::close);
        }
    }
}
