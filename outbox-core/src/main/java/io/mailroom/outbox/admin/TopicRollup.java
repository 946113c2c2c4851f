package io.mailroom.outbox.admin;

import io.mailroom.db.jooq.tables.OutboxRollup;
import org.jooq.DSLContext;
import org.jooq.Field;
import org.jooq.Record8;
import org.jooq.ResultQuery;
import org.jooq.impl.DSL;
import org.jooq.impl.SQLDataType;

import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Locale;
import java.util.Objects;

import static io.mailroom.db.jooq.Tables.OUTBOX_ROLLUP;
import static io.mailroom.db.jooq.Tables.OUTBOX_ROLLUP_MARK;

/**
 * Reads of the attempts rollup ({@code outbox_rollup}) behind the charts by topic, which the
 * {@code StatsRollup} maintenance role fills: counts of attempt outcomes per bucket and topic, and
 * the emails waiting per topic as sampled once a minute. A read touches only rollup rows (a week of
 * one topic is 168 hour rows), never {@code outbox_attempt} or the hot queue, so it costs the same
 * at any volume of email. In the caller's transaction; never locks.
 */
public final class TopicRollup {

    private static final OutboxRollup R = OUTBOX_ROLLUP;
    /** The mark row of the attempts fold. */
    public static final String MARK = "attempts";

    private TopicRollup() {
    }

    /** The two sizes of bucket the rollup keeps. */
    public enum Resolution {
        MINUTE(Duration.ofMinutes(1)),
        HOUR(Duration.ofHours(1));

        private final Duration size;

        Resolution(Duration size) {
            this.size = size;
        }

        public Duration size() {
            return size;
        }

        /** The spelling in the rollup tables' {@code resolution} column. */
        public String dbValue() {
            return name().toLowerCase(Locale.ROOT);
        }

        /** {@code t} cut down to the start of its bucket (UTC). */
        public Instant floor(Instant t) {
            long s = size.toSeconds();
            return Instant.ofEpochSecond(Math.floorDiv(t.getEpochSecond(), s) * s);
        }
    }

    /**
     * One bucket of one topic.
     *
     * @param sent    attempts the provider accepted
     * @param retried attempts that failed and will be tried again
     * @param failed  attempts that failed for good
     * @param review  attempts parked for review (outcome unknown)
     * @param waiting the most emails seen waiting (pending) in the bucket; null when no sample was taken in it
     */
    public record Bucket(Instant start, String topic, long sent, long retried, long failed, long review, long other,
                         Long waiting) {
    }

    /**
     * How far the rollup got.
     *
     * @param foldedUntil every attempt that finished before this is counted
     * @param sampledAt   when the emails waiting were last sampled, or null
     */
    public record Mark(Instant foldedUntil, Instant sampledAt) {
    }

    /** {@code date_bin(step, t, 2000-01-01 UTC)}: the start of {@code t}'s step, whatever the session's time zone. */
    public static Field<Instant> bin(Duration step, Field<Instant> t) {
        return DSL.field("date_bin(cast({0} as interval), {1}, timestamptz '2000-01-01 00:00:00+00')", SQLDataType.INSTANT,
                DSL.inline(step.toSeconds() + " seconds"), t);
    }

    /**
     * The buckets of {@code resolution} in {@code [from, to)}, merged into steps of {@code step} (a
     * multiple of the resolution: counts summed, waiting the most of its samples), by step and
     * topic. Unexecuted, so that a test can EXPLAIN exactly what runs.
     */
    public static ResultQuery<Record8<Instant, String, Long, Long, Long, Long, Long, Long>> query(
            DSLContext tx, Resolution resolution, Instant from, Instant to, Duration step) {
        Objects.requireNonNull(resolution, "resolution");
        if (step.isNegative() || step.isZero() || step.toSeconds() % resolution.size().toSeconds() != 0) {
            throw new IllegalArgumentException("step must be a positive multiple of " + resolution.size() + ", got " + step);
        }
        Field<Instant> b = bin(step, R.BUCKET);
        return tx.select(b, R.TOPIC, sum(R.SENT), sum(R.RETRIED), sum(R.FAILED), sum(R.REVIEW), sum(R.OTHER),
                        DSL.max(R.WAITING))
                .from(R)
                .where(R.RESOLUTION.eq(resolution.dbValue()))
                .and(R.BUCKET.ge(from))
                .and(R.BUCKET.lt(to))
                .groupBy(b, R.TOPIC)
                .orderBy(b, R.TOPIC);
    }

    /** {@link #query}'s rows. */
    public static List<Bucket> read(DSLContext tx, Resolution resolution, Instant from, Instant to, Duration step) {
        return query(tx, resolution, from, to, step).fetch(r -> new Bucket(r.value1(), r.value2(), r.value3(), r.value4(),
                r.value5(), r.value6(), r.value7(), r.value8()));
    }

    /** How far the rollup got, or null when it never ran on this database. */
    public static Mark mark(DSLContext tx) {
        var m = OUTBOX_ROLLUP_MARK;
        return tx.select(m.FOLDED_UNTIL, m.SAMPLED_AT).from(m).where(m.NAME.eq(MARK))
                .fetchOptional(r -> new Mark(r.value1(), r.value2())).orElse(null);
    }

    private static Field<Long> sum(Field<Long> f) {
        return DSL.coalesce(DSL.sum(f), DSL.inline(java.math.BigDecimal.ZERO)).cast(SQLDataType.BIGINT);
    }
}
