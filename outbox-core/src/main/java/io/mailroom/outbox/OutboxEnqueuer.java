package io.mailroom.outbox;

import org.jooq.DSLContext;
import org.jooq.InsertValuesStep9;
import org.jooq.JSONB;
import org.jooq.Record3;
import org.jooq.exception.DataAccessException;
import org.jooq.impl.DSL;

import java.time.Clock;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;

import static io.mailroom.db.jooq.Tables.OUTBOX_EFFECT;
import static io.mailroom.db.jooq.Tables.OUTBOX_MESSAGE;

/**
 * The API business code calls: adds outbox messages with the caller's {@link DSLContext}, inside the
 * caller's transaction. It never opens a connection or a transaction of its own, so a rollback of
 * the business transaction removes the message too, and no email is ever sent for it.
 *
 * <p>Each message also gets its {@code outbox_effect} row, whose primary key makes the idempotency
 * key unique: enqueueing the same business effect twice is <b>rejected</b> with
 * {@link DuplicateIdempotencyKeyException} (SQLSTATE 23505 on {@code outbox_effect_pkey}).
 *
 * <p>Dispatchers are woken by {@code pg_notify} on {@link #CHANNEL}, which PostgreSQL delivers only
 * when the transaction commits.
 */
public final class OutboxEnqueuer {

    /** LISTEN/NOTIFY channel; the payload is the topic. */
    public static final String CHANNEL = "mailroom_outbox";

    private final SqlClock clock;
    private final boolean notifyOnCommit;

    /** Database time, wake-ups on. */
    public OutboxEnqueuer() {
        this(null, true);
    }

    /**
     * @param clock          null for database time
     * @param notifyOnCommit whether to {@code pg_notify} dispatchers (they poll anyway)
     */
    public OutboxEnqueuer(Clock clock, boolean notifyOnCommit) {
        this.clock = SqlClock.of(clock);
        this.notifyOnCommit = notifyOnCommit;
    }

    /** Adds one message in the caller's transaction. */
    public EnqueuedMessage enqueue(DSLContext tx, NewMessage message) {
        return enqueueAll(tx, List.of(message)).getFirst();
    }

    /** Adds several messages in the caller's transaction, in two statements whatever their number. */
    public List<EnqueuedMessage> enqueueAll(DSLContext tx, List<NewMessage> messages) {
        if (messages.isEmpty()) {
            return List.of();
        }
        var m = OUTBOX_MESSAGE;
        InsertValuesStep9<?, String, String, String, String, String, JSONB, Instant, Integer, Instant> insert =
                tx.insertInto(m, m.TOPIC, m.AGGREGATE_TYPE, m.AGGREGATE_ID, m.IDEMPOTENCY_KEY, m.ORDERING_KEY,
                        m.PAYLOAD, m.AVAILABLE_AT, m.MAX_ATTEMPTS, m.CREATED_AT);
        for (NewMessage msg : messages) {
            insert = insert.values(DSL.val(msg.topic()), DSL.val(msg.aggregateType()), DSL.val(msg.aggregateId()),
                    DSL.val(msg.idempotencyKey()), DSL.val(msg.orderingKey()), DSL.val(JSONB.valueOf(msg.payloadJson())),
                    msg.availableAt() == null ? clock.now() : DSL.val(msg.availableAt()),
                    DSL.val(msg.maxAttempts()), clock.now());
        }
        List<Record3<Long, Instant, String>> rows;
        try {
            rows = insert.returningResult(m.ID, m.CREATED_AT, m.IDEMPOTENCY_KEY).fetch();
        } catch (DataAccessException e) {
            if (SqlStates.is(e, SqlStates.INVALID_TEXT_REPRESENTATION)) {
                throw new IllegalArgumentException("payloadJson is not valid JSON: " + e.getMessage(), e);
            }
            if (SqlStates.is(e, SqlStates.UNTRANSLATABLE_CHARACTER)) {
                throw new IllegalArgumentException("payloadJson contains a \\u0000 escape, which jsonb cannot hold: "
                        + e.getMessage(), e);
            }
            throw e;
        }

        var e = OUTBOX_EFFECT;
        var effects = tx.insertInto(e, e.IDEMPOTENCY_KEY, e.TOPIC, e.AGGREGATE_TYPE, e.AGGREGATE_ID, e.MESSAGE_ID,
                e.MESSAGE_CREATED_AT, e.MAX_ATTEMPTS, e.CREATED_AT, e.UPDATED_AT);
        List<EnqueuedMessage> result = new ArrayList<>(messages.size());
        for (int i = 0; i < messages.size(); i++) {
            NewMessage msg = messages.get(i);
            var row = rows.get(i);
            effects = effects.values(msg.idempotencyKey(), msg.topic(), msg.aggregateType(), msg.aggregateId(),
                    row.value1(), row.value2(), msg.maxAttempts(), row.value2(), row.value2());
            result.add(new EnqueuedMessage(row.value1(), row.value2(), row.value3()));
        }
        try {
            effects.execute();
        } catch (DataAccessException ex) {
            if (SqlStates.isUniqueViolation(ex, "outbox_effect_pkey")) {
                throw new DuplicateIdempotencyKeyException(duplicateIn(messages), ex);
            }
            throw ex;
        }

        if (notifyOnCommit) {
            Set<String> topics = new LinkedHashSet<>();
            messages.forEach(msg -> topics.add(msg.topic()));
            for (String topic : topics) {
                tx.select(DSL.function("pg_notify", Object.class, DSL.val(CHANNEL), DSL.val(topic))).fetch();
            }
        }
        return result;
    }

    private static String duplicateIn(List<NewMessage> messages) {
        // The server names the constraint, not the row; with one message the key is known exactly.
        if (messages.size() == 1) {
            return messages.getFirst().idempotencyKey();
        }
        Set<String> seen = new LinkedHashSet<>();
        for (NewMessage msg : messages) {
            if (!seen.add(msg.idempotencyKey())) {
                return msg.idempotencyKey();
            }
        }
        return String.join(",", seen);
    }
}
