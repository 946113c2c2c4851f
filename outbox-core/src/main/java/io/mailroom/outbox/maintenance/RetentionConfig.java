package io.mailroom.outbox.maintenance;

import io.mailroom.outbox.Checks;
import java.time.Clock;
import java.time.Duration;

/**
 * Immutable settings of retention: the {@link PartitionMaintainer} (daily partitions of the hot
 * queue) and the {@link HistoryCleaner} (support history). Build with {@link #builder()};
 * {@link Builder#build()} rejects bad or conflicting values with a message naming the setting, and
 * never clamps silently.
 *
 * @param partitionsAhead         days of partitions created after today (UTC); yesterday and today are always made
 * @param hotRetention            how long finished rows stay in the hot table, counted from the end of their
 *                                partition's day; at least one day
 * @param historyRetention        how long finished support history ({@code outbox_effect}, {@code outbox_attempt},
 *                                {@code idempotency_record}) is kept; also the window in which a reused idempotency
 *                                key is still recognised, so at least {@code hotRetention}
 * @param auditRetention          how long {@code audit_log} entries are kept
 * @param historyBatchSize        rows one history delete takes (each batch is its own short transaction)
 * @param historyMaxBatchesPerRun batches per table and run, so one run stays bounded however big the backlog
 * @param lockTimeout             {@code lock_timeout} of the partition DDL: claims and enqueues queue behind a waiting
 *                                DETACH/CREATE for at most this long, then the maintainer gives up until its next run
 * @param statementTimeout        {@code statement_timeout} of every retention statement (VACUUM included)
 * @param freezeMinXidAge         a kept partition is frozen once {@code age(relfrozenxid)} exceeds this; the default is
 *                                PostgreSQL's {@code vacuum_freeze_min_age} default
 * @param clock                   time source; null (default) means the database's {@code now()}
 */
public record RetentionConfig(
        int partitionsAhead,
        Duration hotRetention,
        Duration historyRetention,
        Duration auditRetention,
        int historyBatchSize,
        int historyMaxBatchesPerRun,
        Duration lockTimeout,
        Duration statementTimeout,
        long freezeMinXidAge,
        Clock clock) {

    public static final int DEFAULT_PARTITIONS_AHEAD = 7;
    public static final Duration DEFAULT_HOT_RETENTION = Duration.ofDays(3);
    public static final Duration DEFAULT_HISTORY_RETENTION = Duration.ofDays(90);
    /** The audit log is kept as long as the history unless set otherwise. */
    public static final Duration DEFAULT_AUDIT_RETENTION = DEFAULT_HISTORY_RETENTION;
    public static final int DEFAULT_HISTORY_BATCH_SIZE = 1000;
    public static final int DEFAULT_HISTORY_MAX_BATCHES_PER_RUN = 100;
    public static final Duration DEFAULT_LOCK_TIMEOUT = Duration.ofSeconds(2);
    public static final Duration DEFAULT_STATEMENT_TIMEOUT = Duration.ofMinutes(5);
    public static final long DEFAULT_FREEZE_MIN_XID_AGE = 50_000_000L;

    /** Longest lock_timeout accepted: every claim and enqueue waits behind a queued DETACH this long. */
    public static final Duration MAX_LOCK_TIMEOUT = Duration.ofSeconds(30);

    public static RetentionConfig defaults() {
        return builder().build();
    }

    public static Builder builder() {
        return new Builder();
    }

    public Builder toBuilder() {
        Builder b = new Builder();
        b.partitionsAhead = partitionsAhead;
        b.hotRetention = hotRetention;
        b.historyRetention = historyRetention;
        b.auditRetention = auditRetention;
        b.historyBatchSize = historyBatchSize;
        b.historyMaxBatchesPerRun = historyMaxBatchesPerRun;
        b.lockTimeout = lockTimeout;
        b.statementTimeout = statementTimeout;
        b.freezeMinXidAge = freezeMinXidAge;
        b.clock = clock;
        return b;
    }

    public static final class Builder {
        private int partitionsAhead = DEFAULT_PARTITIONS_AHEAD;
        private Duration hotRetention = DEFAULT_HOT_RETENTION;
        private Duration historyRetention = DEFAULT_HISTORY_RETENTION;
        private Duration auditRetention;
        private int historyBatchSize = DEFAULT_HISTORY_BATCH_SIZE;
        private int historyMaxBatchesPerRun = DEFAULT_HISTORY_MAX_BATCHES_PER_RUN;
        private Duration lockTimeout = DEFAULT_LOCK_TIMEOUT;
        private Duration statementTimeout = DEFAULT_STATEMENT_TIMEOUT;
        private long freezeMinXidAge = DEFAULT_FREEZE_MIN_XID_AGE;
        private Clock clock;

        private Builder() {
        }

        /** Days of partitions created after today, 1..90. */
        public Builder partitionsAhead(int v) { this.partitionsAhead = v; return this; }
        /** How long finished rows stay in the hot table after their day ends; at least 1 day. */
        public Builder hotRetention(Duration v) { this.hotRetention = v; return this; }
        /** How long finished support history is kept; at least hotRetention. */
        public Builder historyRetention(Duration v) { this.historyRetention = v; return this; }
        /** How long audit log entries are kept; default the history retention. */
        public Builder auditRetention(Duration v) { this.auditRetention = v; return this; }
        /** Rows one history delete takes, 1..100000. */
        public Builder historyBatchSize(int v) { this.historyBatchSize = v; return this; }
        /** History delete batches per table and run, 1..100000. */
        public Builder historyMaxBatchesPerRun(int v) { this.historyMaxBatchesPerRun = v; return this; }
        /** lock_timeout of the partition DDL, up to {@link #MAX_LOCK_TIMEOUT}. */
        public Builder lockTimeout(Duration v) { this.lockTimeout = v; return this; }
        /** statement_timeout of retention statements. */
        public Builder statementTimeout(Duration v) { this.statementTimeout = v; return this; }
        /** Transaction age past which a kept partition is frozen; 0 freezes at every run. */
        public Builder freezeMinXidAge(long v) { this.freezeMinXidAge = v; return this; }
        /** Time source; null (default) means the database's now(). */
        public Builder clock(Clock v) { this.clock = v; return this; }

        public RetentionConfig build() {
            Checks.range("partitionsAhead", partitionsAhead, 1, 90);
            Checks.range("historyBatchSize", historyBatchSize, 1, 100_000);
            Checks.range("historyMaxBatchesPerRun", historyMaxBatchesPerRun, 1, 100_000);
            Checks.atLeast("hotRetention", hotRetention, Duration.ofDays(1),
                    "a partition holds a whole day, and yesterday's must not be dropped while it is still written");
            Checks.atLeast("historyRetention", historyRetention, Duration.ofDays(1), null);
            Duration audit = auditRetention == null ? historyRetention : auditRetention;
            Checks.atLeast("auditRetention", audit, Duration.ofDays(1), null);
            if (historyRetention.compareTo(hotRetention) < 0) {
                throw new IllegalArgumentException("historyRetention (" + historyRetention
                        + ") must be at least hotRetention (" + hotRetention
                        + "): the support history must outlive the hot rows it describes");
            }
            Checks.positive("lockTimeout", lockTimeout);
            if (lockTimeout.compareTo(MAX_LOCK_TIMEOUT) > 0) {
                throw new IllegalArgumentException("lockTimeout must be at most " + MAX_LOCK_TIMEOUT + ", got "
                        + lockTimeout + ": claims and enqueues wait behind a queued DETACH that long");
            }
            if (lockTimeout.toMillis() < 1) {
                throw new IllegalArgumentException("lockTimeout must be at least 1ms, got " + lockTimeout);
            }
            Checks.positive("statementTimeout", statementTimeout);
            if (statementTimeout.toMillis() < 1 || statementTimeout.toMillis() > Integer.MAX_VALUE) {
                throw new IllegalArgumentException("statementTimeout must be between 1ms and "
                        + Duration.ofMillis(Integer.MAX_VALUE) + ", got " + statementTimeout);
            }
            if (freezeMinXidAge < 0 || freezeMinXidAge > 1_000_000_000L) {
                throw new IllegalArgumentException("freezeMinXidAge must be between 0 and 1000000000, got "
                        + freezeMinXidAge);
            }
            return new RetentionConfig(partitionsAhead, hotRetention, historyRetention, audit, historyBatchSize,
                    historyMaxBatchesPerRun, lockTimeout, statementTimeout, freezeMinXidAge, clock);
        }
    }
}
