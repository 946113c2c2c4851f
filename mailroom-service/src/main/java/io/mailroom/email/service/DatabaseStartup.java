package io.mailroom.email.service;

import io.mailroom.db.Schema;
import io.mailroom.email.config.Settings;
import io.mailroom.db.sql.SqlStates;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import javax.sql.DataSource;
import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;

/**
 * The dispatcher's first contact with its database: waits until the database answers, then runs
 * the migrations when asked to. A database that is down, restarting, still recovering or out of
 * connection slots is waited for, with one log line per attempt naming the URL (password masked),
 * the SQLSTATE and how long it has waited, for as long as {@code timeout} allows (null: as long as
 * it takes). A database that answers with a refusal that waiting will not change (wrong password,
 * no such database, no permission, a migration that does not apply) fails start-up at once with
 * that refusal, because then the operator has something to fix.
 */
final class DatabaseStartup {

    private static final Logger log = LoggerFactory.getLogger(DatabaseStartup.class);

    static final Duration FIRST_PAUSE = Duration.ofSeconds(1);
    static final Duration MAX_PAUSE = Duration.ofSeconds(5);
    /** SQLSTATE class 53, insufficient resources: too many connections, out of memory, disk full. */
    private static final String INSUFFICIENT_RESOURCES = "53";

    private final DataSource pool;
    private final String maskedUrl;
    private final Duration timeout;
    private final boolean migrate;
    private final Duration firstPause;
    private final Duration maxPause;
    /** Where Flyway runs: the pool, or a direct URL when the pool goes through a transaction-mode pooler. */
    private volatile DataSource migrations;
    private volatile String migrationsUrl;
    private volatile boolean answered;

    DatabaseStartup(DataSource pool, String maskedUrl, Duration timeout, boolean migrate) {
        this(pool, maskedUrl, timeout, migrate, FIRST_PAUSE, MAX_PAUSE);
    }

    DatabaseStartup(DataSource pool, String maskedUrl, Duration timeout, boolean migrate, Duration firstPause, Duration maxPause) {
        this.pool = pool;
        this.maskedUrl = maskedUrl;
        this.timeout = timeout;
        this.migrate = migrate;
        this.firstPause = firstPause;
        this.maxPause = maxPause;
    }

    /** Whether the database has answered (start-up may still be migrating). */
    boolean answered() {
        return answered;
    }

    /**
     * Returns once the database answered and, if asked, is migrated. Throws
     * {@link DatabaseStartupException} when {@code timeout} passed first or the database refused
     * the connection; a migration that fails for another reason than a lost connection throws as
     * Flyway reported it.
     */
    void await() throws InterruptedException {
        long started = System.nanoTime();
        log.info("Connecting to the database at {}{}", maskedUrl,
                timeout == null ? " (waiting as long as it takes)" : " (waiting up to " + Settings.format(timeout) + ")");
        Duration pause = firstPause;
        for (int attempt = 1; ; attempt++) {
            boolean connected = false;
            try {
                try (Connection c = pool.getConnection(); Statement st = c.createStatement()) {
                    st.execute("SELECT 1");
                    io.mailroom.db.PostgresVersions.check(c);
                }
                connected = true;
                answered = true;
                if (attempt > 1) {
                    log.info("Database at {} answers, after {} attempts in {}", maskedUrl, attempt, waited(started));
                }
                if (migrate) {
                    var result = migrateNow();
                    log.info("Schema at version {} ({} migrations applied now)", Schema.versionAfter(result),
                            result.migrationsExecuted);
                }
                return;
            } catch (SQLException | RuntimeException e) {
                if (!worthWaitingFor(e)) {
                    if (connected) {
                        throw (RuntimeException) e; // the migration failed on its own: as Flyway said it
                    }
                    String message = "database at " + maskedUrl + " refused the dispatcher (SQLSTATE "
                            + SqlStates.sqlState(e) + "): " + describe(e);
                    log.error("{}; not retrying, this needs fixing", message);
                    throw new DatabaseStartupException(message, e);
                }
                Duration waited = Duration.ofNanos(System.nanoTime() - started);
                if (timeout != null && waited.plus(pause).compareTo(timeout) > 0) {
                    String message = "database at " + maskedUrl + " did not answer within " + Settings.format(timeout)
                            + " (MAILROOM_DB_STARTUP_TIMEOUT; " + attempt + (attempt == 1 ? " attempt" : " attempts") + ", last SQLSTATE "
                            + SqlStates.sqlState(e) + ": " + describe(e) + ")";
                    log.error("Giving up: {}", message);
                    throw new DatabaseStartupException(message, e);
                }
                log.warn("Database at {} unavailable (SQLSTATE {}): {}; attempt {}, waiting {} so far{}; trying again in {}",
                        maskedUrl, SqlStates.sqlState(e), describe(e), attempt, waited(started),
                        timeout == null ? "" : " of " + Settings.format(timeout), Settings.format(pause));
                Thread.sleep(pause.toMillis());
                pause = pause.multipliedBy(2).compareTo(maxPause) < 0 ? pause.multipliedBy(2) : maxPause;
            }
        }
    }

    /**
     * Whether {@code e} means the database is not there (yet): connection-level failures (class 08,
     * shutdown, starting up or recovering, 57P0x), insufficient resources (class 53: too many
     * connections), or a pool that got no connection and no SQLSTATE. Anything else is an answer.
     */
    static boolean worthWaitingFor(Throwable e) {
        if (SqlStates.isConnectionLoss(e)) {
            return true;
        }
        String state = SqlStates.sqlState(e);
        if (state == null) {
            return SqlStates.sqlException(e).isPresent();
        }
        return state.startsWith(INSUFFICIENT_RESOURCES);
    }

    private static String waited(long startedNanos) {
        return (System.nanoTime() - startedNanos) / 1_000_000_000L + "s";
    }

    /** The driver's own words, from the innermost SQLException (the pool's message only says it timed out). */
    static String describe(Throwable e) {
        String message = null;
        for (Throwable c = e; c != null && c.getCause() != c; c = c.getCause()) {
            if (c instanceof SQLException && c.getMessage() != null) {
                message = c.getMessage();
            }
        }
        if (message == null) {
            message = String.valueOf(e.getMessage());
        }
        int nl = message.indexOf('\n');
        return nl < 0 ? message : message.substring(0, nl);
    }

    /**
     * Runs the migrations over {@code url} instead of the pool: Flyway holds a session-level advisory
     * lock from its first transaction to its last, and behind a transaction-mode pooler those land
     * on different server sessions (the lock is then never released where it was taken).
     */
    void migrateThrough(String url, String maskedMigrationUrl, String user, String password) {
        org.postgresql.ds.PGSimpleDataSource direct = new org.postgresql.ds.PGSimpleDataSource();
        direct.setURL(url);
        if (user != null) {
            direct.setUser(user);
        }
        if (password != null) {
            direct.setPassword(password);
        }
        this.migrations = direct;
        this.migrationsUrl = maskedMigrationUrl;
    }

    private org.flywaydb.core.api.output.MigrateResult migrateNow() {
        if (migrations == null) {
            return Schema.migrate(pool);
        }
        log.info("Migrating through the direct URL {} (MAILROOM_MIGRATE_DB_URL)", migrationsUrl);
        return Schema.migrate(migrations);
    }
}
