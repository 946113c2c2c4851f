package io.mailroom.delivery.webhook;

import com.fasterxml.jackson.databind.JsonNode;
import io.mailroom.delivery.DeliveryEvent;

import java.util.LinkedHashMap;
import java.util.Map;
import java.util.regex.Pattern;

/**
 * The tags a provider echoes in an event, in either form providers use: an object
 * ({@code {"category": "invoice"}}) or Resend's array ({@code [{"name": "category", "value": "invoice"}]}).
 * The tag that carries Mailroom's idempotency key is read by the adapter and left out here. A tag
 * Mailroom could not have sent (a name or value outside the email API's charset and lengths, or more
 * than {@link DeliveryEvent#MAX_TAGS}) is not kept: the event is still stored, with the tags that fit.
 */
final class EchoedTags {

    private static final Pattern NAME = Pattern.compile("[A-Za-z0-9_-]{1,64}");
    private static final Pattern VALUE = Pattern.compile("[A-Za-z0-9_.:@/-]{1,256}");

    private EchoedTags() {
    }

    static Map<String, String> read(JsonNode tags, String keyTag) {
        Map<String, String> out = new LinkedHashMap<>();
        if (tags == null || tags.isNull()) {
            return out;
        }
        if (tags.isObject()) {
            for (Map.Entry<String, JsonNode> t : tags.properties()) {
                keep(out, t.getKey(), t.getValue(), keyTag);
            }
        } else if (tags.isArray()) {
            for (JsonNode t : tags) {
                if (t.isObject() && t.path("name").isTextual()) {
                    keep(out, t.get("name").textValue(), t.get("value"), keyTag);
                }
            }
        }
        return out;
    }

    private static void keep(Map<String, String> out, String name, JsonNode value, String keyTag) {
        if (out.size() < DeliveryEvent.MAX_TAGS && !name.equals(keyTag) && NAME.matcher(name).matches()
                && value != null && value.isTextual() && VALUE.matcher(value.textValue()).matches()) {
            out.put(name, value.textValue());
        }
    }
}
