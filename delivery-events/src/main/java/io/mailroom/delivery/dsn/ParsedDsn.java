package io.mailroom.delivery.dsn;

import io.mailroom.delivery.DeliveryEvent;

import java.util.List;

/**
 * One delivery status notification as read: its delivery id (what makes ingesting it twice a
 * replay) and one event per per-recipient block.
 *
 * @param deliveryId the DSN's own Message-ID, else {@code sha256:} and the hex digest of its bytes
 */
public record ParsedDsn(String deliveryId, List<DeliveryEvent> events) {

    public ParsedDsn {
        events = List.copyOf(events);
    }
}
