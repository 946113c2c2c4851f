package io.mailroom.outbox;

import org.jooq.DSLContext;
import org.jooq.InsertValuesStep9;
import org.jooq.JSONB;
import org.jooq.Field;
import org.jooq.Record4;
import org.jooq.Result;
import org.jooq.exception.DataAccessException;
import org.jooq.impl.DSL;

import java.time.Clock;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
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

    /**
     * Adds several messages in the caller's transaction, in one statement whatever their number:
     * the messages, their effects and the wake-up notification travel in one round trip (a
     * data-modifying CTE), which matters because every round trip lengthens the business
     * transaction that carries them.
     */
    public List<EnqueuedMessage> enqueueAll(DSLContext tx, List<NewMessage> messages) {
        if (messages.isEmpty()) {
            return List.of();
        }
        var m = OUTBOX_MESSAGE;
        InsertValuesStep9<?, String, String, String, String, String, JSONB, Instant, Integer, Instant> insert =
                DSL.insertInto(m, m.TOPIC, m.AGGREGATE_TYPE, m.AGGREGATE_ID, m.IDEMPOTENCY_KEY, m.ORDERING_KEY,
                        m.PAYLOAD, m.AVAILABLE_AT, m.MAX_ATTEMPTS, m.CREATED_AT);
        for (NewMessage msg : messages) {
            insert = insert.values(DSL.val(msg.topic()), DSL.val(msg.aggregateType()), DSL.val(msg.aggregateId()),
                    DSL.val(msg.idempotencyKey()), DSL.val(msg.orderingKey()), DSL.val(JSONB.valueOf(msg.payloadJson())),
                    msg.availableAt() == null ? clock.now() : DSL.val(msg.availableAt()),
                    DSL.val(msg.maxAttempts()), clock.now());
        }
        var inserted = DSL.name("inserted").as(insert.returning(m.ID, m.CREATED_AT, m.IDEMPOTENCY_KEY, m.TOPIC,
                m.AGGREGATE_TYPE, m.AGGREGATE_ID, m.MAX_ATTEMPTS));
        Field<Long> id = inserted.field(m.ID);
        Field<Instant> createdAt = inserted.field(m.CREATED_AT);
        Field<String> key = inserted.field(m.IDEMPOTENCY_KEY);
        var e = OUTBOX_EFFECT;
        var effects = DSL.name("effects").as(DSL.insertInto(e, e.IDEMPOTENCY_KEY, e.TOPIC, e.AGGREGATE_TYPE,
                        e.AGGREGATE_ID, e.MESSAGE_ID, e.MESSAGE_CREATED_AT, e.MAX_ATTEMPTS, e.CREATED_AT, e.UPDATED_AT)
                .select(DSL.select(key, inserted.field(m.TOPIC), inserted.field(m.AGGREGATE_TYPE),
                        inserted.field(m.AGGREGATE_ID), id, createdAt, inserted.field(m.MAX_ATTEMPTS), createdAt, createdAt)
                        .from(inserted))
                .returning(e.IDEMPOTENCY_KEY));
        // PostgreSQL delivers one notification per channel and payload per transaction, however often it is sent.
        Field<Object> wakeUp = notifyOnCommit
                ? DSL.function("pg_notify", Object.class, DSL.inline(CHANNEL), inserted.field(m.TOPIC))
                : DSL.inline((Object) null);
        Result<Record4<Long, Instant, String, Object>> rows;
        try {
            rows = tx.with(inserted, effects).select(id, createdAt, key, wakeUp.as("woken")).from(inserted).fetch();
        } catch (DataAccessException ex) {
            if (SqlStates.is(ex, SqlStates.INVALID_TEXT_REPRESENTATION)) {
                throw new IllegalArgumentException("payloadJson is not valid JSON: " + ex.getMessage(), ex);
            }
            if (SqlStates.is(ex, SqlStates.UNTRANSLATABLE_CHARACTER)) {
                throw new IllegalArgumentException("payloadJson contains a \\u0000 escape, which jsonb cannot hold: "
                        + ex.getMessage(), ex);
            }
            if (SqlStates.isUniqueViolation(ex, "outbox_effect_pkey")) {
                throw new DuplicateIdempotencyKeyException(duplicateIn(messages), ex);
            }
            throw ex;
        }
        Map<String, EnqueuedMessage> byKey = new HashMap<>();
        for (var row : rows) {
            byKey.put(row.value3(), new EnqueuedMessage(row.value1(), row.value2(), row.value3()));
        }
        List<EnqueuedMessage> result = new ArrayList<>(messages.size());
        for (NewMessage msg : messages) {
            result.add(byKey.get(msg.idempotencyKey()));
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
