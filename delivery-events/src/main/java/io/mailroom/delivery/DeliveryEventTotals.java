package io.mailroom.delivery;

import org.jooq.DSLContext;

import java.util.List;

import static io.mailroom.db.jooq.Tables.DELIVERY_EVENT_COUNT;

/**
 * Delivery events ever stored, as {@code delivery_event_count} keeps them: a trigger counts every
 * event any process stores (the webhook endpoint, {@code mailroom dsn ingest}), so the totals are
 * cluster-wide and survive the events' own retention.
 */
public final class DeliveryEventTotals {

    private DeliveryEventTotals() {
    }

    /** Events stored by source, kind, bounce type and topic. */
    public record Total(String source, String kind, String bounce, String topic, double events) {
    }

    public static List<Total> read(DSLContext dsl) {
        var c = DELIVERY_EVENT_COUNT;
        return dsl.select(c.SOURCE, c.KIND, c.BOUNCE, c.TOPIC, c.EVENTS).from(c)
                .fetch(r -> new Total(r.value1(), r.value2(), r.value3(), r.value4(), r.value5().doubleValue()));
    }
}
