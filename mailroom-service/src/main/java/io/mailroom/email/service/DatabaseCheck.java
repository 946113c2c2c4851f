package io.mailroom.email.service;

import io.mailroom.db.MailroomSchema;
import io.mailroom.outbox.admin.OutboxControl;
import io.mailroom.db.sql.SqlStates;
import org.jooq.SQLDialect;
import org.jooq.impl.DSL;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import javax.sql.DataSource;
import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * The database part of {@code /health/ready}, answered within {@code answerWithin} whatever the
 * database does. One connection is taken from the pool for both questions (does it answer, which
 * scopes are paused), and at most one check is in flight: a probe that arrives while the previous
 * check still waits for the pool (up to its connection timeout) waits for that same check, for at
 * most {@code answerWithin}, instead of queueing another request on the pool. A check that has not
 * answered in time counts as "database DOWN", with the paused scopes unknown.
 *
 * <p>The network timeout of the borrowed connection bounds the queries themselves (the pool
 * restores it when the connection is returned), so a database that accepted the connection and
 * then went silent does not hold the check, or the connection, for long.
 */
final class DatabaseCheck {

    private static final Logger log = LoggerFactory.getLogger(DatabaseCheck.class);

    static final Duration DEFAULT_ANSWER_WITHIN = Duration.ofMillis(1500);
    private static final int QUERY_NETWORK_TIMEOUT_MS = 3_000;

    /**
     * What the check found.
     *
     * @param up      the database answered {@code SELECT 1}
     * @param paused  the paused scopes, or null when unknown (database down, or the table unreadable)
     * @param problem why it is down ({@code SQLSTATE ...} or "no answer within ..."), null when up
     */
    record Result(boolean up, Set<String> paused, String problem) {
    }

    private final DataSource dataSource;
    private final OutboxControl control;
    private final Duration answerWithin;
    private CompletableFuture<Result> inFlight;
    /** The last answer, so that an outage is logged when it starts and ends, not at every probe. */
    private volatile boolean lastUp = true;

    DatabaseCheck(DataSource dataSource, OutboxControl control, Duration answerWithin) {
        this.dataSource = dataSource;
        this.control = control;
        this.answerWithin = answerWithin;
    }

    /** Checks the database, or joins the check in flight; returns within about {@code answerWithin}. */
    Result check() {
        CompletableFuture<Result> check;
        synchronized (this) {
            if (inFlight == null || inFlight.isDone()) {
                inFlight = CompletableFuture.supplyAsync(this::query,
                        task -> Thread.ofVirtual().name("mailroom-readiness").start(task));
            }
            check = inFlight;
        }
        Result result;
        try {
            result = check.get(answerWithin.toMillis(), TimeUnit.MILLISECONDS);
        } catch (TimeoutException e) {
            result = new Result(false, null, "no answer within " + Settings.format(answerWithin));
        } catch (ExecutionException e) {
            result = down(e.getCause());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            result = new Result(false, null, "interrupted");
        }
        if (result.up() != lastUp) {
            lastUp = result.up();
            if (result.up()) {
                log.info("Readiness: the database answers again");
            } else {
                log.warn("Readiness: the database does not answer ({}); /health/ready says DOWN", result.problem());
            }
        }
        return result;
    }

    private Result query() {
        try (Connection c = dataSource.getConnection()) {
            c.setNetworkTimeout(Runnable::run, QUERY_NETWORK_TIMEOUT_MS);
            try (Statement st = c.createStatement()) {
                st.execute("SELECT 1");
            }
            Set<String> paused;
            try {
                paused = control.pausedScopes(MailroomSchema.of(dataSource).dsl(c));
            } catch (RuntimeException e) {
                paused = null; // answered, but the switches could not be read: "unknown", as before
            }
            return new Result(true, paused, null);
        } catch (SQLException | RuntimeException e) {
            return down(e);
        }
    }

    private static Result down(Throwable e) {
        String state = SqlStates.sqlState(e);
        return new Result(false, null, state != null ? "SQLSTATE " + state : e.getClass().getSimpleName());
    }
}
