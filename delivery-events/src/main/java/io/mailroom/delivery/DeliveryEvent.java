package io.mailroom.delivery;

import java.time.Instant;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Objects;

/**
 * One event as an adapter read it from a provider's webhook body or a delivery status notification,
 * before it is matched to an email. Nothing here has been looked up yet: {@code idempotencyKey} is
 * only what the provider echoed (a tag or header we sent), {@code providerMessageId} what the
 * provider calls the email (the id its API returned, or the Message-ID an SMTP send carried).
 *
 * @param kind              the neutral kind; {@link DeliveryKind#UNKNOWN} for a type no adapter maps
 * @param bounceType        hard or soft for {@link DeliveryKind#BOUNCED}, else null
 * @param providerEvent     the event type as the provider spells it ({@code email.bounced})
 * @param providerMessageId the provider's id of the email, may be null
 * @param idempotencyKey    our key as echoed by the provider, may be null
 * @param recipient         the address the event is about, as reported (normalized when stored), may be null
 * @param occurredAt        when the provider says it happened, may be null
 * @param diagnosticCode    the provider's or remote server's diagnostic ({@code smtp; 550 5.1.1 ...}), may be null
 * @param description       a short human description, may be null
 * @param tags              the email's tags the provider echoed (name to value, without the one carrying our
 *                          key), as reported; empty when none
 */
public record DeliveryEvent(DeliveryKind kind, BounceType bounceType, String providerEvent, String providerMessageId,
                            String idempotencyKey, String recipient, Instant occurredAt, String diagnosticCode,
                            String description, Map<String, String> tags) {

    /** More echoed tags than this are not an email's (the email API allows 10): the rest are not kept. */
    public static final int MAX_TAGS = 20;

    /** An event that echoes no tags. */
    public DeliveryEvent(DeliveryKind kind, BounceType bounceType, String providerEvent, String providerMessageId,
                         String idempotencyKey, String recipient, Instant occurredAt, String diagnosticCode,
                         String description) {
        this(kind, bounceType, providerEvent, providerMessageId, idempotencyKey, recipient, occurredAt, diagnosticCode,
                description, Map.of());
    }

    public DeliveryEvent {
        Objects.requireNonNull(kind, "kind");
        if (providerEvent == null || providerEvent.isBlank()) {
            throw new IllegalArgumentException("providerEvent is required");
        }
        tags = tags == null ? Map.of() : Collections.unmodifiableMap(new LinkedHashMap<>(tags));
        if ((kind == DeliveryKind.BOUNCED) != (bounceType != null)) {
            throw new IllegalArgumentException("bounceType is required for a bounce and only for a bounce (kind "
                    + kind + ", bounceType " + bounceType + ")");
        }
    }
}
