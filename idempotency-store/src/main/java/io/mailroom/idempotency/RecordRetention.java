package io.mailroom.idempotency;

import org.jooq.DSLContext;

import java.time.Instant;
import java.util.List;

import static io.mailroom.db.jooq.Tables.IDEMPOTENCY_RECORD;
import static org.jooq.impl.DSL.select;

/**
 * The retention of {@code idempotency_record}, which the service runs with the outbox's history
 * retention. Only settled records (succeeded, failed) go: reserved and ambiguous ones are outcomes
 * not known yet. Rows are locked {@code FOR UPDATE SKIP LOCKED} and the state is checked again on the
 * locked row, so a record a worker is settling or reserving is never deleted under it.
 */
public final class RecordRetention {

    /** Idempotency records whose outcome is known. */
    static final List<String> SETTLED_STATES = List.of(EffectState.SUCCEEDED.dbValue(), EffectState.FAILED.dbValue());

    private RecordRetention() {
    }

    /** Deletes up to {@code limit} records settled before {@code cutoff}, oldest first, in {@code tx}. */
    public static int deleteSettledBefore(DSLContext tx, Instant cutoff, int limit) {
        var r = IDEMPOTENCY_RECORD;
        var c = IDEMPOTENCY_RECORD.as("c");
        return tx.deleteFrom(r).where(r.EFFECT_KEY.in(
                        select(c.EFFECT_KEY).from(c)
                                .where(c.STATE.in(SETTLED_STATES))
                                .and(c.UPDATED_AT.lt(cutoff))
                                .orderBy(c.UPDATED_AT)
                                .limit(limit)
                                .forUpdate().skipLocked()))
                .and(r.STATE.in(SETTLED_STATES))
                .execute();
    }
}
