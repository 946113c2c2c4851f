package io.mailroom.delivery.webhook;

import com.fasterxml.jackson.databind.JsonNode;
import io.mailroom.delivery.BounceType;
import io.mailroom.delivery.DeliveryEvent;
import io.mailroom.delivery.DeliveryKind;

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * Mailroom's own event format (README, "Delivery events and suppression"), for a provider or relay
 * whose events are translated before they reach us: one event object, or {@code {"events": [...]}}.
 * <pre>
 * {"type": "bounced", "bounce_type": "hard", "message_id": "...", "idempotency_key": "email-order-102",
 *  "recipient": "ann@example.com", "occurred_at": "2026-12-04T10:02:00Z",
 *  "diagnostic_code": "smtp; 550 5.1.1 user unknown", "description": "...",
 *  "tags": {"category": "invoice"}}
 * </pre>
 * {@code tags} (optional; an object, or an array of {@code {"name", "value"}}) are the email's tags as the
 * provider echoes them ({@link EchoedTags}).
 * {@code type} is delivered, deferred, bounced or complained; any other value is kept as unknown.
 * {@code bounce_type} (hard or soft) is required for a bounce; a bounce needs {@code message_id} or
 * {@code idempotency_key} no more than any other event does: an event neither matches is an orphan.
 */
public final class NeutralEventAdapter implements DeliveryEventAdapter {

    public static final String SOURCE = "neutral";

    @Override
    public String source() {
        return SOURCE;
    }

    @Override
    public List<DeliveryEvent> parse(byte[] body) throws MalformedEventException {
        JsonNode root = Json.read(body);
        JsonNode events = root.get("events");
        if (events == null) {
            return List.of(event(root, ""));
        }
        if (!events.isArray() || events.isEmpty()) {
            throw new MalformedEventException("events", "must be a non-empty array");
        }
        if (events.size() > MAX_EVENTS) {
            throw new MalformedEventException("events", "has " + events.size() + " events; at most " + MAX_EVENTS);
        }
        List<DeliveryEvent> out = new ArrayList<>(events.size());
        for (int i = 0; i < events.size(); i++) {
            JsonNode e = events.get(i);
            if (!e.isObject()) {
                throw new MalformedEventException("events[" + i + "]", "must be an object");
            }
            out.add(event(e, "events[" + i + "]."));
        }
        return out;
    }

    private static DeliveryEvent event(JsonNode e, String at) throws MalformedEventException {
        String type = Json.text(e, "type", at + "type", true);
        DeliveryKind kind = switch (type.toLowerCase(Locale.ROOT)) {
            case "delivered" -> DeliveryKind.DELIVERED;
            case "deferred" -> DeliveryKind.DEFERRED;
            case "bounced" -> DeliveryKind.BOUNCED;
            case "complained" -> DeliveryKind.COMPLAINED;
            default -> DeliveryKind.UNKNOWN;
        };
        BounceType bounce = null;
        String bounceType = Json.text(e, "bounce_type", at + "bounce_type", kind == DeliveryKind.BOUNCED);
        if (kind == DeliveryKind.BOUNCED) {
            bounce = switch (bounceType.toLowerCase(Locale.ROOT)) {
                case "hard" -> BounceType.HARD;
                case "soft" -> BounceType.SOFT;
                default -> throw new MalformedEventException(at + "bounce_type", "must be hard or soft");
            };
        }
        return new DeliveryEvent(kind, bounce, type,
                Json.text(e, "message_id", at + "message_id", false),
                Json.text(e, "idempotency_key", at + "idempotency_key", false),
                Json.text(e, "recipient", at + "recipient", false),
                Json.instant(e, "occurred_at", at + "occurred_at"),
                Json.text(e, "diagnostic_code", at + "diagnostic_code", false),
                Json.text(e, "description", at + "description", false),
                EchoedTags.read(e.get("tags"), ResendEventAdapter.KEY_TAG));
    }
}
