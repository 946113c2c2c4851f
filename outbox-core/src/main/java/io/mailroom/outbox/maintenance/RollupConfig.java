package io.mailroom.outbox.maintenance;

import io.mailroom.outbox.Checks;
import io.mailroom.outbox.InvalidSettingException;

import java.time.Clock;
import java.time.Duration;

/**
 * Immutable settings of the {@link StatsRollup}. Build with {@link #builder()}; {@link Builder#build()}
 * rejects bad or conflicting values with a message naming the setting, and never clamps silently.
 *
 * @param settle           how long after a minute ends before it is folded: an attempt whose row arrives later
 *                         than this after its {@code finished_at} (a completion retried after a database blip, a
 *                         worker clock that lags) is not counted. 0..10 min
 * @param foldChunk        minutes of attempts folded in one transaction at most (whole minutes, 1 min..1 day); a
 *                         backlog (after an upgrade, or a stop) is folded chunk by chunk
 * @param chunkAttempts    attempts folded in one transaction at most: a chunk ends at the minute that holds this
 *                         many (a single minute is always folded whole), so a dense backlog read from disk still
 *                         fits the statement timeout
 * @param maxChunksPerRun  chunks one run folds at most, so one run stays bounded however big the backlog
 * @param backfill         how far back the first run of a database starts (at most {@code hourRetention})
 * @param minuteRetention  how long minute buckets are kept: the 24-hour charts read them, so at least 25 hours
 * @param hourRetention    how long hour buckets are kept: the 7-day charts read them, so at least 7 days and 1 hour
 * @param lockTimeout      {@code lock_timeout} of the rollup's statements
 * @param statementTimeout {@code statement_timeout} of the rollup's statements
 * @param clock            time source; null (default) means the database's {@code now()}
 */
public record RollupConfig(Duration settle, Duration foldChunk, int chunkAttempts, int maxChunksPerRun, Duration backfill,
                           Duration minuteRetention, Duration hourRetention, Duration lockTimeout,
                           Duration statementTimeout, Clock clock) {

    public static final Duration DEFAULT_SETTLE = Duration.ofSeconds(30);
    public static final Duration DEFAULT_FOLD_CHUNK = Duration.ofMinutes(10);
    public static final int DEFAULT_CHUNK_ATTEMPTS = 100_000;
    /** A day of ten-minute chunks. */
    public static final int DEFAULT_MAX_CHUNKS_PER_RUN = 144;
    public static final Duration DEFAULT_BACKFILL = Duration.ofDays(7);
    public static final Duration DEFAULT_MINUTE_RETENTION = Duration.ofDays(2);
    public static final Duration DEFAULT_HOUR_RETENTION = Duration.ofDays(8);
    public static final Duration DEFAULT_LOCK_TIMEOUT = Duration.ofSeconds(2);
    public static final Duration DEFAULT_STATEMENT_TIMEOUT = Duration.ofMinutes(1);

    public static RollupConfig defaults() {
        return builder().build();
    }

    public static Builder builder() {
        return new Builder();
    }

    public Builder toBuilder() {
        Builder b = new Builder();
        b.settle = settle;
        b.foldChunk = foldChunk;
        b.chunkAttempts = chunkAttempts;
        b.maxChunksPerRun = maxChunksPerRun;
        b.backfill = backfill;
        b.minuteRetention = minuteRetention;
        b.hourRetention = hourRetention;
        b.lockTimeout = lockTimeout;
        b.statementTimeout = statementTimeout;
        b.clock = clock;
        return b;
    }

    public static final class Builder {
        private Duration settle = DEFAULT_SETTLE;
        private Duration foldChunk = DEFAULT_FOLD_CHUNK;
        private int chunkAttempts = DEFAULT_CHUNK_ATTEMPTS;
        private int maxChunksPerRun = DEFAULT_MAX_CHUNKS_PER_RUN;
        private Duration backfill = DEFAULT_BACKFILL;
        private Duration minuteRetention = DEFAULT_MINUTE_RETENTION;
        private Duration hourRetention = DEFAULT_HOUR_RETENTION;
        private Duration lockTimeout = DEFAULT_LOCK_TIMEOUT;
        private Duration statementTimeout = DEFAULT_STATEMENT_TIMEOUT;
        private Clock clock;

        private Builder() {
        }

        /** How long after a minute ends before it is folded, 0..10 min. */
        public Builder settle(Duration v) { this.settle = v; return this; }
        /** Minutes folded per transaction, whole minutes, 1 min..1 day. */
        public Builder foldChunk(Duration v) { this.foldChunk = v; return this; }
        /** Attempts folded per transaction at most (a minute is folded whole), 1..10000000. */
        public Builder chunkAttempts(int v) { this.chunkAttempts = v; return this; }
        /** Chunks per run, 1..100000. */
        public Builder maxChunksPerRun(int v) { this.maxChunksPerRun = v; return this; }
        /** How far back a database's first run starts, 0..hourRetention. */
        public Builder backfill(Duration v) { this.backfill = v; return this; }
        /** How long minute buckets are kept, at least 25 h. */
        public Builder minuteRetention(Duration v) { this.minuteRetention = v; return this; }
        /** How long hour buckets are kept, at least 7 d 1 h. */
        public Builder hourRetention(Duration v) { this.hourRetention = v; return this; }
        /** lock_timeout of the rollup's statements, 1 ms..30 s. */
        public Builder lockTimeout(Duration v) { this.lockTimeout = v; return this; }
        /** statement_timeout of the rollup's statements. */
        public Builder statementTimeout(Duration v) { this.statementTimeout = v; return this; }
        /** Time source; null (default) means the database's now(). */
        public Builder clock(Clock v) { this.clock = v; return this; }

        public RollupConfig build() {
            Checks.notNegative("settle", settle);
            Checks.atMost("settle", settle, Duration.ofMinutes(10));
            Checks.atLeast("foldChunk", foldChunk, Duration.ofMinutes(1), null);
            Checks.atMost("foldChunk", foldChunk, Duration.ofDays(1));
            if (foldChunk.toSecondsPart() != 0 || foldChunk.toNanosPart() != 0) {
                throw new InvalidSettingException("foldChunk", "foldChunk must be whole minutes, got " + foldChunk);
            }
            Checks.range("chunkAttempts", chunkAttempts, 1, 10_000_000);
            Checks.range("maxChunksPerRun", maxChunksPerRun, 1, 100_000);
            Checks.atLeast("minuteRetention", minuteRetention, Duration.ofHours(25),
                    "the 24-hour charts read minute buckets");
            Checks.atLeast("hourRetention", hourRetention, Duration.ofDays(7).plusHours(1),
                    "the 7-day charts read hour buckets");
            Checks.notNegative("backfill", backfill);
            Checks.atMost("backfill", backfill, hourRetention);
            Checks.positive("lockTimeout", lockTimeout);
            Checks.atMost("lockTimeout", lockTimeout, Duration.ofSeconds(30));
            if (lockTimeout.toMillis() < 1) {
                throw new InvalidSettingException("lockTimeout", "lockTimeout must be at least 1ms, got " + lockTimeout);
            }
            Checks.positive("statementTimeout", statementTimeout);
            Checks.atMost("statementTimeout", statementTimeout, Duration.ofHours(1));
            if (statementTimeout.toMillis() < 1) {
                throw new InvalidSettingException("statementTimeout", "statementTimeout must be at least 1ms, got "
                        + statementTimeout);
            }
            return new RollupConfig(settle, foldChunk, chunkAttempts, maxChunksPerRun, backfill, minuteRetention, hourRetention,
                    lockTimeout, statementTimeout, clock);
        }
    }
}
