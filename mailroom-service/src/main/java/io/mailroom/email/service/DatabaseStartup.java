package io.mailroom.email.service;

import io.mailroom.db.MailroomSchema;
import io.mailroom.db.PostgresVersions;
import io.mailroom.db.Schema;
import io.mailroom.outbox.DatabaseWait;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import javax.sql.DataSource;
import java.sql.Connection;
import java.sql.SQLException;
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

    static final Duration FIRST_PAUSE = DatabaseWait.FIRST_PAUSE;
    static final Duration MAX_PAUSE = DatabaseWait.MAX_PAUSE;

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
    /** How long a migration's session waits for each read (an index build may take minutes); null: the pool's bound. */
    private volatile Duration migrationReads;

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

    /** Migrations wait up to {@code bound} for each read from the server instead of the pool's socket timeout. */
    DatabaseStartup migrationReadsWithin(Duration bound) {
        this.migrationReads = bound;
        return this;
    }

    /** Logs the server's version, warning outside the supported range; a failure here is the wait's to retry. */
    private void checkVersion() {
        try (Connection c = pool.getConnection()) {
            PostgresVersions.check(c);
        } catch (SQLException e) {
            log.debug("Could not read the server's version: SQLSTATE {}", e.getSQLState());
        }
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
        DatabaseWait wait = new DatabaseWait(log, maskedUrl, timeout, "MAILROOM_DB_STARTUP_TIMEOUT", "the dispatcher",
                firstPause, maxPause);
        wait.announce();
        Duration pause = firstPause;
        for (int attempt = 1; ; attempt++) {
            try {
                wait.untilAnswers(pool, started);
            } catch (DatabaseWait.Failed e) {
                throw new DatabaseStartupException(e.getMessage(), e.getCause());
            }
            checkVersion();
            answered = true;
            if (!migrate) {
                return;
            }
            try {
                var result = migrateNow();
                log.info("Schema at version {} ({} migrations applied now)", Schema.versionAfter(result),
                        result.migrationsExecuted);
                return;
            } catch (RuntimeException e) {
                if (!worthWaitingFor(e)) {
                    throw e; // the migration failed on its own: as Flyway said it
                }
                try {
                    pause = wait.pauseOrGiveUp(e, attempt, started, pause); // the connection was lost while migrating
                } catch (DatabaseWait.Failed f) {
                    throw new DatabaseStartupException(f.getMessage(), f.getCause());
                }
            }
        }
    }

    /** See {@link DatabaseWait#worthWaitingFor}. */
    static boolean worthWaitingFor(Throwable e) {
        return DatabaseWait.worthWaitingFor(e);
    }

    /** See {@link DatabaseWait#describe}. */
    static String describe(Throwable e) {
        return DatabaseWait.describe(e);
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
            return Schema.migrate(longReads(pool), MailroomSchema.of(pool));
        }
        log.info("Migrating through the direct URL {} (MAILROOM_MIGRATE_DB_URL)", migrationsUrl);
        return Schema.migrate(longReads(migrations), MailroomSchema.of(pool));
    }

    private DataSource longReads(DataSource ds) {
        Duration bound = migrationReads;
        return bound == null ? ds : io.mailroom.outbox.DbTimeouts.withSocketTimeout(ds, bound);
    }
}
