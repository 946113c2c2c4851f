package io.mailroom.outbox.admin;

import io.mailroom.outbox.DispatcherSessions;
import io.mailroom.outbox.MessageStatus;
import io.mailroom.outbox.NewMessage;
import io.mailroom.outbox.SessionSettings;
import io.mailroom.outbox.runtime.Outcome;
import io.mailroom.db.sql.SqlClock;
import io.mailroom.db.sql.SqlStates;
import org.jooq.DSLContext;
import org.jooq.Record2;
import org.jooq.Record;
import org.jooq.impl.DSL;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import javax.sql.DataSource;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.Objects;
import java.util.Set;

import static io.mailroom.db.jooq.Tables.OUTBOX_EFFECT;
import static io.mailroom.db.jooq.Tables.OUTBOX_MESSAGE;

/**
 * Actions a person asks for and waits on: retry now, cancel, reschedule, confirm done, close. Each locks
 * the one row with {@code FOR NO KEY UPDATE NOWAIT}: if a worker holds it at that moment, the answer
 * is {@link Result.Busy} at once (SQLSTATE 55P03), never a hang. The failed transaction is rolled
 * back before anything else happens; the lock is tried again a bounded number of times with backoff.
 *
 * <p>A running message is not locked between its claim and its completion, so an action on it gets
 * {@link Result.NotAllowed}: the worker's lease decides, not the person.
 */
public final class MessageActions {

    private static final Logger log = LoggerFactory.getLogger(MessageActions.class);

    public static final int DEFAULT_BUSY_RETRIES = 2;
    public static final Duration DEFAULT_BUSY_BACKOFF = Duration.ofMillis(50);

    /** What an action did. */
    public sealed interface Result {
        /** Applied: the message is now in {@code status}. */
        record Applied(MessageStatus status) implements Result {
        }

        /** A worker holds the row right now; try again shortly. */
        record Busy() implements Result {
        }

        /** No effect with that key, or its queue row is gone (retention). */
        record NotFound(String why) implements Result {
        }

        /** The action does not fit the message's current state. */
        record NotAllowed(MessageStatus current, String why) implements Result {
        }
    }

    private final DispatcherSessions sessions;
    private final SqlClock clock;
    private final int busyRetries;
    private final Duration busyBackoff;

    public MessageActions(DataSource dataSource, Clock clock, int busyRetries, Duration busyBackoff) {
        this(dataSource, clock, busyRetries, busyBackoff, SessionSettings.SESSION);
    }

    /** @param settings {@link SessionSettings#TRANSACTION} behind a transaction-mode pooler */
    public MessageActions(DataSource dataSource, Clock clock, int busyRetries, Duration busyBackoff, SessionSettings settings) {
        if (busyRetries < 0 || busyRetries > 10) {
            throw new IllegalArgumentException("busyRetries must be between 0 and 10, got " + busyRetries);
        }
        Objects.requireNonNull(busyBackoff, "busyBackoff");
        this.sessions = new DispatcherSessions(dataSource, Duration.ofSeconds(5), Duration.ofSeconds(10), settings);
        this.clock = SqlClock.of(clock);
        this.busyRetries = busyRetries;
        this.busyBackoff = busyBackoff;
    }

    public MessageActions(DataSource dataSource) {
        this(dataSource, null, DEFAULT_BUSY_RETRIES, DEFAULT_BUSY_BACKOFF);
    }

    /** A failed (or waiting) message becomes pending and available now, with one more attempt allowed. */
    public Result retryNow(String idempotencyKey, Outcome.TransactionalStep alsoInTransaction) {
        return retryNow(idempotencyKey, null, alsoInTransaction);
    }

    /** {@link #retryNow(String, Outcome.TransactionalStep)}, refused by {@code precondition} under the row lock. */
    public Result retryNow(String idempotencyKey, Precondition precondition, Outcome.TransactionalStep alsoInTransaction) {
        return act(idempotencyKey, precondition, Set.of(MessageStatus.FAILED, MessageStatus.PENDING), "only a failed or pending message can be retried now",
                (tx, m) -> tx.update(OUTBOX_MESSAGE)
                        .set(OUTBOX_MESSAGE.STATUS, MessageStatus.PENDING.sql())
                        .set(OUTBOX_MESSAGE.AVAILABLE_AT, clock.now())
                        .set(OUTBOX_MESSAGE.MAX_ATTEMPTS, DSL.greatest(OUTBOX_MESSAGE.MAX_ATTEMPTS, OUTBOX_MESSAGE.ATTEMPTS.plus(1)))
                        .set(OUTBOX_MESSAGE.FINISHED_AT, (Instant) null)
                        .set(OUTBOX_MESSAGE.WAITING_FOR, (String) null)
                        .set(OUTBOX_MESSAGE.UPDATED_AT, clock.now()),
                MessageStatus.PENDING, alsoInTransaction);
    }

    /** A pending message is cancelled: it will not be sent. */
    public Result cancel(String idempotencyKey, Outcome.TransactionalStep alsoInTransaction) {
        return act(idempotencyKey, null, Set.of(MessageStatus.PENDING), "only a pending message can be cancelled",
                (tx, m) -> tx.update(OUTBOX_MESSAGE)
                        .set(OUTBOX_MESSAGE.STATUS, MessageStatus.CANCELLED.sql())
                        .set(OUTBOX_MESSAGE.FINISHED_AT, clock.now())
                        .set(OUTBOX_MESSAGE.WAITING_FOR, (String) null)
                        .set(OUTBOX_MESSAGE.UPDATED_AT, clock.now()),
                MessageStatus.CANCELLED, alsoInTransaction);
    }

    /** A pending message waits until {@code at}; a time already past means now. */
    public Result reschedule(String idempotencyKey, Instant at, Outcome.TransactionalStep alsoInTransaction) {
        Objects.requireNonNull(at, "at");
        return act(idempotencyKey, null, Set.of(MessageStatus.PENDING), "only a pending message can be rescheduled",
                (tx, m) -> tx.update(OUTBOX_MESSAGE)
                        .set(OUTBOX_MESSAGE.AVAILABLE_AT, DSL.greatest(DSL.val(at), clock.now()))
                        // a person's time wins over a breaker's recovery
                        .set(OUTBOX_MESSAGE.WAITING_FOR, (String) null)
                        .set(OUTBOX_MESSAGE.UPDATED_AT, clock.now()),
                MessageStatus.PENDING, alsoInTransaction);
    }

    /** A message in review is confirmed done by a person (e.g. the email did arrive). */
    public Result confirmDone(String idempotencyKey, Outcome.TransactionalStep alsoInTransaction) {
        return act(idempotencyKey, null, Set.of(MessageStatus.REVIEW), "only a message in review can be confirmed",
                (tx, m) -> tx.update(OUTBOX_MESSAGE)
                        .set(OUTBOX_MESSAGE.STATUS, MessageStatus.DONE.sql())
                        .set(OUTBOX_MESSAGE.FINISHED_AT, clock.now())
                        .set(OUTBOX_MESSAGE.UPDATED_AT, clock.now()),
                MessageStatus.DONE, alsoInTransaction);
    }

    /** A message in review is closed as failed by a person (e.g. it was resent under a new key). */
    public Result closeReview(String idempotencyKey, Outcome.TransactionalStep alsoInTransaction) {
        return closeReview(idempotencyKey, null, alsoInTransaction);
    }

    /** {@link #closeReview(String, Outcome.TransactionalStep)}, refused by {@code precondition} under the row lock. */
    public Result closeReview(String idempotencyKey, Precondition precondition, Outcome.TransactionalStep alsoInTransaction) {
        return act(idempotencyKey, precondition, Set.of(MessageStatus.REVIEW), "only a message in review can be closed",
                (tx, m) -> tx.update(OUTBOX_MESSAGE)
                        .set(OUTBOX_MESSAGE.STATUS, MessageStatus.FAILED.sql())
                        .set(OUTBOX_MESSAGE.FINISHED_AT, clock.now())
                        .set(OUTBOX_MESSAGE.UPDATED_AT, clock.now()),
                MessageStatus.FAILED, alsoInTransaction);
    }

    /**
     * A failed message, or one in review, is closed by a person: it will not be sent (again). Nothing
     * else can close it: a pending one is cancelled instead, and a running one belongs to its worker.
     * {@code alsoInTransaction} learns the status the message was closed from (e.g. for the audit row).
     */
    public Result close(String idempotencyKey, ClosingStep alsoInTransaction) {
        return close(idempotencyKey, null, alsoInTransaction);
    }

    /** {@link #close(String, ClosingStep)}, refused by {@code precondition} under the row lock. */
    public Result close(String idempotencyKey, Precondition precondition, ClosingStep alsoInTransaction) {
        Objects.requireNonNull(alsoInTransaction, "alsoInTransaction");
        MessageStatus[] from = new MessageStatus[1];
        return act(idempotencyKey, precondition, Set.of(MessageStatus.FAILED, MessageStatus.REVIEW),
                "only a failed message or one in review can be closed",
                (tx, m) -> {
                    from[0] = MessageStatus.fromSql(m.get(OUTBOX_MESSAGE.STATUS));
                    return tx.update(OUTBOX_MESSAGE)
                            .set(OUTBOX_MESSAGE.STATUS, MessageStatus.CLOSED.sql())
                            .set(OUTBOX_MESSAGE.FINISHED_AT, clock.now())
                            .set(OUTBOX_MESSAGE.UPDATED_AT, clock.now());
                },
                MessageStatus.CLOSED, tx -> alsoInTransaction.run(tx, from[0]));
    }

    /** Work in the transaction of {@link #close}, after the change; {@code from} is the status the message had. */
    @FunctionalInterface
    public interface ClosingStep {
        void run(DSLContext tx, MessageStatus from);
    }

    /**
     * A check in the action's transaction after the row lock and the status check, before anything
     * changes (e.g. "does this message still match the bulk action's filter"): it refuses by throwing,
     * which rolls the transaction back and reaches the caller.
     */
    @FunctionalInterface
    public interface Precondition {
        void check(DSLContext tx, MessageStatus current);
    }

    @FunctionalInterface
    private interface Change {
        org.jooq.UpdateSetMoreStep<?> apply(DSLContext tx, Record row);
    }

    private Result act(String key, Precondition precondition, Set<MessageStatus> allowed, String why, Change change,
                       MessageStatus after, Outcome.TransactionalStep step) {
        if (key == null || key.isBlank() || key.length() > NewMessage.MAX_KEY_LENGTH) {
            throw new IllegalArgumentException("idempotency key must be 1.." + NewMessage.MAX_KEY_LENGTH + " characters");
        }
        for (int attempt = 0; ; attempt++) {
            try {
                return sessions.inTransaction(tx -> apply(tx, key, precondition, allowed, why, change, after, step));
            } catch (RuntimeException e) {
                if (!SqlStates.is(e, SqlStates.LOCK_NOT_AVAILABLE)) {
                    throw e;
                }
                // the transaction was rolled back by inTransaction before we get here
                if (attempt >= busyRetries) {
                    log.debug("Message {} is busy after {} tries", key, attempt + 1);
                    return new Result.Busy();
                }
                try {
                    Thread.sleep(busyBackoff.toMillis() << attempt);
                } catch (InterruptedException ie) {
                    Thread.currentThread().interrupt();
                    return new Result.Busy();
                }
            }
        }
    }

    private Result apply(DSLContext tx, String key, Precondition precondition, Set<MessageStatus> allowed, String why,
                         Change change, MessageStatus after, Outcome.TransactionalStep step) {
        Record2<Long, Instant> effect = tx.select(OUTBOX_EFFECT.MESSAGE_ID, OUTBOX_EFFECT.MESSAGE_CREATED_AT)
                .from(OUTBOX_EFFECT).where(OUTBOX_EFFECT.IDEMPOTENCY_KEY.eq(key)).fetchOne();
        if (effect == null) {
            return new Result.NotFound("no message with idempotency key " + key);
        }
        var m = OUTBOX_MESSAGE;
        Record row = tx.select(m.ID, m.CREATED_AT, m.STATUS, m.ATTEMPTS, m.MAX_ATTEMPTS)
                .from(m)
                .where(m.ID.eq(effect.value1()).and(m.CREATED_AT.eq(effect.value2())))
                .forNoKeyUpdate().noWait()
                .fetchOne();
        if (row == null) {
            return new Result.NotFound("the queue row of " + key + " is gone (finished and removed by retention)");
        }
        MessageStatus current = MessageStatus.fromSql(row.get(m.STATUS));
        if (!allowed.contains(current)) {
            return new Result.NotAllowed(current, why + "; it is " + current.sql());
        }
        if (precondition != null) {
            precondition.check(tx, current);
        }
        change.apply(tx, row).where(m.ID.eq(row.get(m.ID)).and(m.CREATED_AT.eq(row.get(m.CREATED_AT)))).execute();
        tx.update(OUTBOX_EFFECT)
                .set(OUTBOX_EFFECT.STATUS, after.sql())
                .set(OUTBOX_EFFECT.UPDATED_AT, clock.now())
                .set(OUTBOX_EFFECT.FINISHED_AT, after.isFinished() ? clock.now() : DSL.val((Instant) null))
                .where(OUTBOX_EFFECT.IDEMPOTENCY_KEY.eq(key))
                .execute();
        if (step != null) {
            step.run(tx);
        }
        return new Result.Applied(after);
    }
}
