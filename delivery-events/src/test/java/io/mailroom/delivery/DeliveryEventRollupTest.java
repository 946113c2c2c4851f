package io.mailroom.delivery;

import io.mailroom.outbox.admin.TopicRollup.Resolution;
import io.mailroom.testing.PostgresExtension;
import org.jooq.DSLContext;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.List;
import java.util.function.Function;
import java.util.stream.Collectors;

import static io.mailroom.db.jooq.Tables.DELIVERY_EVENT_ROLLUP;
import static io.mailroom.db.jooq.Tables.OUTBOX_EFFECT;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * Bounces and complaints are counted by minute and hour of arrival and by the topic of their email,
 * in the transaction that stores them: what the charts by topic read, without reading the events.
 */
class DeliveryEventRollupTest {

    @RegisterExtension
    static final PostgresExtension pg = new PostgresExtension();

    private static final Instant T0 = Instant.parse("2030-01-02T03:04:05Z");

    @BeforeEach
    void clean() {
        pg.dsl().execute("TRUNCATE delivery_event, delivery_event_count, delivery_event_rollup, delivery_state, delivery_recipient_state, outbox_effect, outbox_effect_term,"
                + " suppression, soft_bounce_run, audit_log");
    }

    private static <T> T inTx(Function<DSLContext, T> work) {
        return pg.dsl().transactionResult(c -> work.apply(c.dsl()));
    }

    private static void effect(String key, String topic) {
        pg.dsl().insertInto(OUTBOX_EFFECT).set(OUTBOX_EFFECT.IDEMPOTENCY_KEY, key).set(OUTBOX_EFFECT.TOPIC, topic)
                .set(OUTBOX_EFFECT.AGGREGATE_TYPE, "order").set(OUTBOX_EFFECT.AGGREGATE_ID, key)
                .set(OUTBOX_EFFECT.MESSAGE_ID, 1L).set(OUTBOX_EFFECT.MESSAGE_CREATED_AT, T0)
                .set(OUTBOX_EFFECT.STATUS, "done").set(OUTBOX_EFFECT.MAX_ATTEMPTS, 10).execute();
    }

    private static void store(Instant at, String delivery, DeliveryKind kind, BounceType bounce, String key) {
        DeliveryEventStore store = new DeliveryEventStore(List.of(), Clock.fixed(at, ZoneOffset.UTC));
        inTx(tx -> store.ingest(tx, "neutral", delivery, List.of(new DeliveryEvent(kind, bounce, "e", null, key,
                null, at, null, null))));
    }

    private static List<String> rows(Resolution resolution) {
        var r = DELIVERY_EVENT_ROLLUP;
        return pg.dsl().selectFrom(r).where(r.RESOLUTION.eq(resolution.dbValue())).orderBy(r.BUCKET, r.TOPIC, r.KIND, r.BOUNCE)
                .fetch(x -> x.getBucket() + " " + x.getTopic() + " " + x.getKind() + "/" + x.getBounce() + " " + x.getEvents());
    }

    @Test
    void bouncesAndComplaintsAreCountedByMinuteHourAndTopicAsTheyAreStored() {
        effect("a-1", "email.a");
        effect("b-1", "email.b");
        store(T0, "d-1", DeliveryKind.BOUNCED, BounceType.HARD, "a-1");
        store(T0.plusSeconds(20), "d-2", DeliveryKind.BOUNCED, BounceType.SOFT, "a-1");
        store(T0.plusSeconds(30), "d-3", DeliveryKind.BOUNCED, BounceType.HARD, "a-1");
        store(T0.plusSeconds(120), "d-4", DeliveryKind.COMPLAINED, null, "b-1");
        store(T0.plusSeconds(130), "d-5", DeliveryKind.DELIVERED, null, "b-1"); // not charted: no row
        store(T0.plusSeconds(140), "d-6", DeliveryKind.BOUNCED, BounceType.HARD, "nobody-knows"); // an orphan
        // a delivery rolled back counts nothing
        try {
            inTx(tx -> {
                new DeliveryEventStore(List.of(), Clock.fixed(T0, ZoneOffset.UTC)).ingest(tx, "neutral", "d-7",
                        List.of(new DeliveryEvent(DeliveryKind.BOUNCED, BounceType.HARD, "e", null, "a-1", null, T0, null, null)));
                throw new IllegalStateException("rolled back");
            });
        } catch (RuntimeException expected) {
            // the delivery is gone, and so is its count
        }

        assertThat(rows(Resolution.MINUTE)).containsExactly(
                "2030-01-02T03:04:00Z email.a bounced/hard 2",
                "2030-01-02T03:04:00Z email.a bounced/soft 1",
                "2030-01-02T03:06:00Z email.b complained/none 1",
                "2030-01-02T03:06:00Z none bounced/hard 1");
        assertThat(rows(Resolution.HOUR)).containsExactly(
                "2030-01-02T03:00:00Z email.a bounced/hard 2",
                "2030-01-02T03:00:00Z email.a bounced/soft 1",
                "2030-01-02T03:00:00Z email.b complained/none 1",
                "2030-01-02T03:00:00Z none bounced/hard 1");

        // read by quarter hour from the minute rows, and by hour for the week: the rollup rows only
        Instant to = Instant.parse("2030-01-02T04:00:00Z");
        assertThat(DeliveryEventRollup.read(pg.dsl(), Resolution.MINUTE, to.minus(Duration.ofHours(1)), to, Duration.ofMinutes(15)))
                .extracting(b -> b.start() + " " + b.topic() + " " + b.kind() + "/" + b.bounce() + " " + b.events())
                .containsExactly("2030-01-02T03:00:00Z email.a bounced/hard 2", "2030-01-02T03:00:00Z email.a bounced/soft 1",
                        "2030-01-02T03:00:00Z email.b complained/none 1", "2030-01-02T03:00:00Z none bounced/hard 1");
        var week = DeliveryEventRollup.query(pg.dsl(), Resolution.HOUR, to.minus(Duration.ofDays(7)), to, Duration.ofHours(1));
        String plan = pg.dsl().fetch("EXPLAIN " + pg.dsl().renderInlined(week)).stream().map(x -> x.get(0, String.class))
                .collect(Collectors.joining("\n"));
        assertThat(plan).contains("delivery_event_rollup").doesNotContainPattern("delivery_event(?!_rollup)");
    }

    @Test
    void oldBucketsAreForgottenByTheirOwnStep() {
        effect("a-1", "email.a");
        store(T0, "d-1", DeliveryKind.BOUNCED, BounceType.HARD, "a-1");
        store(T0.plus(Duration.ofHours(2)), "d-2", DeliveryKind.BOUNCED, BounceType.HARD, "a-1");
        int deleted = inTx(tx -> DeliveryEventRollup.RETENTION.deleteBefore(tx, T0.plus(Duration.ofHours(1)), T0));
        assertThat(deleted).isEqualTo(2); // the first minute row and the first hour row (03:00 < 03:04:05)
        assertThat(rows(Resolution.MINUTE)).containsExactly("2030-01-02T05:04:00Z email.a bounced/hard 1");
        assertThat(rows(Resolution.HOUR)).containsExactly("2030-01-02T05:00:00Z email.a bounced/hard 1");
        assertThat(DeliveryEventRollup.RETENTION.table()).isEqualTo("delivery_event_rollup");
    }
}
