package io.mailroom.outbox.runtime;

import io.mailroom.outbox.MessageStatus;
import io.mailroom.db.sql.HotSql;
import io.mailroom.db.sql.SqlClock;
import org.jooq.Condition;
import org.jooq.DSLContext;
import org.jooq.impl.DSL;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashSet;
import java.util.List;
import java.util.Set;

import static io.mailroom.db.jooq.Tables.OUTBOX_MESSAGE;
import static io.mailroom.outbox.runtime.ChangedRow.CHANGED_ROW;
import static io.mailroom.outbox.runtime.ChangedRow.FENCED;
import static io.mailroom.outbox.runtime.ChangedRow.FENCE_ARRAYS;

/**
 * The statements on claims still held: extending their leases, handing them back without counting
 * the attempt, and asking which are still held. All fenced (see {@link ChangedRow}).
 */
final class LeaseStore {

    private static final String RUNNING = MessageStatus.RUNNING.sql();

    static final String HEARTBEAT = """
            UPDATE {schema}.outbox_message AS m SET lease_until = {now} + make_interval(secs => ?::double precision)
            FROM\s""" + FENCE_ARRAYS + FENCED + "RETURNING m.id";

    static final String RELEASE = """
            UPDATE {schema}.outbox_message AS m SET
              status = 'pending', available_at = {now}, lease_until = NULL,
              attempts = greatest(m.attempts - 1, 0), updated_at = {now}
            FROM\s""" + FENCE_ARRAYS + FENCED + CHANGED_ROW;

    private final HotSql heartbeatSql;
    private final HotSql releaseSql;

    LeaseStore(SqlClock clock) {
        this.heartbeatSql = HotSql.of(HEARTBEAT, clock);
        this.releaseSql = HotSql.of(RELEASE, clock);
    }

    /** Extends the leases of held claims; returns the ids whose claim still holds. */
    Set<Long> heartbeat(DSLContext tx, Collection<ClaimedMessage> held, Duration lease) {
        Object[] fence = ChangedRow.fence(held);
        return new HashSet<>(heartbeatSql.query(tx, rs -> rs.getLong(1),
                lease.toMillis() / 1000.0, fence[0], fence[1], fence[2]));
    }

    /**
     * Hands claims back to the queue without counting the attempt (graceful stop): pending, available
     * at once, attempts decremented. Returns the rows changed.
     */
    List<ChangedRow> release(DSLContext tx, Collection<ClaimedMessage> held) {
        Object[] fence = ChangedRow.fence(held);
        return releaseSql.query(tx, ChangedRow::changedRow, fence[0], fence[1], fence[2]);
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
}
