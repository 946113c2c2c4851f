package io.mailroom.delivery;

import java.util.Locale;

/**
 * What a provider reported about an email after accepting it, in the neutral vocabulary every
 * adapter maps its own event types to. The rank orders the delivery state of an email: it only
 * moves to a higher rank, so events that arrive out of order never move an email backwards
 * ("delivered" after "bounced" keeps the bounce visible). {@link #UNKNOWN} is an event type no
 * adapter knows: stored and shown, never applied.
 */
public enum DeliveryKind {
    DEFERRED(1),
    DELIVERED(2),
    BOUNCED(3),
    COMPLAINED(4),
    UNKNOWN(0);

    private final int rank;

    DeliveryKind(int rank) {
        this.rank = rank;
    }

    /** Higher wins; 0 never changes an email's state. */
    public int rank() {
        return rank;
    }

    /** The spelling in {@code delivery_event.kind} and {@code delivery_state.state}. */
    public String dbValue() {
        return name().toLowerCase(Locale.ROOT);
    }

    public static DeliveryKind fromDb(String value) {
        return value == null ? null : valueOf(value.toUpperCase(Locale.ROOT));
    }
}
