package io.mailroom.outbox.runtime;

import io.mailroom.db.MailroomSchema;
import io.mailroom.outbox.MessageStatus;
import io.mailroom.db.jooq.tables.records.OutboxMessageRecord;
import io.mailroom.db.sql.HotSql;
import io.mailroom.db.sql.SqlClock;
import org.jooq.CommonTableExpression;
import org.jooq.Condition;
import org.jooq.DSLContext;
import org.jooq.Field;
import org.jooq.Record2;
import org.jooq.SQLDialect;
import org.jooq.UpdateResultStep;
import org.jooq.impl.DSL;

import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Duration;
import java.time.Instant;
import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import static io.mailroom.db.jooq.Tables.OUTBOX_MESSAGE;
import static org.jooq.impl.DSL.any;
import static org.jooq.impl.DSL.inline;
import static org.jooq.impl.DSL.name;
import static org.jooq.impl.DSL.notExists;
import static org.jooq.impl.DSL.selectOne;

/**
 * The claim: one statement that takes up to a limit of pending messages of some topics for one
 * worker, rendered by jOOQ from the generated classes and run through {@link HotSql}. Invariant: a
 * row is claimed by one caller at a time (the locking clause with SKIP LOCKED inside the CTE), and
 * a row with an ordering key only after every earlier row of its key has left the queue.
 */
final class ClaimStore {

    private static final String PENDING = MessageStatus.PENDING.sql();
    private static final String RUNNING = MessageStatus.RUNNING.sql();
    /** Renders the claim; never executes (the claim runs through {@link HotSql}). */
    private static final DSLContext RENDERER = DSL.using(SQLDialect.POSTGRES);
    private static final int CLAIM_CACHE_SIZE = 256;

    /**
     * Run in the claim's transaction before the claim, so that every plan PostgreSQL makes of the
     * claim picks rows by walking the claim index in order under the LIMIT, never by fetching every
     * pending row and sorting them. A dispatcher keeps one generic plan per claim text, made when
     * the statement is first planned in its session (by its sixth execution) and kept whatever the
     * settings later; its estimate of how many rows a claim may read comes from the statistics of
     * that moment, and statistics taken while little was pending (after a drain, before a burst)
     * made it choose a bitmap scan and a sort of every pending row at or after the mark: a drain of
     * 20,000 emails read 2,000 buffers and took 20 ms per claim of 16 rows, where the ordered scan
     * reads 45 (BENCHMARKS.md, issue 28, "the claim's plan"). With sorting disabled the ordered scan
     * is the only plan without a sort, so it is chosen whatever the statistics say; SET LOCAL ends
     * with the transaction, so no other statement of the session is planned with it, and it holds
     * behind a transaction-mode pooler.
     */
    static final String ORDERED_PICK = "SET LOCAL enable_sort = off";
    private static final Object[] NO_BINDS = {};

    private final SqlClock clock;
    private final Map<ClaimKey, RenderedClaim> claims = new LinkedHashMap<>(16, 0.75f, true) {
        @Override
        protected boolean removeEldestEntry(Map.Entry<ClaimKey, RenderedClaim> eldest) {
            return size() > CLAIM_CACHE_SIZE;
        }
    };

    ClaimStore(SqlClock clock) {
        this.clock = clock;
    }


    /**
     * The claim: a CTE picks pending rows with {@code FOR NO KEY UPDATE SKIP LOCKED} (the locking
     * clause must sit inside the CTE: it does not reach into WITH from outside), and the outer
     * UPDATE marks exactly those rows running, bumps {@code claim_version} and {@code attempts}
     * and sets the lease. Must run at READ COMMITTED: at REPEATABLE READ a candidate changed after
     * the snapshot raises 40001 instead of being skipped.
     *
     * <p>A row with an ordering key is skipped while an earlier row (lower id) of the same key is
     * pending or running, so that key's messages go one at a time, in order.
     */
    List<ClaimedMessage> claim(DSLContext tx, String worker, int limit, Collection<String> topics, Duration lease) {
        return claim(tx, worker, null, limit, topics, lease, true);
    }

    /** The claim for {@code worker} in its process {@code incarnation} (null: a claim no process will own). */
    List<ClaimedMessage> claim(DSLContext tx, String worker, String incarnation, int limit, Collection<String> topics,
                               Duration lease) {
        return claim(tx, worker, incarnation, limit, topics, lease, true);
    }

    List<ClaimedMessage> claim(DSLContext tx, String worker, String incarnation, int limit, Collection<String> topics,
                               Duration lease, boolean orderingKeys) {
        return claim(tx, worker, incarnation, limit, topics, lease, orderingKeys, null).messages();
    }

    /**
     * The claim from {@code from} on, or from the index's head where {@code from} is null: with a
     * mark it reads only rows at or after it in (available_at, id) order, so it never walks the
     * dead entries below it (see {@link ClaimMark}). Returns the claimed rows and the lowest
     * (available_at, id) among them.
     */
    Claimed claim(DSLContext tx, String worker, String incarnation, int limit, Collection<String> topics,
                  Duration lease, boolean orderingKeys, ClaimMark from) {
        RenderedClaim claim = renderedClaim(MailroomSchema.of(tx), worker, incarnation, limit, topics, lease, orderingKeys,
                from != null);
        Object[] binds = claim.binds();
        if (from != null) {
            if (claim.markSlot() < 0) {
                throw new IllegalStateException("the claim from a mark was rendered without its mark");
            }
            binds = binds.clone();
            binds[claim.markSlot()] = from.availableAt();
            binds[claim.markSlot() + 1] = from.id();
        }
        HotSql.execute(tx, ORDERED_PICK, NO_BINDS);
        ClaimMark[] lowest = new ClaimMark[1];
        List<ClaimedMessage> messages = HotSql.query(tx, claim.sql(), binds, rs -> {
            ClaimMark at = new ClaimMark(HotSql.instant(rs, 14), rs.getLong(1));
            if (lowest[0] == null || at.compareTo(lowest[0]) < 0) {
                lowest[0] = at;
            }
            return claimedMessage(rs);
        });
        return new Claimed(messages, lowest[0]);
    }

    /** What one claim took, and the lowest (available_at, id) among it (null when it took nothing). */
    record Claimed(List<ClaimedMessage> messages, ClaimMark lowest) {
    }

    /**
     * The claim as SQL text and bind values. With database time nothing in it changes between
     * executions for the same worker, limit, topics and lease, so it is rendered once and kept
     * (at most {@link #CLAIM_CACHE_SIZE} variants: the limit takes at most {@code batchSize} values);
     * with an injected clock it carries that clock's instant and is rendered every time.
     */
    private RenderedClaim renderedClaim(MailroomSchema schema, String worker, String incarnation, int limit,
                                        Collection<String> topics, Duration lease, boolean orderingKeys,
                                        boolean fromMark) {
        // the generated classes name the default schema; another one is a render mapping
        DSLContext renderer = schema.isDefault() ? RENDERER : DSL.using(SQLDialect.POSTGRES, schema.settings());
        if (!clock.isDatabaseTime()) {
            return RenderedClaim.of(claimQuery(renderer, worker, incarnation, limit, topics, lease, orderingKeys,
                    fromMark ? MARK_SENTINEL : null));
        }
        ClaimKey key = new ClaimKey(schema, worker, incarnation, limit, List.copyOf(topics), lease, orderingKeys, fromMark);
        synchronized (claims) {
            RenderedClaim cached = claims.get(key);
            if (cached != null) {
                return cached;
            }
        }
        RenderedClaim rendered = RenderedClaim.of(claimQuery(renderer, worker, incarnation, limit, topics, lease,
                orderingKeys, fromMark ? MARK_SENTINEL : null));
        synchronized (claims) {
            claims.put(key, rendered);
        }
        return rendered;
    }

    private record ClaimKey(MailroomSchema schema, String worker, String incarnation, int limit, List<String> topics,
                            Duration lease, boolean orderingKeys, boolean fromMark) {
    }

    /**
     * The mark a claim from a mark is rendered with: its id is found among the bind values, and
     * each execution puts its own mark in those two places (available_at just before the id).
     */
    private static final ClaimMark MARK_SENTINEL = new ClaimMark(Instant.EPOCH, Long.MIN_VALUE + 0x4d61726bL);

    /** @param markSlot where the mark's available_at is bound (its id follows), or -1 for a claim from the head */
    private record RenderedClaim(String sql, Object[] binds, int markSlot) {
        static RenderedClaim of(UpdateResultStep<OutboxMessageRecord> query) {
            Object[] binds = query.getBindValues().toArray();
            int markSlot = -1;
            for (int i = 1; i < binds.length; i++) {
                if (Long.valueOf(MARK_SENTINEL.id()).equals(binds[i])) {
                    markSlot = i - 1;
                }
            }
            return new RenderedClaim(query.getSQL(), binds, markSlot);
        }
    }

    static ClaimedMessage claimedMessage(ResultSet rs) throws SQLException {
        return new ClaimedMessage(rs.getLong(1), HotSql.instant(rs, 2), rs.getString(3), rs.getString(4),
                rs.getString(5), rs.getString(6), rs.getString(7), rs.getString(8), rs.getInt(9), rs.getInt(10),
                rs.getLong(11), HotSql.instant(rs, 12), HotSql.instant(rs, 13));
    }

    /**
     * The claim statement itself, unexecuted (for {@link #claim} and for reading its SQL). The
     * statuses and the limit are written into the text, not bound: with {@code status = ?} a
     * generic plan cannot use the partial index {@code WHERE status = 'pending'}, and with the limit
     * unknown its estimate is bad, so PostgreSQL planned every claim afresh (custom plans), which
     * cost several times the claim's execution. Inlined, the plan is cached after five executions.
     * The columns it returns are read by position in {@link #claimedMessage} (and the last,
     * available_at, by {@link #claim} for the claimer's mark).
     */
    UpdateResultStep<OutboxMessageRecord> claimQuery(DSLContext tx, String worker, String incarnation, int limit,
                                                     Collection<String> topics, Duration lease, boolean orderingKeys) {
        return claimQuery(tx, worker, incarnation, limit, topics, lease, orderingKeys, null);
    }

    /**
     * The claim from {@code from} on (null: from the index's head). The mark is a row comparison
     * {@code (available_at, id) >= (?, ?)}, which PostgreSQL uses as the Index Cond of the claim
     * index {@code (available_at, id)}: the scan starts at the mark instead of walking every entry
     * before it. Its values are bound, not inlined, so each claimer keeps one generic plan for it.
     *
     * <p>A claim of one topic says {@code topic = ?}, which PostgreSQL reads from the topic's own
     * part of the index {@code (topic, available_at, id)}, in order, without passing the pending rows
     * of any other topic. A claim of several says {@code topic = ANY(?)} and reads the index {@code
     * (available_at, id)}: no index gives the rows of several topics in that order, and the pending
     * rows of the topics it does not name are walked on the way (see {@link Producer}, which claims
     * topic by topic while one of its own is paused).
     */
    UpdateResultStep<OutboxMessageRecord> claimQuery(DSLContext tx, String worker, String incarnation, int limit,
                                                     Collection<String> topics, Duration lease, boolean orderingKeys,
                                                     ClaimMark from) {
        var m = OUTBOX_MESSAGE;
        var c = OUTBOX_MESSAGE.as("c");
        var earlier = OUTBOX_MESSAGE.as("earlier");
        Field<Instant> now = clock.now();
        Field<String> pending = inline(PENDING);
        Field<String> running = inline(RUNNING);

        Condition orderingFree = !orderingKeys ? DSL.noCondition()
                : c.ORDERING_KEY.isNull().or(notExists(selectOne().from(earlier).where(
                        earlier.ORDERING_KEY.eq(c.ORDERING_KEY),
                        earlier.ID.lt(c.ID),
                        earlier.STATUS.in(pending, running))));

        CommonTableExpression<Record2<Long, Instant>> picked = name("picked").fields("id", "created_at").as(
                DSL.select(c.ID, c.CREATED_AT)
                        .from(c)
                        .where(c.STATUS.eq(pending))
                        .and(c.AVAILABLE_AT.le(now))
                        .and(from == null ? DSL.noCondition()
                                : DSL.row(c.AVAILABLE_AT, c.ID).ge(DSL.row(DSL.val(from.availableAt(), c.AVAILABLE_AT),
                                        DSL.val(from.id(), c.ID))))
                        .and(topics.size() == 1 ? c.TOPIC.eq(topics.iterator().next())
                                : c.TOPIC.eq(any(topics.toArray(String[]::new))))
                        .and(orderingFree)
                        .orderBy(c.AVAILABLE_AT, c.ID)
                        .limit(inline(limit))
                        .forNoKeyUpdate()
                        .skipLocked());
        Field<Long> pickedId = picked.field("id", Long.class);
        Field<Instant> pickedCreatedAt = picked.field("created_at", Instant.class);

        return tx.with(picked)
                .update(m)
                .set(m.STATUS, running)
                .set(m.CLAIMED_BY, worker)
                .set(m.CLAIMED_INCARNATION, incarnation)
                .set(m.CLAIMED_AT, now)
                .set(m.CLAIM_VERSION, m.CLAIM_VERSION.plus(inline(1L)))
                .set(m.ATTEMPTS, m.ATTEMPTS.plus(inline(1)))
                .set(m.LEASE_UNTIL, clock.plus(lease))
                .set(m.WAITING_FOR, inline((String) null)) // a running row waits for nothing
                .set(m.UPDATED_AT, now)
                .from(picked)
                .where(m.ID.eq(pickedId).and(m.CREATED_AT.eq(pickedCreatedAt)))
                .returning(m.ID, m.CREATED_AT, m.TOPIC, m.AGGREGATE_TYPE, m.AGGREGATE_ID, m.IDEMPOTENCY_KEY,
                        m.ORDERING_KEY, m.PAYLOAD, m.ATTEMPTS, m.MAX_ATTEMPTS, m.CLAIM_VERSION, m.CLAIMED_AT,
                        m.LEASE_UNTIL, m.AVAILABLE_AT);
    }
}
