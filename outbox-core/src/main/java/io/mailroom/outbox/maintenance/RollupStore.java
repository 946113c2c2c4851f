package io.mailroom.outbox.maintenance;

import io.mailroom.db.MailroomSchema;
import io.mailroom.db.sql.SqlClock;
import io.mailroom.outbox.admin.TopicRollup;
import org.jooq.DSLContext;
import org.jooq.impl.DSL;

import java.time.Duration;
import java.time.Instant;

import static io.mailroom.db.jooq.Tables.OUTBOX_ATTEMPT;
import static io.mailroom.db.jooq.Tables.OUTBOX_ROLLUP;
import static io.mailroom.db.jooq.Tables.OUTBOX_ROLLUP_MARK;
import static org.jooq.impl.DSL.val;

/** Every SQL statement of the {@link StatsRollup}, in one place. */
final class RollupStore {

    /**
     * Folds the attempts that finished in {@code [?, ?)} into minute and hour buckets by topic, adding
     * to what the buckets hold; answers the number of attempts folded. The attempts are read through
     * {@code outbox_attempt_finished_idx}, and each one's topic is looked up in its effect by primary
     * key (outbox_attempt has no topic column; an attempt whose effect is gone counts under "unknown").
     * The lookup is a scalar subquery on purpose: as a join, a busy minute (300,000 attempts) made the
     * planner hash the whole of outbox_effect (7 s at 10 M emails) instead of 300,000 lookups (1.4 s).
     * Both upserts run in this one statement, so the minute and hour buckets never disagree.
     */
    static final String FOLD = """
            WITH folded AS (
                SELECT date_bin('1 minute', a.finished_at, timestamptz '2000-01-01 00:00:00+00') AS bucket,
                       coalesce((SELECT e.topic FROM {schema}.outbox_effect e WHERE e.idempotency_key = a.idempotency_key),
                                'unknown') AS topic,
                       count(*) FILTER (WHERE a.outcome = 'done') AS sent,
                       count(*) FILTER (WHERE a.outcome = 'retry') AS retried,
                       count(*) FILTER (WHERE a.outcome = 'failed') AS failed,
                       count(*) FILTER (WHERE a.outcome = 'review') AS review,
                       count(*) FILTER (WHERE a.outcome NOT IN ('done', 'retry', 'failed', 'review')) AS other
                FROM {schema}.outbox_attempt a
                WHERE a.finished_at >= ?::timestamptz AND a.finished_at < ?::timestamptz
                GROUP BY 1, 2
            ), minutes AS (
                INSERT INTO {schema}.outbox_rollup AS r (resolution, bucket, topic, sent, retried, failed, review, other)
                SELECT 'minute', bucket, topic, sent, retried, failed, review, other FROM folded
                ON CONFLICT (resolution, bucket, topic) DO UPDATE SET sent = r.sent + excluded.sent,
                    retried = r.retried + excluded.retried, failed = r.failed + excluded.failed,
                    review = r.review + excluded.review, other = r.other + excluded.other
                RETURNING 1
            ), hours AS (
                INSERT INTO {schema}.outbox_rollup AS r (resolution, bucket, topic, sent, retried, failed, review, other)
                SELECT 'hour', date_bin('1 hour', bucket, timestamptz '2000-01-01 00:00:00+00'), topic,
                       sum(sent), sum(retried), sum(failed), sum(review), sum(other)
                FROM folded GROUP BY 2, 3
                ON CONFLICT (resolution, bucket, topic) DO UPDATE SET sent = r.sent + excluded.sent,
                    retried = r.retried + excluded.retried, failed = r.failed + excluded.failed,
                    review = r.review + excluded.review, other = r.other + excluded.other
                RETURNING 1
            )
            SELECT coalesce(sum(sent + retried + failed + review + other), 0)::bigint FROM folded""";

    /**
     * Samples the emails waiting (pending) per topic now, through the claim index's rows, into the
     * minute and hour buckets of {@code ?}/{@code ?} (the most seen in the bucket). Topics that had
     * traffic or a backlog since {@code ?} and have none now get a 0, so their line comes down.
     */
    static final String SAMPLE = """
            WITH depth AS (
                SELECT topic, count(*) AS n FROM {schema}.outbox_message WHERE status = 'pending' GROUP BY topic
            ), known AS (
                SELECT DISTINCT topic FROM {schema}.outbox_rollup
                WHERE resolution = 'hour' AND bucket >= ?::timestamptz AND (sent + retried + failed + review + other > 0 OR waiting > 0)
            ), sample AS (
                SELECT coalesce(d.topic, k.topic) AS topic, coalesce(d.n, 0) AS n
                FROM depth d FULL JOIN known k ON k.topic = d.topic
            )
            INSERT INTO {schema}.outbox_rollup AS r (resolution, bucket, topic, waiting)
            SELECT v.resolution, v.bucket, s.topic, s.n
            FROM sample s CROSS JOIN (VALUES ('minute', ?::timestamptz), ('hour', ?::timestamptz)) AS v(resolution, bucket)
            ON CONFLICT (resolution, bucket, topic) DO UPDATE SET waiting = greatest(r.waiting, excluded.waiting)""";

    private final SqlClock clock;

    RollupStore(SqlClock clock) {
        this.clock = clock;
    }

    /** "now" of the clock: the injected one, or the database's. */
    Instant now(DSLContext tx) {
        return tx.select(clock.now()).fetchSingle().value1();
    }

    /** Bounds this transaction's lock waits and statements ({@code SET LOCAL}, so pooled sessions keep theirs). */
    void limitTransaction(DSLContext tx, Duration lockTimeout, Duration statementTimeout) {
        tx.select(DSL.function("set_config", String.class, val("lock_timeout"), val(lockTimeout.toMillis() + "ms"), val(true)),
                DSL.function("set_config", String.class, val("statement_timeout"), val(statementTimeout.toMillis() + "ms"),
                        val(true))).fetch();
    }

    /** The mark row, made with {@code foldedUntil} if it does not exist yet (a database's first run). */
    void createMark(DSLContext tx, Instant foldedUntil) {
        var m = OUTBOX_ROLLUP_MARK;
        tx.insertInto(m).set(m.NAME, TopicRollup.MARK).set(m.FOLDED_UNTIL, foldedUntil).set(m.UPDATED_AT, clock.now())
                .onConflict(m.NAME).doNothing().execute();
    }

    /** The mark, locked for this transaction; null while another run holds it (it is folding: nothing to do). */
    TopicRollup.Mark lockMark(DSLContext tx) {
        var m = OUTBOX_ROLLUP_MARK;
        return tx.select(m.FOLDED_UNTIL, m.SAMPLED_AT).from(m).where(m.NAME.eq(TopicRollup.MARK))
                .forUpdate().skipLocked()
                .fetchOptional(r -> new TopicRollup.Mark(r.value1(), r.value2())).orElse(null);
    }

    void advance(DSLContext tx, Instant foldedUntil) {
        var m = OUTBOX_ROLLUP_MARK;
        tx.update(m).set(m.FOLDED_UNTIL, foldedUntil).set(m.UPDATED_AT, clock.now()).where(m.NAME.eq(TopicRollup.MARK)).execute();
    }

    void sampled(DSLContext tx, Instant at) {
        var m = OUTBOX_ROLLUP_MARK;
        tx.update(m).set(m.SAMPLED_AT, at).set(m.UPDATED_AT, clock.now()).where(m.NAME.eq(TopicRollup.MARK)).execute();
    }

    /**
     * When the attempt {@code n} places after {@code from} finished, among those that finished in
     * {@code [from, to)}; null when fewer did. Read through the {@code finished_at} index alone.
     */
    Instant nthFinished(DSLContext tx, Instant from, Instant to, int n) {
        var a = OUTBOX_ATTEMPT;
        return tx.select(a.FINISHED_AT).from(a).where(a.FINISHED_AT.ge(from)).and(a.FINISHED_AT.lt(to))
                .orderBy(a.FINISHED_AT).offset(n).limit(1).fetchOptional(a.FINISHED_AT).orElse(null);
    }

    /** Folds the attempts that finished in {@code [from, to)}; returns how many. */
    long fold(DSLContext tx, Instant from, Instant to) {
        return tx.fetchSingle(MailroomSchema.of(tx).sql(FOLD), from, to).get(0, Long.class);
    }

    /** Samples the emails waiting per topic at {@code at}; topics seen since {@code knownSince} get a 0 when none wait. */
    void sample(DSLContext tx, Instant at, Instant knownSince) {
        tx.execute(MailroomSchema.of(tx).sql(SAMPLE), knownSince, TopicRollup.Resolution.MINUTE.floor(at),
                TopicRollup.Resolution.HOUR.floor(at));
    }

    /** Deletes minute buckets before {@code minutesBefore} and hour buckets before {@code hoursBefore}. */
    int deleteOld(DSLContext tx, Instant minutesBefore, Instant hoursBefore) {
        var r = OUTBOX_ROLLUP;
        return tx.deleteFrom(r).where(r.RESOLUTION.eq(TopicRollup.Resolution.MINUTE.dbValue()).and(r.BUCKET.lt(minutesBefore)))
                .or(r.RESOLUTION.eq(TopicRollup.Resolution.HOUR.dbValue()).and(r.BUCKET.lt(hoursBefore)))
                .execute();
    }
}
