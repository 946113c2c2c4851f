package io.mailroom.outbox;

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
import java.util.ArrayList;
import java.util.Collection;
import java.util.Comparator;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

import static io.mailroom.db.jooq.Tables.OUTBOX_CONTROL;
import static io.mailroom.db.jooq.Tables.OUTBOX_MESSAGE;
import static org.jooq.impl.DSL.any;
import static org.jooq.impl.DSL.inline;
import static org.jooq.impl.DSL.name;
import static org.jooq.impl.DSL.notExists;
import static org.jooq.impl.DSL.selectOne;
import static org.jooq.impl.DSL.val;

/**
 * Every SQL statement of the outbox runtime, in one place. Statements that change a claimed row
 * are fenced by {@code claim_version} and {@code status = 'running'}: a row they do not return was
 * not changed, because the claim is no longer the caller's.
 *
 * <p>Batched statements take their rows as arrays ({@code unnest}), so the SQL text is the same
 * whatever the batch size and the server reuses one plan. The statements of the hot path (claim,
 * completion, heartbeat, release, rescue) are finished texts run through {@link HotSql}; the claim's
 * text is rendered by jOOQ from the generated classes.
 */
final class OutboxStore {

    static final int MAX_ERROR_LENGTH = 2000;

    private static final String PENDING = MessageStatus.PENDING.sql();
    private static final String RUNNING = MessageStatus.RUNNING.sql();

    /** The columns a fenced statement returns, read by {@link #changedRow}. */
    private static final String CHANGED_ROW = """
            RETURNING m.id, m.created_at, m.idempotency_key, m.status, m.attempts, m.max_attempts,
                      m.claim_version, m.claimed_by, m.claimed_at, m.last_error""";

    /** The fence every statement on a claimed row carries: same row, same claim, still running. */
    private static final String FENCED = """
            WHERE m.id = v.id AND m.created_at = v.created_at
              AND m.claim_version = v.claim_version AND m.status = 'running'
            """;

    private static final String FENCE_ARRAYS = """
            unnest(?::bigint[], ?::varchar[]::timestamptz[], ?::bigint[]) AS v(id, created_at, claim_version)
            """;

    static final String FINISH = """
            UPDATE outbox_message AS m SET
              status = CASE WHEN v.kind = 'release' THEN 'pending'
                            WHEN v.kind <> 'retry' THEN v.kind
                            WHEN m.attempts >= m.max_attempts THEN 'failed'
                            ELSE 'pending' END,
              available_at = CASE WHEN v.kind IN ('retry', 'release')
                                  THEN {now} + make_interval(secs => v.delay_ms / 1000.0)
                                  ELSE m.available_at END,
              attempts = CASE WHEN v.kind = 'release' THEN greatest(m.attempts - 1, 0) ELSE m.attempts END,
              lease_until = NULL,
              last_error = CASE WHEN v.kind = 'done' THEN m.last_error ELSE v.error END,
              waiting_for = CASE WHEN v.kind = 'release' THEN v.waiting_for END,
              finished_at = CASE WHEN v.kind = 'release' THEN NULL
                                 WHEN v.kind = 'retry' AND m.attempts < m.max_attempts THEN NULL
                                 ELSE {now} END,
              updated_at = {now}
            FROM unnest(?::bigint[], ?::varchar[]::timestamptz[], ?::bigint[], ?::varchar[], ?::varchar[], ?::bigint[],
                        ?::varchar[])
                 AS v(id, created_at, claim_version, kind, error, delay_ms, waiting_for)
            """ + FENCED + CHANGED_ROW;

    static final String HEARTBEAT = """
            UPDATE outbox_message AS m SET lease_until = {now} + make_interval(secs => ?::double precision)
            FROM\s""" + FENCE_ARRAYS + FENCED + "RETURNING m.id";

    static final String RELEASE = """
            UPDATE outbox_message AS m SET
              status = 'pending', available_at = {now}, lease_until = NULL,
              attempts = greatest(m.attempts - 1, 0), updated_at = {now}
            FROM\s""" + FENCE_ARRAYS + FENCED + CHANGED_ROW;

    /** {@link #CHANGED_ROW} and what {@link DispatcherListener#ended} needs, for the statements that may end a message. */
    private static final String ENDED_ROW = CHANGED_ROW + ", m.topic, m.payload";

    static final String RESCUE = """
            WITH expired AS (
              SELECT id, created_at FROM outbox_message
              WHERE status = 'running' AND lease_until < {now}
              ORDER BY lease_until
              LIMIT ?
              FOR NO KEY UPDATE SKIP LOCKED
            )
            UPDATE outbox_message AS m SET
              status = CASE WHEN m.attempts >= m.max_attempts THEN 'failed' ELSE 'pending' END,
              available_at = {now} + make_interval(secs =>
                  least(?::double precision, ?::double precision * power(?::double precision, greatest(m.attempts - 1, 0)))
                  * (1 - ?::double precision * random())),
              lease_until = NULL,
              last_error = left('lease expired: ' || coalesce(m.claimed_by, 'unknown worker')
                                || ' did not finish attempt ' || m.attempts, 2000),
              finished_at = CASE WHEN m.attempts >= m.max_attempts THEN {now} END,
              updated_at = {now}
            FROM expired
            WHERE m.id = expired.id AND m.created_at = expired.created_at
              AND m.status = 'running' AND m.lease_until < {now}
            """ + ENDED_ROW;

    /** This worker's running claims older than a grace period, in the claim's RETURNING shape. */
    static final String OWN_RUNNING = """
            SELECT id, created_at, topic, aggregate_type, aggregate_id, idempotency_key, ordering_key, payload,
                   attempts, max_attempts, claim_version, claimed_at, lease_until
            FROM outbox_message
            WHERE status = 'running' AND claimed_by = ? AND claimed_incarnation = ?
              AND claimed_at < {now} - make_interval(secs => ?::double precision)
            ORDER BY id
            LIMIT ?""";

    /**
     * The running claims of this worker id made by another process (an earlier incarnation, which
     * stopped while holding them), ended as interrupted: the attempt stays counted, the row goes
     * back to pending with backoff, or to failed after its last attempt, saying how many times the
     * process holding it stopped (this one, plus the interrupted attempts already in its history).
     */
    static final String INTERRUPT = """
            WITH interrupted AS (
              SELECT o.id, o.created_at,
                     1 + (SELECT count(*) FROM outbox_attempt a
                          WHERE a.idempotency_key = o.idempotency_key AND a.message_id = o.id
                            AND a.outcome = 'interrupted') AS stops
              FROM outbox_message o
              WHERE o.status = 'running' AND o.claimed_by = ? AND o.claimed_incarnation IS DISTINCT FROM ?
              ORDER BY o.id
              LIMIT ?
              FOR NO KEY UPDATE OF o SKIP LOCKED
            )
            UPDATE outbox_message AS m SET
              status = CASE WHEN m.attempts >= m.max_attempts THEN 'failed' ELSE 'pending' END,
              available_at = {now} + make_interval(secs =>
                  least(?::double precision, ?::double precision * power(?::double precision, greatest(m.attempts - 1, 0)))
                  * (1 - ?::double precision * random())),
              lease_until = NULL,
              last_error = left(format('interrupted: the process holding the claim stopped %s time%s (worker %s, attempt %s of %s)',
                  i.stops, CASE WHEN i.stops = 1 THEN '' ELSE 's' END, m.claimed_by, m.attempts, m.max_attempts), 2000),
              finished_at = CASE WHEN m.attempts >= m.max_attempts THEN {now} END,
              updated_at = {now}
            FROM interrupted AS i
            WHERE m.id = i.id AND m.created_at = i.created_at
              AND m.status = 'running' AND m.claimed_by = ? AND m.claimed_incarnation IS DISTINCT FROM ?
            """ + ENDED_ROW;

    static final String EFFECTS = """
            UPDATE outbox_effect AS e SET
              status = v.status, attempts = v.attempts, last_error = v.error, updated_at = {now},
              finished_at = CASE WHEN v.status IN ('done', 'failed', 'review', 'cancelled') THEN {now} END
            FROM unnest(?::varchar[], ?::bigint[], ?::varchar[], ?::int[], ?::varchar[])
                 AS v(idempotency_key, message_id, status, attempts, error)
            WHERE e.idempotency_key = v.idempotency_key AND e.message_id = v.message_id""";

    static final String ATTEMPTS = """
            INSERT INTO outbox_attempt (idempotency_key, message_id, attempt, claim_version, worker,
                                        started_at, finished_at, outcome, error, detail)
            SELECT * FROM unnest(?::varchar[], ?::bigint[], ?::int[], ?::bigint[], ?::varchar[],
                                 ?::varchar[]::timestamptz[], ?::varchar[]::timestamptz[], ?::varchar[], ?::varchar[],
                                 ?::varchar[]::jsonb[])""";

    /** Renders the claim; never executes (the claim runs through {@link HotSql}). */
    private static final DSLContext RENDERER = DSL.using(SQLDialect.POSTGRES);
    private static final int CLAIM_CACHE_SIZE = 256;

    private final SqlClock clock;
    private final Backoff backoff;
    private final HotSql finishSql;
    private final HotSql heartbeatSql;
    private final HotSql releaseSql;
    private final HotSql rescueSql;
    private final HotSql ownRunningSql;
    private final HotSql interruptSql;
    private final HotSql effectsSql;
    private final HotSql attemptsSql;
    private final Map<ClaimKey, RenderedClaim> claims = new LinkedHashMap<>(16, 0.75f, true) {
        @Override
        protected boolean removeEldestEntry(Map.Entry<ClaimKey, RenderedClaim> eldest) {
            return size() > CLAIM_CACHE_SIZE;
        }
    };

    OutboxStore(SqlClock clock, Backoff backoff) {
        this.clock = clock;
        this.backoff = backoff;
        this.finishSql = HotSql.of(FINISH, clock);
        this.heartbeatSql = HotSql.of(HEARTBEAT, clock);
        this.releaseSql = HotSql.of(RELEASE, clock);
        this.rescueSql = HotSql.of(RESCUE, clock);
        this.ownRunningSql = HotSql.of(OWN_RUNNING, clock);
        this.interruptSql = HotSql.of(INTERRUPT, clock);
        this.effectsSql = HotSql.of(EFFECTS, clock);
        this.attemptsSql = HotSql.of(ATTEMPTS, clock);
    }

    // ---------------------------------------------------------------------------------------- claim

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
        RenderedClaim claim = renderedClaim(worker, incarnation, limit, topics, lease, orderingKeys);
        return HotSql.query(tx, claim.sql(), claim.binds(), OutboxStore::claimedMessage);
    }

    /**
     * The claim as SQL text and bind values. With database time nothing in it changes between
     * executions for the same worker, limit, topics and lease, so it is rendered once and kept
     * (at most {@link #CLAIM_CACHE_SIZE} variants: the limit takes at most {@code batchSize} values);
     * with an injected clock it carries that clock's instant and is rendered every time.
     */
    private RenderedClaim renderedClaim(String worker, String incarnation, int limit, Collection<String> topics,
                                        Duration lease, boolean orderingKeys) {
        if (!clock.isDatabaseTime()) {
            return RenderedClaim.of(claimQuery(RENDERER, worker, incarnation, limit, topics, lease, orderingKeys));
        }
        ClaimKey key = new ClaimKey(worker, incarnation, limit, List.copyOf(topics), lease, orderingKeys);
        synchronized (claims) {
            RenderedClaim cached = claims.get(key);
            if (cached != null) {
                return cached;
            }
        }
        RenderedClaim rendered = RenderedClaim.of(claimQuery(RENDERER, worker, incarnation, limit, topics, lease,
                orderingKeys));
        synchronized (claims) {
            claims.put(key, rendered);
        }
        return rendered;
    }

    private record ClaimKey(String worker, String incarnation, int limit, List<String> topics, Duration lease, boolean orderingKeys) {
    }

    private record RenderedClaim(String sql, Object[] binds) {
        static RenderedClaim of(UpdateResultStep<OutboxMessageRecord> query) {
            return new RenderedClaim(query.getSQL(), query.getBindValues().toArray());
        }
    }

    private static ClaimedMessage claimedMessage(ResultSet rs) throws SQLException {
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
     * The columns it returns are read by position in {@link #claimedMessage}.
     */
    UpdateResultStep<OutboxMessageRecord> claimQuery(DSLContext tx, String worker, String incarnation, int limit,
                                                     Collection<String> topics, Duration lease, boolean orderingKeys) {
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
                        .and(c.TOPIC.eq(any(topics.toArray(String[]::new))))
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
                        m.LEASE_UNTIL);
    }

    // --------------------------------------------------------------------------------------- finish

    /**
     * One outcome to write: {@code kind} is done, retry, failed, review or release (not attempted);
     * {@code waitingFor} only with release (see {@link Outcome.NotAttempted#waitingFor()}).
     */
    record Finish(ClaimedMessage message, String kind, String error, Duration delay, String detail, Instant finishedAt,
                  String waitingFor) {

        Finish(ClaimedMessage message, String kind, String error, Duration delay, String detail, Instant finishedAt) {
            this(message, kind, error, delay, detail, finishedAt, null);
        }
    }

    /** A row a fenced statement changed, as it is afterwards. */
    record ChangedRow(long id, Instant createdAt, String idempotencyKey, String status, int attempts, int maxAttempts,
                      long claimVersion, String claimedBy, Instant claimedAt, String lastError, String topic,
                      String payloadJson) {

        /** The message ended here (failed or review), rather than going back to the queue or to done. */
        boolean ended() {
            return MessageStatus.FAILED.sql().equals(status) || MessageStatus.REVIEW.sql().equals(status);
        }
    }

    /**
     * Writes many outcomes in one statement. Retries go back to pending after their delay, or to
     * failed when the attempts are used up (decided on the row's current {@code max_attempts}, which
     * a person may have raised). Returns the rows changed; a missing one lost its claim.
     */
    List<ChangedRow> finish(DSLContext tx, List<Finish> unordered) {
        List<Finish> finishes = new ArrayList<>(unordered);
        finishes.sort(Comparator.comparingLong(f -> f.message().id())); // lock order, see fence()
        int n = finishes.size();
        Long[] ids = new Long[n];
        String[] createdAts = new String[n];
        Long[] versions = new Long[n];
        String[] kinds = new String[n];
        String[] errors = new String[n];
        Long[] delays = new Long[n];
        String[] waitingFor = new String[n];
        for (int i = 0; i < n; i++) {
            Finish f = finishes.get(i);
            ids[i] = f.message().id();
            createdAts[i] = f.message().createdAt().toString();
            versions[i] = f.message().claimVersion();
            kinds[i] = f.kind();
            errors[i] = truncate(f.error());
            delays[i] = f.delay() == null ? 0L : f.delay().toMillis();
            waitingFor[i] = f.waitingFor();
        }
        return finishSql.query(tx, OutboxStore::changedRow, ids, createdAts, versions, kinds, errors, delays, waitingFor);
    }

    /** Extends the leases of held claims; returns the ids whose claim still holds. */
    Set<Long> heartbeat(DSLContext tx, Collection<ClaimedMessage> held, Duration lease) {
        Object[] fence = fence(held);
        return new HashSet<>(heartbeatSql.query(tx, rs -> rs.getLong(1),
                lease.toMillis() / 1000.0, fence[0], fence[1], fence[2]));
    }

    /**
     * Hands claims back to the queue without counting the attempt (graceful stop): pending, available
     * at once, attempts decremented. Returns the rows changed.
     */
    List<ChangedRow> release(DSLContext tx, Collection<ClaimedMessage> held) {
        Object[] fence = fence(held);
        return releaseSql.query(tx, OutboxStore::changedRow, fence[0], fence[1], fence[2]);
    }

    /**
     * The fence of each claim, as the three arrays (ids, created_at texts, claim versions) the
     * statements unnest, in id order: the statements then lock their rows in id order (the planner
     * joins the few unnested rows by index, in their order), so two of them on overlapping rows
     * wait for each other instead of deadlocking.
     */
    private static Object[] fence(Collection<ClaimedMessage> unordered) {
        List<ClaimedMessage> held = new ArrayList<>(unordered);
        held.sort(Comparator.comparingLong(ClaimedMessage::id));
        int n = held.size();
        Long[] ids = new Long[n];
        String[] createdAts = new String[n];
        Long[] versions = new Long[n];
        int i = 0;
        for (ClaimedMessage msg : held) {
            ids[i] = msg.id();
            createdAts[i] = msg.createdAt().toString();
            versions[i] = msg.claimVersion();
            i++;
        }
        return new Object[] {ids, createdAts, versions};
    }

    /** Of {@code claims}, the ids whose row is still running under that very claim. */
    Set<Long> stillClaimed(DSLContext tx, Collection<ClaimedMessage> claims) {
        var m = OUTBOX_MESSAGE;
        List<Condition> fences = new ArrayList<>(claims.size());
        for (ClaimedMessage c : claims) {
            fences.add(m.ID.eq(c.id()).and(m.CREATED_AT.eq(c.createdAt())).and(m.CLAIM_VERSION.eq(c.claimVersion())));
        }
        return new HashSet<>(tx.select(m.ID).from(m).where(m.STATUS.eq(RUNNING)).and(DSL.or(fences)).fetch(m.ID));
    }

    // -------------------------------------------------------------------------------------- rescue

    /**
     * Claims of {@code worker} in its process {@code incarnation} that are running and were claimed more than {@code grace} ago, at
     * most {@code limit}: the caller keeps out the ones it knows it holds; the rest are claims whose
     * commit succeeded while the dispatcher saw an error (the session was killed during COMMIT), which
     * nobody is working on.
     */
    List<ClaimedMessage> ownRunning(DSLContext tx, String worker, String incarnation, Duration grace, int limit) {
        return ownRunningSql.query(tx, OutboxStore::claimedMessage, worker, incarnation, grace.toMillis() / 1000.0, limit);
    }

    /**
     * Ends up to {@code page} running claims of {@code worker} that another incarnation of it made
     * (see {@link #INTERRUPT}); returns the rows changed.
     */
    List<ChangedRow> interruptPredecessors(DSLContext tx, String worker, String incarnation, int page) {
        double baseSeconds = backoff.base().toMillis() / 1000.0;
        double capSeconds = backoff.cap().toMillis() / 1000.0;
        return interruptSql.query(tx, OutboxStore::endedRow, worker, incarnation, page, capSeconds, baseSeconds,
                backoff.multiplier(), backoff.jitter(), worker, incarnation);
    }

    /**
     * Returns up to {@code page} rows whose lease expired to pending (with backoff) or to failed
     * after their last attempt. The expiry is checked in the CTE and again in the outer UPDATE after
     * the row lock is taken (READ COMMITTED re-evaluates the WHERE clause on the newest row version),
     * so a heartbeat that committed first wins; rows locked by a heartbeat or a completion right now
     * are skipped and looked at next time.
     */
    List<ChangedRow> rescueExpired(DSLContext tx, int page) {
        double baseSeconds = backoff.base().toMillis() / 1000.0;
        double capSeconds = backoff.cap().toMillis() / 1000.0;
        return rescueSql.query(tx, OutboxStore::endedRow, page, capSeconds, baseSeconds, backoff.multiplier(),
                backoff.jitter());
    }

    // ------------------------------------------------------------------------- history (effects, attempts)

    /** Mirrors the new state of changed rows onto their {@code outbox_effect}. */
    void updateEffects(DSLContext tx, List<ChangedRow> rows) {
        if (rows.isEmpty()) {
            return;
        }
        int n = rows.size();
        String[] keys = new String[n];
        Long[] messageIds = new Long[n];
        String[] statuses = new String[n];
        Integer[] attempts = new Integer[n];
        String[] errors = new String[n];
        for (int i = 0; i < n; i++) {
            ChangedRow r = rows.get(i);
            keys[i] = r.idempotencyKey();
            messageIds[i] = r.id();
            statuses[i] = r.status();
            attempts[i] = r.attempts();
            errors[i] = r.lastError();
        }
        effectsSql.execute(tx, keys, messageIds, statuses, attempts, errors);
    }

    /** One finished attempt for the support timeline. */
    record AttemptRow(String idempotencyKey, long messageId, int attempt, long claimVersion, String worker,
                      Instant startedAt, Instant finishedAt, String outcome, String error, String detail) {
    }

    void insertAttempts(DSLContext tx, List<AttemptRow> attempts) {
        if (attempts.isEmpty()) {
            return;
        }
        int n = attempts.size();
        String[] keys = new String[n];
        Long[] messageIds = new Long[n];
        Integer[] numbers = new Integer[n];
        Long[] versions = new Long[n];
        String[] workers = new String[n];
        String[] started = new String[n];
        String[] finished = new String[n];
        String[] outcomes = new String[n];
        String[] errors = new String[n];
        String[] details = new String[n];
        for (int i = 0; i < n; i++) {
            AttemptRow a = attempts.get(i);
            keys[i] = a.idempotencyKey();
            messageIds[i] = a.messageId();
            numbers[i] = a.attempt();
            versions[i] = a.claimVersion();
            workers[i] = a.worker() == null ? "unknown" : a.worker();
            started[i] = a.startedAt().toString();
            finished[i] = a.finishedAt().toString();
            outcomes[i] = a.outcome();
            errors[i] = truncate(a.error());
            details[i] = storableJson(a.detail());
        }
        attemptsSql.execute(tx, keys, messageIds, numbers, versions, workers, started, finished, outcomes, errors,
                details);
    }

    // ------------------------------------------------------------------------------------- control

    /** Scopes currently paused ({@code *} for all, or a topic). */
    Set<String> pausedScopes(DSLContext dsl) {
        return new HashSet<>(dsl.select(OUTBOX_CONTROL.SCOPE).from(OUTBOX_CONTROL)
                .where(OUTBOX_CONTROL.PAUSED.isTrue()).fetch(OUTBOX_CONTROL.SCOPE));
    }

    void setPaused(DSLContext dsl, String scope, boolean paused, String reason, String actor) {
        var c = OUTBOX_CONTROL;
        dsl.insertInto(c, c.SCOPE, c.PAUSED, c.REASON, c.UPDATED_BY, c.UPDATED_AT)
                .values(val(scope), val(paused), val(reason), val(actor), clock.now())
                .onConflict(c.SCOPE).doUpdate()
                .set(c.PAUSED, paused).set(c.REASON, reason).set(c.UPDATED_BY, actor).set(c.UPDATED_AT, clock.now())
                .execute();
    }

    // ------------------------------------------------------------------------------------- helpers

    /**
     * An error text as it can be stored: U+0000 (which PostgreSQL text refuses, failing the whole
     * completion) and unpaired surrogates (which the driver would turn into '?') become U+FFFD, and
     * the text is cut to {@link #MAX_ERROR_LENGTH}. Handlers report whatever their libraries said,
     * including bytes quoted from a broken answer.
     */
    static String truncate(String error) {
        error = storable(error);
        if (error == null || error.length() <= MAX_ERROR_LENGTH) {
            return error;
        }
        int end = MAX_ERROR_LENGTH - 1;
        if (Character.isHighSurrogate(error.charAt(end - 1))) {
            end--;
        }
        return error.substring(0, end) + "…";
    }

    /** {@code text} with U+0000 and unpaired surrogates replaced by U+FFFD; the same string if it has none. */
    static String storable(String text) {
        if (text == null) {
            return null;
        }
        StringBuilder out = null;
        for (int i = 0; i < text.length(); i++) {
            char c = text.charAt(i);
            boolean pair = Character.isHighSurrogate(c) && i + 1 < text.length() && Character.isLowSurrogate(text.charAt(i + 1));
            boolean bad = c == 0 || (!pair && Character.isSurrogate(c));
            if (bad && out == null) {
                out = new StringBuilder(text.length()).append(text, 0, i);
            }
            if (out != null) {
                out.append(bad ? '\uFFFD' : c);
                if (pair) {
                    out.append(text.charAt(i + 1));
                }
            }
            if (pair) {
                i++;
            }
        }
        return out == null ? text : out.toString();
    }

    /**
     * An attempt's detail JSON as jsonb can hold it: a {@code \\u0000} escape (which jsonb refuses,
     * failing the whole completion) becomes {@code \\uFFFD}, and raw U+0000 and unpaired
     * surrogates become U+FFFD. Escaped backslashes are skipped over, so {@code "\\\\u0000"}
     * (a backslash followed by the text u0000) is left alone.
     */
    static String storableJson(String json) {
        if (json == null) {
            return null;
        }
        String text = storable(json);
        if (!text.contains("\\u0000")) {
            return text;
        }
        StringBuilder out = new StringBuilder(text.length());
        for (int i = 0; i < text.length(); i++) {
            char c = text.charAt(i);
            if (c == '\\' && i + 1 < text.length()) {
                if (text.startsWith("u0000", i + 1)) {
                    out.append("\\uFFFD");
                    i += 5;
                } else {
                    out.append(c).append(text.charAt(i + 1));
                    i++;
                }
            } else {
                out.append(c);
            }
        }
        return out.toString();
    }

    /** Reads the columns every fenced statement returns ({@link #CHANGED_ROW}), by position. */
    private static ChangedRow changedRow(ResultSet rs) throws SQLException {
        return new ChangedRow(rs.getLong(1), HotSql.instant(rs, 2), rs.getString(3), rs.getString(4), rs.getInt(5),
                rs.getInt(6), rs.getLong(7), rs.getString(8), HotSql.instant(rs, 9), rs.getString(10), null, null);
    }

    /** Reads {@link #ENDED_ROW}, by position. */
    private static ChangedRow endedRow(ResultSet rs) throws SQLException {
        return new ChangedRow(rs.getLong(1), HotSql.instant(rs, 2), rs.getString(3), rs.getString(4), rs.getInt(5),
                rs.getInt(6), rs.getLong(7), rs.getString(8), HotSql.instant(rs, 9), rs.getString(10), rs.getString(11),
                rs.getString(12));
    }
}
