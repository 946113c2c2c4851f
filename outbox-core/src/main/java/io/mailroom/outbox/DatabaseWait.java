package io.mailroom.outbox;

import io.mailroom.db.sql.SqlStates;
import org.slf4j.Logger;

import javax.sql.DataSource;
import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;

/**
 * A process's wait at start-up for its database to answer, shared by the dispatcher service and the
 * example order service: a database that is down, restarting, still recovering or out of connection
 * slots is waited for, with one log line per attempt naming the URL (password masked), the SQLSTATE
 * and how long it has waited, for as long as the bound allows (null: as long as it takes). A
 * database that answers with a refusal that waiting will not change (wrong password, no such
 * database, no permission) ends the wait at once with that refusal, because then the operator has
 * something to fix. Lines go to the caller's logger, so they read as the caller's.
 */
public final class DatabaseWait {

    public static final Duration FIRST_PAUSE = Duration.ofSeconds(1);
    public static final Duration MAX_PAUSE = Duration.ofSeconds(5);
    /** SQLSTATE class 53, insufficient resources: too many connections, out of memory, disk full. */
    private static final String INSUFFICIENT_RESOURCES = "53";

    /** The database refused the process, or did not answer within the bound; the message is all an operator needs. */
    public static final class Failed extends RuntimeException {
        private static final long serialVersionUID = 1L;

        Failed(String message, Throwable cause) {
            super(message, cause);
        }
    }

    private final Logger log;
    private final String maskedUrl;
    private final Duration timeout;
    private final String timeoutSetting;
    private final String who;
    private final Duration firstPause;
    private final Duration maxPause;

    /**
     * @param log            where the lines go (the caller's logger)
     * @param maskedUrl      the URL as logged, password masked
     * @param timeout        how long to wait in all; null: as long as it takes
     * @param timeoutSetting the setting that bounds the wait, named when it runs out
     * @param who            what waits, as in "refused the dispatcher"
     */
    public DatabaseWait(Logger log, String maskedUrl, Duration timeout, String timeoutSetting, String who,
                        Duration firstPause, Duration maxPause) {
        this.log = log;
        this.maskedUrl = maskedUrl;
        this.timeout = timeout;
        this.timeoutSetting = timeoutSetting;
        this.who = who;
        this.firstPause = Checks.positive("firstPause", firstPause);
        this.maxPause = Checks.positive("maxPause", maxPause);
    }

    /** The first log line of a wait: where, and for how long at most. */
    public void announce() {
        log.info("Connecting to the database at {}{}", maskedUrl,
                timeout == null ? " (waiting as long as it takes)" : " (waiting up to " + Durations.format(timeout) + ")");
    }

    /**
     * Returns once a session of {@code pool} answers {@code SELECT 1}, counting the wait from
     * {@code startedNanos} ({@link System#nanoTime()} when the whole start-up began).
     *
     * @throws Failed when the bound passed first or the database refused the connection
     */
    public void untilAnswers(DataSource pool, long startedNanos) throws InterruptedException {
        Duration pause = firstPause;
        for (int attempt = 1; ; attempt++) {
            try {
                try (Connection c = pool.getConnection(); Statement st = c.createStatement()) {
                    st.execute("SELECT 1");
                }
                if (attempt > 1) {
                    log.info("Database at {} answers, after {} attempts in {}", maskedUrl, attempt, waited(startedNanos));
                }
                return;
            } catch (SQLException | RuntimeException e) {
                if (!worthWaitingFor(e)) {
                    String message = "database at " + maskedUrl + " refused " + who + " (SQLSTATE "
                            + SqlStates.sqlState(e) + "): " + describe(e);
                    log.error("{}; not retrying, this needs fixing", message);
                    throw new Failed(message, e);
                }
                pause = pauseOrGiveUp(e, attempt, startedNanos, pause);
            }
        }
    }

    /**
     * After a failure worth waiting for: logs the attempt, sleeps and returns the next pause, or
     * throws {@link Failed} when the next attempt would come after the bound.
     */
    public Duration pauseOrGiveUp(Throwable e, int attempt, long startedNanos, Duration pause) throws InterruptedException {
        Duration waited = Duration.ofNanos(System.nanoTime() - startedNanos);
        if (timeout != null && waited.plus(pause).compareTo(timeout) > 0) {
            String message = "database at " + maskedUrl + " did not answer within " + Durations.format(timeout)
                    + " (" + timeoutSetting + "; " + attempt + (attempt == 1 ? " attempt" : " attempts") + ", last SQLSTATE "
                    + SqlStates.sqlState(e) + ": " + describe(e) + ")";
            log.error("Giving up: {}", message);
            throw new Failed(message, e);
        }
        log.warn("Database at {} unavailable (SQLSTATE {}): {}; attempt {}, waiting {} so far{}; trying again in {}",
                maskedUrl, SqlStates.sqlState(e), describe(e), attempt, waited(startedNanos),
                timeout == null ? "" : " of " + Durations.format(timeout), Durations.format(pause));
        Thread.sleep(pause.toMillis());
        return pause.multipliedBy(2).compareTo(maxPause) < 0 ? pause.multipliedBy(2) : maxPause;
    }

    /**
     * Whether {@code e} means the database is not there (yet): connection-level failures (class 08,
     * shutdown, starting up or recovering, 57P0x), insufficient resources (class 53: too many
     * connections), or a pool that got no connection and no SQLSTATE. Anything else is an answer.
     */
    public static boolean worthWaitingFor(Throwable e) {
        if (SqlStates.isConnectionLoss(e)) {
            return true;
        }
        String state = SqlStates.sqlState(e);
        if (state == null) {
            return SqlStates.sqlException(e).isPresent();
        }
        return state.startsWith(INSUFFICIENT_RESOURCES);
    }

    /** The driver's own words, from the innermost SQLException (the pool's message only says it timed out). */
    public static String describe(Throwable e) {
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

    private static String waited(long startedNanos) {
        return (System.nanoTime() - startedNanos) / 1_000_000_000L + "s";
    }
}
