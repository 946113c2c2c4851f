package io.mailroom.email.metrics;

import io.mailroom.delivery.DeliveryEventListener;
import io.micrometer.core.instrument.MeterRegistry;
import org.jooq.DSLContext;

/**
 * {@code mailroom_delivery_event_recipient_mismatch_total{source, topic}}: delivery events that name
 * another address than their email was sent to (README, "Delivery events and suppression"), counted
 * as this process's webhook endpoint stores them. The events themselves are counted in the database
 * for every process ({@code delivery_event_count}, exported by {@link QueueSampler}).
 */
public final class DeliveryMetrics implements DeliveryEventListener {

    private final MeterRegistry registry;

    public DeliveryMetrics(MeterRegistry registry) {
        this.registry = registry;
    }

    @Override
    public void onStored(DSLContext tx, StoredEvent stored) {
        if (stored.recipientMismatch()) {
            // mailroom_delivery_event_recipient_mismatch_total: events naming another address than their email's
            registry.counter("mailroom.delivery.event.recipient.mismatch", "source", stored.source(),
                    "topic", stored.topic() == null ? "none" : stored.topic()).increment();
        }
    }
}
