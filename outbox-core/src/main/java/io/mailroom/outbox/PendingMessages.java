package io.mailroom.outbox;

import io.mailroom.db.MailroomSchema;
import io.mailroom.db.sql.SqlClock;
import org.jooq.DSLContext;
import org.jooq.Record;
import org.jooq.Record2;
import org.jooq.impl.DSL;

import java.time.Clock;
import java.time.Instant;
import java.util.Objects;

import static io.mailroom.db.jooq.Tables.OUTBOX_EFFECT;
import static io.mailroom.db.jooq.Tables.OUTBOX_MESSAGE;

/**
 * Business code's way to change its mind about a message it enqueued, until a dispatcher claims it:
 * {@link #cancel} (it will never be handled) and {@link #reschedule} (it becomes claimable at another
 * time). Like {@link OutboxEnqueuer} it works in the caller's transaction with the caller's
 * {@link DSLContext}, so the change commits or rolls back with the business change that caused it.
 *
 * <p>Fencing: the queue row is locked ({@code FOR NO KEY UPDATE}, waiting for a claim in progress
 * to commit) and changed only while it is {@code pending}. The claim takes rows with
 * {@code SKIP LOCKED}, so a claim racing with a cancel has exactly one winner: either the claim
 * committed first, and the cancel, reading the row again after the lock, answers
 * {@link PendingChange.Outcome#TOO_LATE} with status running; or the cancel holds the lock, the claim
 * skips the row, and once the cancel commits the row is no longer pending. At REPEATABLE READ or
 * SERIALIZABLE a row claimed after the caller's snapshot raises SQLSTATE 40001 instead, as any
 * concurrent update does there.
 */
public final class PendingMessages {

    private final SqlClock clock;
    private final MailroomSchema schema;

    /** Database time, the default schema. */
    public PendingMessages() {
        this(null, MailroomSchema.DEFAULT);
    }

    /**
     * @param clock  null for database time
     * @param schema where Mailroom's tables are
     */
    public PendingMessages(Clock clock, MailroomSchema schema) {
        this.clock = SqlClock.of(clock);
        this.schema = Objects.requireNonNull(schema, "schema");
    }

    /** Cancels the pending message of {@code idempotencyKey} in {@code tx}'s transaction: it will never be handled. */
    public PendingChange cancel(DSLContext tx, String idempotencyKey) {
        return change(tx, idempotencyKey, null);
    }

    /**
     * Makes the pending message of {@code idempotencyKey} claimable from {@code at} (a time in the past
     * means now), in {@code tx}'s transaction. Whether {@code at} is too far ahead is the caller's
     * rule (EmailOutbox bounds it); an attempt already made and its count are kept.
     */
    public PendingChange reschedule(DSLContext tx, String idempotencyKey, Instant at) {
        return change(tx, idempotencyKey, Objects.requireNonNull(at, "at"));
    }

    private PendingChange change(DSLContext caller, String key, Instant at) {
        if (key == null || key.isBlank() || key.length() > NewMessage.MAX_KEY_LENGTH) {
            throw new IllegalArgumentException("idempotencyKey must be 1.." + NewMessage.MAX_KEY_LENGTH + " characters");
        }
        DSLContext tx = schema.join(caller);
        Record2<Long, Instant> effect = tx.select(OUTBOX_EFFECT.MESSAGE_ID, OUTBOX_EFFECT.MESSAGE_CREATED_AT)
                .from(OUTBOX_EFFECT).where(OUTBOX_EFFECT.IDEMPOTENCY_KEY.eq(key)).fetchOne();
        if (effect == null) {
            return new PendingChange(PendingChange.Outcome.NOT_FOUND, key, null, null);
        }
        var m = OUTBOX_MESSAGE;
        var thisRow = m.ID.eq(effect.value1()).and(m.CREATED_AT.eq(effect.value2()));
        // waits for a claim in progress; at READ COMMITTED the row is then read as that claim left it
        Record row = tx.select(m.STATUS).from(m).where(thisRow).forNoKeyUpdate().fetchOne();
        if (row == null) {
            return new PendingChange(PendingChange.Outcome.NOT_FOUND, key, null, null);
        }
        MessageStatus current = MessageStatus.fromSql(row.get(m.STATUS));
        if (current != MessageStatus.PENDING) {
            return new PendingChange(PendingChange.Outcome.TOO_LATE, key, current, null);
        }
        if (at == null) {
            tx.update(m)
                    .set(m.STATUS, MessageStatus.CANCELLED.sql())
                    .set(m.FINISHED_AT, clock.now())
                    .set(m.WAITING_FOR, (String) null)
                    .set(m.UPDATED_AT, clock.now())
                    .where(thisRow).execute();
            tx.update(OUTBOX_EFFECT)
                    .set(OUTBOX_EFFECT.STATUS, MessageStatus.CANCELLED.sql())
                    .set(OUTBOX_EFFECT.FINISHED_AT, clock.now())
                    .set(OUTBOX_EFFECT.UPDATED_AT, clock.now())
                    .where(OUTBOX_EFFECT.IDEMPOTENCY_KEY.eq(key)).execute();
            return new PendingChange(PendingChange.Outcome.CANCELLED, key, MessageStatus.CANCELLED, null);
        }
        Instant sendAt = tx.update(m)
                .set(m.AVAILABLE_AT, DSL.greatest(DSL.val(at), clock.now()))
                // the caller's time wins over a breaker's recovery
                .set(m.WAITING_FOR, (String) null)
                .set(m.UPDATED_AT, clock.now())
                .where(thisRow)
                .returning(m.AVAILABLE_AT).fetchOne(m.AVAILABLE_AT);
        tx.update(OUTBOX_EFFECT).set(OUTBOX_EFFECT.UPDATED_AT, clock.now())
                .where(OUTBOX_EFFECT.IDEMPOTENCY_KEY.eq(key)).execute();
        return new PendingChange(PendingChange.Outcome.RESCHEDULED, key, MessageStatus.PENDING, sendAt);
    }
}
