package io.mailroom.email.metrics;

import io.mailroom.delivery.DeliveryEventListener;
import io.micrometer.core.instrument.MeterRegistry;
import org.jooq.DSLContext;

/**
 * Delivery events as a counter, {@code mailroom_delivery_events_total{source, kind, bounce, topic}}
 * (topic {@code none} for an orphan), so bounce and complaint rates by topic are this counter over
 * {@code mailroom_emails_sent_total{topic}} (monitoring/alerts.yml). Counted as the event is stored;
 * a replayed delivery stores nothing and counts nothing. Beside it,
 * {@code mailroom_delivery_event_recipient_mismatch_total{source, topic}} counts events that name
 * another address than their email was sent to (README, "Delivery events and suppression").
 */
public final class DeliveryMetrics implements DeliveryEventListener {

    private final MeterRegistry registry;

    public DeliveryMetrics(MeterRegistry registry) {
        this.registry = registry;
    }

    @Override
    public void onStored(DSLContext tx, StoredEvent stored) {
        // counted at store time; should the transaction roll back, the provider retries and the
        // counter may count an event twice: a rate, not a ledger (the ledger is delivery_event)
        registry.counter("mailroom.delivery.events", "source", stored.source(), "kind", stored.event().kind().dbValue(),
                "bounce", stored.event().bounceType() == null ? "none" : stored.event().bounceType().dbValue(),
                "topic", stored.topic() == null ? "none" : stored.topic()).increment();
        if (stored.recipientMismatch()) {
            // mailroom_delivery_event_recipient_mismatch_total: events naming another address than their email's
            registry.counter("mailroom.delivery.event.recipient.mismatch", "source", stored.source(),
                    "topic", stored.topic() == null ? "none" : stored.topic()).increment();
        }
    }
}
