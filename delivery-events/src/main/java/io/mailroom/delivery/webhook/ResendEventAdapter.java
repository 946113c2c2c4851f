package io.mailroom.delivery.webhook;

import com.fasterxml.jackson.databind.JsonNode;
import io.mailroom.delivery.BounceType;
import io.mailroom.delivery.DeliveryEvent;
import io.mailroom.delivery.DeliveryKind;

import java.util.List;

/**
 * Resend's webhook events, as its public documentation describes them ("Webhooks", event pages
 * {@code email.delivered}, {@code email.delivery_delayed}, {@code email.bounced},
 * {@code email.complained}: https://resend.com/docs/webhooks). Resend signs them by the Standard
 * Webhooks scheme (through Svix, with {@code svix-*} headers, which {@link WebhookVerifier} reads).
 * <pre>
 * {"type": "email.bounced", "created_at": "...",
 *  "data": {"email_id": "...", "to": ["ann@example.com"], "created_at": "...",
 *           "bounce": {"type": "Permanent", "subType": "General", "message": "..."},
 *           "tags": {"idempotency_key": "email-order-102"}}}
 * </pre>
 * {@code data.email_id} is the id Resend's send API returned, which Mailroom stored as the provider
 * message id; {@code tags.idempotency_key} (an object of tags, or the array form
 * {@code [{"name": ..., "value": ...}]}) is our key when the sender set it; the email's other tags,
 * which Mailroom's HTTP transport sends with the key, come back beside it ({@link EchoedTags}). A bounce of type
 * {@code Permanent} is hard; {@code Transient} and {@code Undetermined} are soft. Every other event
 * type (sent, opened, clicked, ...) is kept as unknown. One event per recipient in {@code data.to}, at
 * most {@link DeliveryEventAdapter#MAX_EVENTS}.
 */
public final class ResendEventAdapter implements DeliveryEventAdapter {

    public static final String SOURCE = "resend";
    /** The tag that carries Mailroom's idempotency key (Resend tag values allow letters, digits, _ and -). */
    public static final String KEY_TAG = "idempotency_key";

    @Override
    public String source() {
        return SOURCE;
    }

    @Override
    public List<DeliveryEvent> parse(byte[] body) throws MalformedEventException {
        JsonNode root = Json.read(body);
        String type = Json.text(root, "type", "type", true);
        JsonNode data = root.get("data");
        if (data == null || !data.isObject()) {
            throw new MalformedEventException("data", "must be an object");
        }
        DeliveryKind kind = switch (type) {
            case "email.delivered" -> DeliveryKind.DELIVERED;
            case "email.delivery_delayed" -> DeliveryKind.DEFERRED;
            case "email.bounced" -> DeliveryKind.BOUNCED;
            case "email.complained" -> DeliveryKind.COMPLAINED;
            default -> DeliveryKind.UNKNOWN;
        };
        BounceType bounce = null;
        String diagnostic = null;
        String description = null;
        if (kind == DeliveryKind.BOUNCED) {
            JsonNode b = data.get("bounce");
            if (b == null || !b.isObject()) {
                throw new MalformedEventException("data.bounce", "is required for email.bounced");
            }
            String bounceType = Json.text(b, "type", "data.bounce.type", true);
            bounce = "Permanent".equalsIgnoreCase(bounceType) ? BounceType.HARD : BounceType.SOFT;
            String sub = Json.text(b, "subType", "data.bounce.subType", false);
            diagnostic = Json.text(b, "message", "data.bounce.message", false);
            description = bounceType + (sub == null ? "" : "/" + sub);
        }
        // one event per affected recipient, as Resend lists them (Mailroom's own emails have one)
        String providerId = Json.text(data, "email_id", "data.email_id", false);
        String key = tag(data.get("tags"));
        java.util.Map<String, String> tags = EchoedTags.read(data.get("tags"), KEY_TAG);
        java.time.Instant at = Json.instant(root, "created_at", "created_at");
        List<DeliveryEvent> events = new java.util.ArrayList<>();
        for (String recipient : recipients(data.get("to"))) {
            events.add(new DeliveryEvent(kind, bounce, type, providerId, key, recipient, at, diagnostic, description, tags));
        }
        return events;
    }

    /** {@code data.to}: an array of addresses (or one string); a list with one null when absent. */
    private static List<String> recipients(JsonNode to) throws MalformedEventException {
        if (to == null || to.isNull()) {
            return java.util.Collections.singletonList(null);
        }
        if (to.isTextual()) {
            return List.of(Json.checked(to.asText(), "data.to"));
        }
        if (!to.isArray()) {
            throw new MalformedEventException("data.to", "must be an array of addresses");
        }
        if (to.size() > MAX_EVENTS) {
            throw new MalformedEventException("data.to", "has " + to.size() + " addresses; at most " + MAX_EVENTS
                    + " events are taken from one webhook");
        }
        List<String> out = new java.util.ArrayList<>();
        for (int i = 0; i < to.size(); i++) {
            if (!to.get(i).isTextual()) {
                throw new MalformedEventException("data.to[" + i + "]", "must be an address");
            }
            out.add(Json.checked(to.get(i).asText(), "data.to[" + i + "]"));
        }
        return out.isEmpty() ? java.util.Collections.singletonList(null) : out;
    }

    private static String tag(JsonNode tags) throws MalformedEventException {
        if (tags == null || tags.isNull()) {
            return null;
        }
        if (tags.isObject()) {
            JsonNode v = tags.get(KEY_TAG);
            return v != null && v.isTextual() ? Json.checked(v.asText(), "data.tags." + KEY_TAG) : null;
        }
        if (tags.isArray()) {
            for (int i = 0; i < tags.size(); i++) {
                JsonNode t = tags.get(i);
                if (t.isObject() && KEY_TAG.equals(t.path("name").asText(null)) && t.path("value").isTextual()) {
                    return Json.checked(t.get("value").asText(), "data.tags[" + i + "].value");
                }
            }
        }
        return null;
    }
}
