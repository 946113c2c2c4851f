package io.mailroom.email.service;

import io.mailroom.db.Schema;
import io.mailroom.db.sql.SqlStates;
import org.flywaydb.core.Flyway;
import org.flywaydb.core.api.MigrationInfo;
import org.flywaydb.core.api.MigrationVersion;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import javax.sql.DataSource;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;

/**
 * A dispatcher that does not migrate ({@code MAILROOM_MIGRATE=false}: another service owns the
 * schema, as the order service does in docker compose) and finds the schema behind its migrations
 * (empty, or still being migrated) waits for it: one log line saying what it waits for, then a
 * quiet poll of {@code flyway_schema_history}, then one line when the schema is there. Without
 * this it started anyway, and every claim failed on a missing table with a stack trace.
 */
final class SchemaWait {

    private static final Logger log = LoggerFactory.getLogger(SchemaWait.class);
    /** SQLSTATE 42P01: the history table does not exist yet (an empty schema). */
    private static final String UNDEFINED_TABLE = "42P01";

    private final DataSource pool;
    private final String maskedUrl;
    private final Duration timeout;
    private final Duration firstPause;
    private final Duration maxPause;

    SchemaWait(DataSource pool, String maskedUrl, Duration timeout) {
        this(pool, maskedUrl, timeout, DatabaseStartup.FIRST_PAUSE, DatabaseStartup.MAX_PAUSE);
    }

    /** @param timeout how long to wait at most ({@code MAILROOM_DB_STARTUP_TIMEOUT}); null: as long as it takes */
    SchemaWait(DataSource pool, String maskedUrl, Duration timeout, Duration firstPause, Duration maxPause) {
        this.pool = pool;
        this.maskedUrl = maskedUrl;
        this.timeout = timeout;
        this.firstPause = firstPause;
        this.maxPause = maxPause;
    }

    /**
     * Returns once the schema is at least at the latest version this build's migrations know.
     *
     * @throws DatabaseStartupException when {@code timeout} passed first
     */
    void await() throws InterruptedException {
        MigrationInfo[] pending = Flyway.configure().dataSource(pool).locations(Schema.MIGRATIONS).load().info().pending();
        if (pending.length == 0) {
            return;
        }
        MigrationVersion expected = pending[pending.length - 1].getVersion();
        long started = System.nanoTime();
        MigrationVersion current = applied();
        log.warn("Schema at {} is at version {}, this dispatcher needs {} ({} migration(s) pending), and it does not migrate"
                        + " (MAILROOM_MIGRATE=false): waiting for the service that migrates it{}; not ready meanwhile",
                maskedUrl, current == null ? "none (empty)" : current, expected, pending.length,
                timeout == null ? "" : " for up to " + Settings.format(timeout) + " (MAILROOM_DB_STARTUP_TIMEOUT)");
        Duration pause = firstPause;
        while (current == null || current.compareTo(expected) < 0) {
            Duration waited = Duration.ofNanos(System.nanoTime() - started);
            if (timeout != null && waited.plus(pause).compareTo(timeout) > 0) {
                String message = "schema at " + maskedUrl + " is at version " + (current == null ? "none" : current)
                        + ", not " + expected + ", after " + Settings.format(timeout) + " (MAILROOM_DB_STARTUP_TIMEOUT); "
                        + "migrate it (MAILROOM_MIGRATE=true on one service) and start again";
                log.error("Giving up: {}", message);
                throw new DatabaseStartupException(message, null);
            }
            Thread.sleep(pause.toMillis());
            pause = pause.multipliedBy(2).compareTo(maxPause) < 0 ? pause.multipliedBy(2) : maxPause;
            current = applied();
        }
        log.info("Schema at {} is at version {} after {}s; starting", maskedUrl, current,
                Duration.ofNanos(System.nanoTime() - started).toSeconds());
    }

    /** The highest version recorded as applied, or null for none (no history table yet). A lost connection is "none yet". */
    private MigrationVersion applied() {
        try (Connection c = pool.getConnection(); Statement st = c.createStatement();
             ResultSet rs = st.executeQuery("SELECT version FROM flyway_schema_history WHERE success AND version IS NOT NULL")) {
            MigrationVersion max = null;
            while (rs.next()) {
                MigrationVersion v = MigrationVersion.fromVersion(rs.getString(1));
                if (max == null || v.compareTo(max) > 0) {
                    max = v;
                }
            }
            return max;
        } catch (SQLException e) {
            if (UNDEFINED_TABLE.equals(e.getSQLState()) || DatabaseStartup.worthWaitingFor(e)) {
                return null;
            }
            throw new DatabaseStartupException("could not read the schema's version at " + maskedUrl + " (SQLSTATE "
                    + SqlStates.sqlState(e) + "): " + DatabaseStartup.describe(e), e);
        }
    }
}
