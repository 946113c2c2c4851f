package io.mailroom.outbox.admin;

import io.mailroom.db.jooq.tables.OutboxEffect;
import io.mailroom.db.jooq.tables.OutboxMessage;
import io.mailroom.outbox.MessageStatus;
import org.jooq.Condition;
import org.jooq.DSLContext;
import org.jooq.Field;
import org.jooq.Record;
import org.jooq.ResultQuery;
import org.jooq.Row2;
import org.jooq.SelectField;
import org.jooq.SelectOnConditionStep;
import org.jooq.impl.DSL;
import org.jooq.impl.SQLDataType;

import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;

import static io.mailroom.db.jooq.Tables.OUTBOX_EFFECT;
import static io.mailroom.db.jooq.Tables.OUTBOX_MESSAGE;

/**
 * Reads of the effect history ({@code outbox_effect}, one row per idempotency key, kept after the hot
 * queue row is gone) with the live queue row when there still is one, for the modules that show or act
 * on past work (support). Every list is bounded by the caller's limit and served by an index:
 * by aggregate through {@code outbox_effect_aggregate_idx}, by status as {@link #statusQuery} says
 * (no index of the effect mentions its status: an outcome is written in place, V29); the queue row is
 * joined by its primary key only.
 *
 * <p>All methods run in the caller's transaction; none commits.
 */
public final class EffectHistory {

    private static final OutboxEffect E = OUTBOX_EFFECT;
    private static final OutboxMessage M = OUTBOX_MESSAGE;

    private EffectHistory() {
    }

    /**
     * The hot queue row of an effect, while retention keeps it.
     *
     * @param payload the message's payload as JSON text
     */
    public record Live(String status, int attempts, int maxAttempts, String lastError, Instant availableAt,
                       String payload) {
    }

    /** One effect; {@code live} is null when the queue row is gone (retention) or belongs to another message. */
    public record Effect(String key, String topic, String aggregateType, String aggregateId, String status,
                         int attempts, int maxAttempts, String lastError, Instant createdAt, Instant updatedAt,
                         Instant finishedAt, String resendOf, long messageId, Instant messageCreatedAt, Live live) {
    }

    /**
     * The statuses whose effects the exception index ({@code outbox_effect_exception_idx}, on the
     * generated {@code exception_status} and {@code exception_at}) holds: the emails that did not go
     * through. The same list as V29's generated columns.
     */
    public static final Set<String> EXCEPTION_STATUSES = Set.of(MessageStatus.FAILED.sql(), MessageStatus.REVIEW.sql(),
            MessageStatus.CANCELLED.sql(), MessageStatus.CLOSED.sql());

    /** The status of sent effects, whose pages are ordered by the time they were queued. */
    private static final String SENT = MessageStatus.DONE.sql();

    /** The time a page of {@code status} is ordered, bounded and continued by (see {@link #statusQuery}). */
    public enum PageTime {
        /** When the effect last changed ({@code updated_at}): the exceptions and the waiting ones. */
        CHANGED,
        /** When it was queued ({@code created_at}): the sent ones. */
        QUEUED
    }

    /** The time pages of {@code status} are ordered by. */
    public static PageTime pageTime(String status) {
        return SENT.equals(status) ? PageTime.QUEUED : PageTime.CHANGED;
    }

    /**
     * A page of effects of one status, newest first by its {@link #pageTime}, keyset-paginated on
     * (that time, key).
     *
     * @param topicPrefix only topics starting with it (null: every topic)
     * @param since       page time at or after (null: no bound)
     * @param until       page time before (null: no bound)
     * @param olderThan   created at least this long ago by the database's clock (null: no bound)
     * @param afterTime   with {@code afterKey}: the page time of the last row of the previous page (null: first page)
     */
    public record StatusPage(String status, String topicPrefix, Instant since, Instant until, Duration olderThan,
                             Instant afterTime, String afterKey, int limit) {
        public StatusPage {
            Objects.requireNonNull(status, "status");
            if ((afterTime == null) != (afterKey == null)) {
                throw new IllegalArgumentException("a page cursor needs both its time and key");
            }
            if (limit < 1) {
                throw new IllegalArgumentException("limit must be at least 1, got " + limit);
            }
        }
    }

    static final List<SelectField<?>> COLUMNS = List.of(E.IDEMPOTENCY_KEY, E.TOPIC, E.AGGREGATE_TYPE,
            E.AGGREGATE_ID, E.STATUS, E.ATTEMPTS, E.MAX_ATTEMPTS, E.LAST_ERROR, E.CREATED_AT, E.UPDATED_AT, E.FINISHED_AT,
            E.RESEND_OF, E.MESSAGE_ID, E.MESSAGE_CREATED_AT,
            M.ID, M.STATUS, M.ATTEMPTS, M.MAX_ATTEMPTS, M.LAST_ERROR, M.AVAILABLE_AT, M.PAYLOAD);

    private static SelectOnConditionStep<Record> effects(DSLContext tx) {
        return tx.select(COLUMNS).from(E)
                .leftJoin(M).on(M.ID.eq(E.MESSAGE_ID).and(M.CREATED_AT.eq(E.MESSAGE_CREATED_AT)));
    }

    static Effect effect(Record r) {
        Live live = r.get(M.ID) == null ? null : new Live(r.get(M.STATUS), r.get(M.ATTEMPTS), r.get(M.MAX_ATTEMPTS),
                r.get(M.LAST_ERROR), r.get(M.AVAILABLE_AT), r.get(M.PAYLOAD) == null ? null : r.get(M.PAYLOAD).data());
        return new Effect(r.get(E.IDEMPOTENCY_KEY), r.get(E.TOPIC), r.get(E.AGGREGATE_TYPE), r.get(E.AGGREGATE_ID),
                r.get(E.STATUS), r.get(E.ATTEMPTS), r.get(E.MAX_ATTEMPTS), r.get(E.LAST_ERROR), r.get(E.CREATED_AT),
                r.get(E.UPDATED_AT), r.get(E.FINISHED_AT), r.get(E.RESEND_OF), r.get(E.MESSAGE_ID),
                r.get(E.MESSAGE_CREATED_AT), live);
    }

    /**
     * The effects of one aggregate ({@code order 102}, {@code user 42}) whose topic starts with
     * {@code topicPrefix} (null: any), oldest first. Unexecuted, so a test can EXPLAIN exactly what runs.
     */
    public static ResultQuery<Record> aggregateQuery(DSLContext tx, String aggregateType, String aggregateId,
                                                     String topicPrefix, int limit) {
        List<Condition> where = new ArrayList<>(List.of(E.AGGREGATE_TYPE.eq(aggregateType), E.AGGREGATE_ID.eq(aggregateId)));
        if (topicPrefix != null) {
            where.add(E.TOPIC.startsWith(topicPrefix));
        }
        return effects(tx).where(where).orderBy(E.CREATED_AT, E.IDEMPOTENCY_KEY).limit(limit);
    }

    public static List<Effect> ofAggregate(DSLContext tx, String aggregateType, String aggregateId, String topicPrefix,
                                           int limit) {
        return aggregateQuery(tx, aggregateType, aggregateId, topicPrefix, limit).fetch(EffectHistory::effect);
    }

    /**
     * The distinct aggregate types, alphabetically, at most {@code limit}: a loose index scan of the
     * aggregate index (one index probe per type), so it stays cheap at any number of effects.
     */
    public static List<String> aggregateTypes(DSLContext tx, int limit) {
        return tx.fetch(io.mailroom.db.MailroomSchema.of(tx).sql("""
                WITH RECURSIVE t(type) AS (
                  (SELECT aggregate_type FROM {schema}.outbox_effect ORDER BY aggregate_type LIMIT 1)
                  UNION ALL
                  SELECT (SELECT e.aggregate_type FROM {schema}.outbox_effect e WHERE e.aggregate_type > t.type
                          ORDER BY e.aggregate_type LIMIT 1)
                  FROM t WHERE t.type IS NOT NULL
                )
                SELECT type FROM t WHERE type IS NOT NULL LIMIT ?"""), limit).getValues(0, String.class);
    }

    /**
     * The query of {@link #byStatus}, unexecuted (for EXPLAIN). How each status is served, since no
     * index of the effect mentions its status (V29):
     * <ul>
     *   <li>failed, review, cancelled, closed ({@link #EXCEPTION_STATUSES}): the exception index, newest
     *       change first, as rare as those emails are;</li>
     *   <li>pending: the queue's partial indexes of its pending and running rows (an effect waits only
     *       while its queue row does), newest change first, sorting as many as wait;</li>
     *   <li>sent: the effect's {@code created_at} index, newest queued first, reading about a page
     *       since nearly every email is sent.</li>
     * </ul>
     */
    public static ResultQuery<Record> statusQuery(DSLContext tx, StatusPage page) {
        boolean exception = EXCEPTION_STATUSES.contains(page.status());
        Field<Instant> time = switch (pageTime(page.status())) {
            case CHANGED -> exception ? E.EXCEPTION_AT : E.UPDATED_AT;
            case QUEUED -> E.CREATED_AT;
        };
        List<Condition> where = new ArrayList<>();
        if (exception) {
            where.add(E.EXCEPTION_STATUS.eq(page.status()));
        } else {
            where.add(E.STATUS.eq(page.status()));
        }
        if (!exception && !SENT.equals(page.status())) {
            OutboxMessage queued = OUTBOX_MESSAGE.as("queued");
            where.add(E.IDEMPOTENCY_KEY.in(DSL.select(queued.IDEMPOTENCY_KEY).from(queued)
                    .where(queued.STATUS.eq(MessageStatus.PENDING.sql()).or(queued.STATUS.eq(MessageStatus.RUNNING.sql())))));
        }
        if (page.topicPrefix() != null) {
            where.add(E.TOPIC.startsWith(page.topicPrefix()));
        }
        if (page.since() != null) {
            where.add(time.ge(page.since()));
        }
        if (page.until() != null) {
            where.add(time.lt(page.until()));
        }
        if (page.olderThan() != null) {
            where.add(DSL.condition("{0} <= now() - make_interval(secs => {1})", E.CREATED_AT,
                    DSL.val(page.olderThan().toMillis() / 1000.0)));
        }
        if (page.afterKey() != null) {
            where.add(DSL.row(time, E.IDEMPOTENCY_KEY).lt(page.afterTime(), page.afterKey()));
        }
        return effects(tx).where(where).orderBy(time.desc(), E.IDEMPOTENCY_KEY.desc()).limit(page.limit());
    }

    public static List<Effect> byStatus(DSLContext tx, StatusPage page) {
        return statusQuery(tx, page).fetch(EffectHistory::effect);
    }

    /** The effect of {@code key}, or null when there is none. */
    public static Effect byKey(DSLContext tx, String key) {
        return effects(tx).where(E.IDEMPOTENCY_KEY.eq(key)).fetchOne(EffectHistory::effect);
    }

    /** The effects of these keys, in no particular order; keys without one are left out. */
    public static List<Effect> byKeys(DSLContext tx, Collection<String> keys) {
        if (keys.isEmpty()) {
            return List.of();
        }
        return effects(tx).where(E.IDEMPOTENCY_KEY.in(keys)).fetch(EffectHistory::effect);
    }

    /** The search terms of these effects ({@code to:...}, {@code template:...}), by key. */
    public static Map<String, List<String>> terms(DSLContext tx, Collection<String> keys) {
        if (keys.isEmpty()) {
            return Map.of();
        }
        var t = io.mailroom.db.jooq.Tables.OUTBOX_EFFECT_TERM;
        Map<String, List<String>> out = new java.util.HashMap<>();
        tx.select(t.IDEMPOTENCY_KEY, t.TERM).from(t).where(t.IDEMPOTENCY_KEY.in(keys)).orderBy(t.IDEMPOTENCY_KEY, t.TERM)
                .forEach(r -> out.computeIfAbsent(r.value1(), k -> new ArrayList<>()).add(r.value2()));
        return out;
    }

    /** The status of an effect, without locking it; null when there is none. */
    public static String status(DSLContext tx, String key) {
        return tx.select(E.STATUS).from(E).where(E.IDEMPOTENCY_KEY.eq(key)).fetchOne(E.STATUS);
    }

    /** A resend ({@code key}) and the key it repeats ({@code resendOf}). */
    public record Resend(String key, String resendOf) {
    }

    /**
     * The resends of the given effects (each named by key and aggregate), oldest first. A resend
     * belongs to the aggregate of the email it repeats, so the aggregate index finds them without an
     * index on {@code resend_of}.
     */
    public static List<Resend> resendsOf(DSLContext tx, Collection<Effect> originals) {
        if (originals.isEmpty()) {
            return List.of();
        }
        List<Row2<String, String>> aggregates = originals.stream()
                .map(o -> DSL.row(o.aggregateType(), o.aggregateId())).distinct().toList();
        return tx.select(E.IDEMPOTENCY_KEY, E.RESEND_OF).from(E)
                .where(DSL.row(E.AGGREGATE_TYPE, E.AGGREGATE_ID).in(aggregates))
                .and(E.RESEND_OF.in(originals.stream().map(Effect::key).toList()))
                .orderBy(E.CREATED_AT, E.IDEMPOTENCY_KEY)
                .fetch(r -> new Resend(r.value1(), r.value2()));
    }

    /** Keys of the resends of {@code key}, oldest first (through the aggregate index). */
    public static List<String> resendKeys(DSLContext tx, String key) {
        OutboxEffect o = E.as("o");
        return tx.select(E.IDEMPOTENCY_KEY).from(E)
                .join(o).on(o.IDEMPOTENCY_KEY.eq(key))
                .where(E.AGGREGATE_TYPE.eq(o.AGGREGATE_TYPE), E.AGGREGATE_ID.eq(o.AGGREGATE_ID), E.RESEND_OF.eq(key))
                .orderBy(E.CREATED_AT, E.IDEMPOTENCY_KEY)
                .fetch(E.IDEMPOTENCY_KEY);
    }

    /** Every key of one aggregate (an aggregate has a handful). */
    public static List<String> keysOfAggregate(DSLContext tx, String aggregateType, String aggregateId) {
        return tx.select(E.IDEMPOTENCY_KEY).from(E)
                .where(E.AGGREGATE_TYPE.eq(aggregateType), E.AGGREGATE_ID.eq(aggregateId))
                .fetch(E.IDEMPOTENCY_KEY);
    }

    /** What a resend copies from the effect it repeats. */
    public record Locked(String key, String topic, String aggregateType, String aggregateId, String status,
                         int maxAttempts, long messageId, Instant messageCreatedAt, String resendOf) {
    }

    /**
     * The effect of {@code key} locked against concurrent changes of its row ({@code FOR NO KEY UPDATE
     * NOWAIT}: a busy row fails at once with SQLSTATE 55P03 rather than waiting); null when there is none.
     */
    public static Locked lock(DSLContext tx, String key) {
        return tx.select(E.IDEMPOTENCY_KEY, E.TOPIC, E.AGGREGATE_TYPE, E.AGGREGATE_ID, E.STATUS, E.MAX_ATTEMPTS,
                        E.MESSAGE_ID, E.MESSAGE_CREATED_AT, E.RESEND_OF)
                .from(E).where(E.IDEMPOTENCY_KEY.eq(key))
                .forNoKeyUpdate().noWait()
                .fetchOne(r -> new Locked(r.get(E.IDEMPOTENCY_KEY), r.get(E.TOPIC), r.get(E.AGGREGATE_TYPE),
                        r.get(E.AGGREGATE_ID), r.get(E.STATUS), r.get(E.MAX_ATTEMPTS), r.get(E.MESSAGE_ID),
                        r.get(E.MESSAGE_CREATED_AT), r.get(E.RESEND_OF)));
    }

    /** The content a message was enqueued with: payload (JSON text) and ordering key. */
    public record Content(String payload, String orderingKey) {
    }

    /** The content of a queue row, or null when retention removed it. */
    public static Content content(DSLContext tx, long messageId, Instant messageCreatedAt) {
        return tx.select(M.PAYLOAD, M.ORDERING_KEY).from(M)
                .where(M.ID.eq(messageId).and(M.CREATED_AT.eq(messageCreatedAt)))
                .fetchOne(r -> r.value1() == null ? null : new Content(r.value1().data(), r.value2()));
    }

    /** Records that the effect of {@code newKey} repeats the one of {@code originalKey}. */
    public static void markResend(DSLContext tx, String newKey, String originalKey) {
        int n = tx.update(E).set(E.RESEND_OF, originalKey).where(E.IDEMPOTENCY_KEY.eq(newKey)).execute();
        if (n != 1) {
            throw new IllegalStateException("no effect " + newKey + " to mark as a resend of " + originalKey);
        }
    }

    /**
     * How many effects have each of these statuses (through the exception index); absent ones count 0.
     *
     * @throws IllegalArgumentException for a status outside {@link #EXCEPTION_STATUSES} (no index counts it)
     */
    public static Map<String, Long> countByStatus(DSLContext tx, Collection<String> statuses) {
        var counts = new java.util.HashMap<String, Long>();
        for (String s : statuses) {
            if (!EXCEPTION_STATUSES.contains(s)) {
                throw new IllegalArgumentException("only " + EXCEPTION_STATUSES + " are counted, not " + s);
            }
            counts.put(s, 0L);
        }
        tx.select(E.EXCEPTION_STATUS, DSL.count()).from(E)
                .where(E.EXCEPTION_STATUS.in(statuses))
                .groupBy(E.EXCEPTION_STATUS)
                .forEach(r -> counts.put(r.value1(), r.value2().longValue()));
        return counts;
    }

    /** A count in one minute. */
    public record MinuteCount(Instant minute, long count) {
    }

    /** New effects by minute since {@code from}. */
    public static List<MinuteCount> createdPerMinute(DSLContext tx, Instant from) {
        Field<Instant> m = minute(E.CREATED_AT);
        return tx.select(m, DSL.count()).from(E)
                .where(E.CREATED_AT.ge(from))
                .groupBy(m)
                .fetch(r -> new MinuteCount(r.value1(), r.value2()));
    }

    static Field<Instant> minute(Field<Instant> t) {
        return DSL.field("date_trunc('minute', {0})", SQLDataType.INSTANT, t);
    }

    /**
     * The hot queue's pending and running rows now, by the database's clock (the partial indexes keep it cheap);
     * {@code oldestPending} leaves out scheduled messages (never tried, available later).
     */
    public record QueueCounts(Instant now, long pending, long pendingDue, Instant oldestPending, long running) {
    }

    public static QueueCounts queueCounts(DSLContext tx) {
        Field<Instant> now = DSL.field(DSL.raw("now()"), SQLDataType.INSTANT);
        // a scheduled message (not tried, its time ahead) is not "waiting": it would make the oldest look days old
        Record r = tx.select(now, DSL.count(), DSL.count().filterWhere(M.AVAILABLE_AT.le(now)),
                        DSL.min(M.CREATED_AT).filterWhere(M.AVAILABLE_AT.le(now).or(M.ATTEMPTS.gt(0))))
                .from(M).where(M.STATUS.eq("pending")).fetchSingle();
        long running = tx.fetchCount(M, M.STATUS.eq("running"));
        return new QueueCounts(r.get(0, Instant.class), r.get(1, Long.class), r.get(2, Long.class),
                r.get(3, Instant.class), running);
    }
}
