package io.mailroom.db;

import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.read.ListAppender;
import io.mailroom.testing.PostgresExtension;
import io.zonky.test.db.postgres.embedded.EmbeddedPostgres;
import org.jooq.SQLDialect;
import org.jooq.impl.DSL;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.slf4j.LoggerFactory;

import java.sql.Connection;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The supported PostgreSQL versions start without jOOQ's "Version mismatch" warning, on the oldest
 * (the test server, 15) and the newest (the embedded server the demo runs, 17); the start-up line
 * names the schema's real version on an up-to-date database.
 */
class PostgresVersionsTest {

    @RegisterExtension
    static final PostgresExtension pg = new PostgresExtension();

    private final ListAppender<ILoggingEvent> logs = new ListAppender<>();
    private final Logger root = (Logger) LoggerFactory.getLogger(org.slf4j.Logger.ROOT_LOGGER_NAME);

    @BeforeEach
    void capture() {
        logs.start();
        root.addAppender(logs);
    }

    @AfterEach
    void release() {
        root.detachAppender(logs);
    }

    @Test
    void noVersionMismatchWarningAtTheFirstQuery_onTheOldestAndTheNewestSupportedServer() throws Exception {
        PostgresVersions.replaceJooqVersionCheck(); // what every main does first
        assertThat(DSL.using(pg.dataSource(), SQLDialect.POSTGRES).fetchValue("SELECT 1")).isEqualTo(1);
        int oldest;
        try (Connection c = pg.dataSource().getConnection()) {
            oldest = c.getMetaData().getDatabaseMajorVersion();
            PostgresVersions.check(c);
        }
        int newest;
        try (EmbeddedPostgres embedded = EmbeddedPostgres.builder().start()) {
            Schema.migrate(embedded.getPostgresDatabase());
            assertThat(DSL.using(embedded.getPostgresDatabase(), SQLDialect.POSTGRES)
                    .fetchValue("SELECT count(*) FROM mailroom.outbox_message")).isEqualTo(0L);
            try (Connection c = embedded.getPostgresDatabase().getConnection()) {
                newest = c.getMetaData().getDatabaseMajorVersion();
                PostgresVersions.check(c);
            }
        }
        assertThat(oldest).as("the test server").isBetween(PostgresVersions.OLDEST_SUPPORTED, PostgresVersions.NEWEST_SUPPORTED);
        assertThat(newest).as("the embedded server is the newest supported").isEqualTo(PostgresVersions.NEWEST_SUPPORTED);
        assertThat(logs.list).extracting(ILoggingEvent::getFormattedMessage).noneMatch(m -> m.contains("Version mismatch"))
                .anyMatch(m -> m.startsWith("PostgreSQL " + newest) && m.contains("(supported: 15 to 17)"));
        assertThat(logs.list).filteredOn(e -> e.getLoggerName().startsWith("io.mailroom.db"))
                .extracting(e -> e.getLevel().toString()).containsOnly("INFO");
    }

    @Test
    void versionsOutsideTheRangeAreNamed() {
        assertThat(PostgresVersions.problem(14)).get().asString().contains("older than the oldest Mailroom supports (15)");
        assertThat(PostgresVersions.problem(18)).get().asString().contains("newer than the newest Mailroom is tested on (17)");
        assertThat(PostgresVersions.problem(15)).isEmpty();
        assertThat(PostgresVersions.problem(17)).isEmpty();
    }

    @Test
    void anUpToDateSchemaReportsItsVersion_notNull() {
        Schema.migrate(pg.dataSource()); // the extension migrated already: nothing to apply
        var result = Schema.migrate(pg.dataSource());
        assertThat(result.migrationsExecuted).isZero();
        assertThat(result.targetSchemaVersion).as("what Flyway reports, and what was logged").isNull();
        assertThat(result.initialSchemaVersion).isNotNull();
        assertThat(Schema.versionAfter(result)).isEqualTo(result.initialSchemaVersion).isNotEqualTo("empty");
    }
}
