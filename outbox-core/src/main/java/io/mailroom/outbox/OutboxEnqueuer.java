package io.mailroom.outbox;

import io.mailroom.db.MailroomSchema;
import io.mailroom.db.sql.HotSql;
import io.mailroom.db.sql.SqlClock;
import io.mailroom.db.sql.SqlStates;
import org.jooq.DSLContext;
import org.jooq.exception.DataAccessException;

import java.time.Clock;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;


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

    /**
     * Messages and their effects in one statement. The first {@code %s} is where the search terms'
     * insert goes ({@link #TERMS}, when a message has terms); the second is where the notification
     * goes: PostgreSQL delivers one per channel and payload per transaction, however often it is sent.
     */
    private static final String INSERT = """
            WITH inserted AS (
              INSERT INTO {schema}.outbox_message (topic, aggregate_type, aggregate_id, idempotency_key, ordering_key, payload,
                                          available_at, max_attempts, created_at)
              SELECT v.topic, v.aggregate_type, v.aggregate_id, v.idempotency_key, v.ordering_key, v.payload::jsonb,
                     coalesce(v.available_at, {now}), v.max_attempts, {now}
              FROM unnest(?::varchar[], ?::varchar[], ?::varchar[], ?::varchar[], ?::varchar[], ?::varchar[],
                          ?::varchar[]::timestamptz[], ?::int[])
                   AS v(topic, aggregate_type, aggregate_id, idempotency_key, ordering_key, payload, available_at,
                        max_attempts)
              RETURNING id, created_at, idempotency_key, topic, aggregate_type, aggregate_id, max_attempts
            ), effects AS (
              INSERT INTO {schema}.outbox_effect (idempotency_key, topic, aggregate_type, aggregate_id, message_id,
                                         message_created_at, max_attempts, created_at, updated_at)
              SELECT idempotency_key, topic, aggregate_type, aggregate_id, id, created_at, max_attempts, created_at,
                     created_at
              FROM inserted
            %s)
            SELECT id, created_at, idempotency_key%s FROM inserted""";

    /** The effects' search terms ({@code outbox_effect_term}, V18), a further step of {@link #INSERT}. */
    private static final String TERMS = """
            ), terms AS (
              INSERT INTO {schema}.outbox_effect_term (idempotency_key, term, created_at)
              SELECT i.idempotency_key, t.term, i.created_at
              FROM unnest(?::varchar[], ?::varchar[]) AS t(idempotency_key, term)
              JOIN inserted i ON i.idempotency_key = t.idempotency_key
            """;

    private final HotSql insert;
    private final HotSql insertWithTerms;
    private final MailroomSchema schema;

    /** Database time, wake-ups on, the default schema. */
    public OutboxEnqueuer() {
        this(null, true);
    }

    /** Database time, wake-ups on, Mailroom's tables in {@code schema}. */
    public OutboxEnqueuer(MailroomSchema schema) {
        this(null, true, schema);
    }

    /**
     * @param clock          null for database time
     * @param notifyOnCommit whether to {@code pg_notify} dispatchers (they poll anyway)
     */
    public OutboxEnqueuer(Clock clock, boolean notifyOnCommit) {
        this(clock, notifyOnCommit, MailroomSchema.DEFAULT);
    }

    /**
     * @param schema where Mailroom's tables are; the caller's context is joined to it, whatever its
     *               own settings and search path
     */
    public OutboxEnqueuer(Clock clock, boolean notifyOnCommit, MailroomSchema schema) {
        this.schema = java.util.Objects.requireNonNull(schema, "schema");
        String notify = notifyOnCommit ? ", pg_notify('" + CHANNEL + "', topic)" : "";
        this.insert = HotSql.of(INSERT.formatted("", notify), SqlClock.of(clock));
        this.insertWithTerms = HotSql.of(INSERT.formatted(TERMS, notify), SqlClock.of(clock));
    }

    /** Where this enqueuer writes Mailroom's tables (for an API that writes beside the message: email-api's attachments). */
    public MailroomSchema schema() {
        return schema;
    }

    /** Adds one message in the caller's transaction. */
    public EnqueuedMessage enqueue(DSLContext tx, NewMessage message) {
        return enqueueAll(tx, List.of(message)).getFirst();
    }

    /**
     * Adds several messages in the caller's transaction, in one statement whatever their number:
     * the messages, their effects and the wake-up notification travel in one round trip (a
     * data-modifying CTE over arrays), because every round trip and every client-side rendering
     * lengthens the business transaction that carries them.
     */
    public List<EnqueuedMessage> enqueueAll(DSLContext tx, List<NewMessage> messages) {
        if (messages.isEmpty()) {
            return List.of();
        }
        int n = messages.size();
        String[] topics = new String[n];
        String[] aggregateTypes = new String[n];
        String[] aggregateIds = new String[n];
        String[] keys = new String[n];
        String[] orderingKeys = new String[n];
        String[] payloads = new String[n];
        String[] availableAts = new String[n];
        Integer[] maxAttempts = new Integer[n];
        List<String> termKeys = new ArrayList<>();
        List<String> terms = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            NewMessage msg = messages.get(i);
            topics[i] = msg.topic();
            aggregateTypes[i] = msg.aggregateType();
            aggregateIds[i] = msg.aggregateId();
            keys[i] = msg.idempotencyKey();
            orderingKeys[i] = msg.orderingKey();
            payloads[i] = msg.payloadJson();
            availableAts[i] = msg.availableAt() == null ? null : msg.availableAt().toString();
            maxAttempts[i] = msg.maxAttempts();
            for (String term : msg.searchTerms()) {
                termKeys.add(msg.idempotencyKey());
                terms.add(term);
            }
        }
        List<EnqueuedMessage> rows;
        try {
            // messages without search terms (the queue's own, a business's generic ones) skip that insert
            rows = terms.isEmpty()
                    ? insert.query(schema.join(tx), rs -> new EnqueuedMessage(rs.getLong(1), HotSql.instant(rs, 2), rs.getString(3)),
                    topics, aggregateTypes, aggregateIds, keys, orderingKeys, payloads, availableAts, maxAttempts)
                    : insertWithTerms.query(schema.join(tx), rs -> new EnqueuedMessage(rs.getLong(1), HotSql.instant(rs, 2),
                    rs.getString(3)), topics, aggregateTypes, aggregateIds, keys, orderingKeys, payloads, availableAts, maxAttempts,
                    termKeys.toArray(String[]::new), terms.toArray(String[]::new));
        } catch (DataAccessException ex) {
            if (SqlStates.is(ex, SqlStates.INVALID_TEXT_REPRESENTATION)) {
                throw new IllegalArgumentException("payloadJson is not valid JSON: " + ex.getMessage(), ex);
            }
            if (SqlStates.is(ex, SqlStates.UNTRANSLATABLE_CHARACTER)) {
                throw new IllegalArgumentException("payloadJson contains a \\u0000 escape, which jsonb cannot hold: "
                        + ex.getMessage(), ex);
            }
            // the effect's key is taken: the effect's own row or, whichever the statement wrote first, one of its terms
            if (SqlStates.isUniqueViolation(ex, "outbox_effect_pkey") || SqlStates.isUniqueViolation(ex, "outbox_effect_term_pkey")) {
                throw new DuplicateIdempotencyKeyException(duplicateIn(messages), ex);
            }
            throw ex;
        }
        Map<String, EnqueuedMessage> byKey = new HashMap<>();
        rows.forEach(row -> byKey.put(row.idempotencyKey(), row));
        List<EnqueuedMessage> result = new ArrayList<>(n);
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
