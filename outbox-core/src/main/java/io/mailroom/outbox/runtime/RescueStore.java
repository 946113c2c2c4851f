package io.mailroom.outbox.runtime;

import io.mailroom.db.sql.HotSql;
import io.mailroom.db.sql.SqlClock;
import org.jooq.DSLContext;

import java.time.Duration;
import java.util.List;

import static io.mailroom.outbox.runtime.ChangedRow.ENDED_ROW;

/**
 * The statements on claims nobody is working on: leases expired, this worker's orphans, and the
 * claims an earlier process of this worker id held when it stopped. Invariant: a row is taken from
 * a claim only while it is still running under it (re-checked after the row lock), so a heartbeat
 * or a completion that committed first wins. The re-check of an expired lease is {@code
 * lease_until < now} alone (a lease means running: {@code outbox_message_lease_check}), so that
 * the UPDATE reaches its rows by primary key and does not read the lease index a second time
 * (see {@link ChangedRow#FENCED}).
 */
final class RescueStore {

    static final String RESCUE = """
            WITH expired AS (
              SELECT id, created_at FROM {schema}.outbox_message
              WHERE status = 'running' AND lease_until < {now}
              ORDER BY lease_until
              LIMIT ?
              FOR NO KEY UPDATE SKIP LOCKED
            )
            UPDATE {schema}.outbox_message AS m SET
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
              AND m.lease_until < {now}
            """ + ENDED_ROW;

    /** This worker's running claims older than a grace period, in the claim's RETURNING shape. */
    static final String OWN_RUNNING = """
            SELECT id, created_at, topic, aggregate_type, aggregate_id, idempotency_key, ordering_key, payload,
                   attempts, max_attempts, claim_version, claimed_at, lease_until
            FROM {schema}.outbox_message
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
                     1 + (SELECT count(*) FROM {schema}.outbox_attempt a
                          WHERE a.idempotency_key = o.idempotency_key AND a.message_id = o.id
                            AND a.outcome = 'interrupted') AS stops
              FROM {schema}.outbox_message o
              WHERE o.status = 'running' AND o.claimed_by = ? AND o.claimed_incarnation IS DISTINCT FROM ?
              ORDER BY o.id
              LIMIT ?
              FOR NO KEY UPDATE OF o SKIP LOCKED
            )
            UPDATE {schema}.outbox_message AS m SET
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

    private final Backoff backoff;
    private final HotSql rescueSql;
    private final HotSql ownRunningSql;
    private final HotSql interruptSql;

    RescueStore(SqlClock clock, Backoff backoff) {
        this.backoff = backoff;
        this.rescueSql = HotSql.of(RESCUE, clock);
        this.ownRunningSql = HotSql.of(OWN_RUNNING, clock);
        this.interruptSql = HotSql.of(INTERRUPT, clock);
    }

    /**
     * Claims of {@code worker} in its process {@code incarnation} that are running and were claimed more than {@code grace} ago, at
     * most {@code limit}: the caller keeps out the ones it knows it holds; the rest are claims whose
     * commit succeeded while the dispatcher saw an error (the session was killed during COMMIT), which
     * nobody is working on.
     */
    List<ClaimedMessage> ownRunning(DSLContext tx, String worker, String incarnation, Duration grace, int limit) {
        return ownRunningSql.query(tx, ClaimStore::claimedMessage, worker, incarnation, grace.toMillis() / 1000.0, limit);
    }

    /**
     * Ends up to {@code page} running claims of {@code worker} that another incarnation of it made
     * (see {@link #INTERRUPT}); returns the rows changed.
     */
    List<ChangedRow> interruptPredecessors(DSLContext tx, String worker, String incarnation, int page) {
        double baseSeconds = backoff.base().toMillis() / 1000.0;
        double capSeconds = backoff.cap().toMillis() / 1000.0;
        return interruptSql.query(tx, ChangedRow::endedRow, worker, incarnation, page, capSeconds, baseSeconds,
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
        return rescueSql.query(tx, ChangedRow::endedRow, page, capSeconds, baseSeconds, backoff.multiplier(),
                backoff.jitter());
    }
}
