package io.mailroom.email.metrics;

import io.mailroom.delivery.DeliveryEventListener;
import io.micrometer.core.instrument.MeterRegistry;
import org.jooq.DSLContext;

/**
 * {@code mailroom_delivery_event_recipient_mismatch_total{source, topic}}: delivery events that name
 * another address than their email was sent to (README, "Delivery events and suppression"), counted
 * as this process's webhook endpoint stores them. The events themselves are counted in the database
 * for every process ({@code delivery_event_count}, exported by {@link QueueSampler}).
 *
 * <p>{@code mailroom_delivery_event_tagged_total{source, kind, tag, value}}: the events this process
 * stored, once per tag {@code MAILROOM_METRIC_TAGS} lists ({@link MetricTags}), labelled with the
 * echoed value when it is a listed one, else {@code other} (or {@code none} without the tag), so
 * the series stay bounded whatever tags business code sends.
 */
public final class DeliveryMetrics implements DeliveryEventListener {

    private final MeterRegistry registry;
    private final MetricTags tags;

    public DeliveryMetrics(MeterRegistry registry) {
        this(registry, MetricTags.NO_TAGS);
    }

    public DeliveryMetrics(MeterRegistry registry, MetricTags tags) {
        this.registry = registry;
        this.tags = tags == null ? MetricTags.NO_TAGS : tags;
    }

    @Override
    public void onStored(DSLContext tx, StoredEvent stored) {
        if (stored.recipientMismatch()) {
            // mailroom_delivery_event_recipient_mismatch_total: events naming another address than their email's
            registry.counter("mailroom.delivery.event.recipient.mismatch", "source", stored.source(),
                    "topic", stored.topic() == null ? "none" : stored.topic()).increment();
        }
        for (String name : tags.allowed().keySet()) {
            registry.counter("mailroom.delivery.event.tagged", "source", stored.source(), "kind", stored.event().kind().dbValue(),
                    "tag", name, "value", tags.label(name, stored.event().tags())).increment();
        }
    }
}
