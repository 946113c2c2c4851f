package io.mailroom.outbox.maintenance;

import org.jooq.DSLContext;

import java.time.Instant;

/**
 * The retention of a rollup another module owns (delivery-events' bounces by time), run by
 * {@link StatsRollup} with the same cutoffs as its own buckets, so that every chart's ranges stay
 * filled alike and the owner keeps every statement over its table.
 */
public interface RollupStep {

    /** The owner's table, for logs and the run's report. */
    String table();

    /**
     * Deletes this rollup's minute buckets that start before {@code minutesBefore} and its hour
     * buckets that start before {@code hoursBefore}; returns the rows deleted.
     */
    int deleteBefore(DSLContext tx, Instant minutesBefore, Instant hoursBefore);
}
