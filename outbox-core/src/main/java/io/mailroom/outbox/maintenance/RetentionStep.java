package io.mailroom.outbox.maintenance;

import org.jooq.DSLContext;

import java.time.Instant;
import java.util.List;

/**
 * The retention of one table another module owns (renderings, delivery events, idempotency records),
 * run by {@link HistoryCleaner} so that each owner keeps every statement over its table. The owner
 * never names outbox-core's tables: history that belongs to an effect is handed over as the effects
 * are deleted ({@link #deleteWithEffects}, in the transaction that deletes them), and the owner's own
 * pass ({@link #deleteOld}) asks whether an effect still exists through {@link EffectPresence}.
 *
 * <p>Invariants the owner keeps, the same as outbox-core's own tables: nothing that a kept effect
 * (pending, running, review, or finished but younger than the cutoff) needs is deleted; rows are
 * locked {@code FOR UPDATE SKIP LOCKED}, so retention never waits for a worker or a person; one call
 * of {@link #deleteOld} deletes at most {@code limit} rows.
 */
public interface RetentionStep {

    /** An effect deleted by retention: its key and the outbox message it was. */
    record DeletedEffect(String idempotencyKey, long messageId, Instant messageCreatedAt) {
    }

    /** The owner's table, for logs and the run's report. */
    String table();

    /**
     * Deletes this table's rows that belong to {@code effects}, which were deleted in {@code tx}, if
     * they are also older than {@code cutoff}; rows it skips are left to {@link #deleteOld}.
     */
    default int deleteWithEffects(DSLContext tx, List<DeletedEffect> effects, Instant cutoff) {
        return 0;
    }

    /**
     * Deletes up to {@code limit} rows older than {@code cutoff} that no kept effect needs: rows of
     * effects long gone and rows that never had one.
     */
    int deleteOld(DSLContext tx, Instant cutoff, int limit);
}
