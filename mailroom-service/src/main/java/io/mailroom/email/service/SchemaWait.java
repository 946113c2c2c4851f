package io.mailroom.email.service;

import io.mailroom.db.MailroomSchema;
import io.mailroom.db.Schema;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import javax.sql.DataSource;
import java.time.Duration;

/**
 * A dispatcher that does not migrate ({@code MAILROOM_MIGRATE=false}: another service owns the
 * schema, as the order service does in docker compose) and finds the schema behind its migrations
 * (empty, or still being migrated) waits for it: one log line naming the versions it misses and how
 * to apply them ({@link Schema#status}), then a quiet poll of Mailroom's history table, then one line
 * when the schema is there. Without
 * this it started anyway, and every claim failed on a missing table with a stack trace.
 */
final class SchemaWait {

    private static final Logger log = LoggerFactory.getLogger(SchemaWait.class);

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
        MailroomSchema schema = MailroomSchema.of(pool);
        Schema.Status status = status(schema);
        if (status != null && status.upToDate()) {
            return;
        }
        long started = System.nanoTime();
        log.warn("{} at {}, and this dispatcher does not migrate (MAILROOM_MIGRATE=false): waiting for the service"
                        + " that migrates it{}; not ready meanwhile",
                status == null ? "Schema " + schema + " cannot be read yet" : status.describe(), maskedUrl,
                timeout == null ? "" : " for up to " + Settings.format(timeout) + " (MAILROOM_DB_STARTUP_TIMEOUT)");
        Duration pause = firstPause;
        while (status == null || !status.upToDate()) {
            Duration waited = Duration.ofNanos(System.nanoTime() - started);
            if (timeout != null && waited.plus(pause).compareTo(timeout) > 0) {
                String message = (status == null ? "schema " + schema + " could not be read" : status.describe())
                        + ", at " + maskedUrl + " after " + Settings.format(timeout) + " (MAILROOM_DB_STARTUP_TIMEOUT)";
                log.error("Giving up: {}", message);
                throw new DatabaseStartupException(message, null);
            }
            Thread.sleep(pause.toMillis());
            pause = pause.multipliedBy(2).compareTo(maxPause) < 0 ? pause.multipliedBy(2) : maxPause;
            status = status(schema);
        }
        log.info("Schema {} at {} is at version {} after {}s; starting", schema, maskedUrl, status.current(),
                Duration.ofNanos(System.nanoTime() - started).toSeconds());
    }

    /** What the database holds now, or null when it could not be asked (a lost connection is "not yet"). */
    private Schema.Status status(MailroomSchema schema) {
        try {
            return Schema.status(pool, schema);
        } catch (RuntimeException e) {
            if (DatabaseStartup.worthWaitingFor(e)) {
                return null;
            }
            throw e;
        }
    }
}
