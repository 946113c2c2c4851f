package io.mailroom.delivery;

import io.mailroom.outbox.admin.TopicRollup;
import io.mailroom.outbox.admin.TopicRollup.Resolution;
import io.mailroom.outbox.maintenance.RollupStep;
import org.jooq.DSLContext;
import org.jooq.Field;
import org.jooq.Record5;
import org.jooq.ResultQuery;
import org.jooq.impl.DSL;
import org.jooq.impl.SQLDataType;

import java.time.Duration;
import java.time.Instant;
import java.util.List;

import static io.mailroom.db.jooq.Tables.DELIVERY_EVENT_ROLLUP;

/**
 * Bounces and complaints by time and topic ({@code delivery_event_rollup}), for the charts by
 * topic: counted by the trigger on {@code delivery_event} in the transaction that stores each event,
 * by minute and by hour of arrival, with the topic of the email it matched ({@code none} for an
 * orphan). A read touches only these rows, never the events themselves. {@link #RETENTION} forgets
 * old buckets with the outbox's own rollup.
 */
public final class DeliveryEventRollup {

    private static final io.mailroom.db.jooq.tables.DeliveryEventRollup R = DELIVERY_EVENT_ROLLUP;

    private DeliveryEventRollup() {
    }

    /**
     * Events of one kind in one bucket of one topic.
     *
     * @param kind   {@code bounced} or {@code complained}
     * @param bounce {@code hard}, {@code soft}, or {@code none} for a complaint
     */
    public record Bucket(Instant start, String topic, String kind, String bounce, long events) {
    }

    /**
     * The buckets of {@code resolution} in {@code [from, to)}, merged into steps of {@code step} (a
     * multiple of the resolution). Unexecuted, so a test can EXPLAIN what runs.
     */
    public static ResultQuery<Record5<Instant, String, String, String, Long>> query(
            DSLContext tx, Resolution resolution, Instant from, Instant to, Duration step) {
        if (step.isNegative() || step.isZero() || step.toSeconds() % resolution.size().toSeconds() != 0) {
            throw new IllegalArgumentException("step must be a positive multiple of " + resolution.size() + ", got " + step);
        }
        Field<Instant> b = TopicRollup.bin(step, R.BUCKET);
        return tx.select(b, R.TOPIC, R.KIND, R.BOUNCE, DSL.sum(R.EVENTS).cast(SQLDataType.BIGINT))
                .from(R)
                .where(R.RESOLUTION.eq(resolution.dbValue()))
                .and(R.BUCKET.ge(from))
                .and(R.BUCKET.lt(to))
                .groupBy(b, R.TOPIC, R.KIND, R.BOUNCE)
                .orderBy(b, R.TOPIC, R.KIND, R.BOUNCE);
    }

    public static List<Bucket> read(DSLContext tx, Resolution resolution, Instant from, Instant to, Duration step) {
        return query(tx, resolution, from, to, step)
                .fetch(r -> new Bucket(r.value1(), r.value2(), r.value3(), r.value4(), r.value5()));
    }

    /** Deletes old buckets with the cutoffs of the outbox's rollup (run by its maintenance role). */
    public static final RollupStep RETENTION = new RollupStep() {
        @Override
        public String table() {
            return "delivery_event_rollup";
        }

        @Override
        public int deleteBefore(DSLContext tx, Instant minutesBefore, Instant hoursBefore) {
            return tx.deleteFrom(R)
                    .where(R.RESOLUTION.eq(Resolution.MINUTE.dbValue()).and(R.BUCKET.lt(minutesBefore)))
                    .or(R.RESOLUTION.eq(Resolution.HOUR.dbValue()).and(R.BUCKET.lt(hoursBefore)))
                    .execute();
        }
    };
}
