package io.mailroom.support;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.SerializationFeature;
import com.fasterxml.jackson.datatype.jsr310.JavaTimeModule;

import java.util.Map;

/** The JSON mapper of the API and the CLI: ISO-8601 times, records as objects. */
public final class SupportJson {

    private static final ObjectMapper MAPPER = new ObjectMapper()
            .registerModule(new JavaTimeModule())
            .disable(SerializationFeature.WRITE_DATES_AS_TIMESTAMPS)
            .disable(SerializationFeature.WRITE_DURATIONS_AS_TIMESTAMPS);

    private SupportJson() {
    }

    public static ObjectMapper mapper() {
        return MAPPER;
    }

    static String write(Object value) {
        try {
            return MAPPER.writeValueAsString(value);
        } catch (JsonProcessingException e) {
            throw new IllegalStateException("cannot write JSON for " + value.getClass().getSimpleName(), e);
        }
    }

    /** A JSON object for {@code audit_log.detail}; null values are left out. */
    static String object(Map<String, ?> fields) {
        var node = MAPPER.createObjectNode();
        fields.forEach((k, v) -> {
            if (v != null) {
                node.putPOJO(k, v);
            }
        });
        return write(node);
    }

    /** Parses stored JSON (a jsonb column) leniently: null for null or unreadable text. */
    static JsonNode tree(String json) {
        if (json == null) {
            return null;
        }
        try {
            return MAPPER.readTree(json);
        } catch (JsonProcessingException e) {
            return null;
        }
    }

    /** A text (or number) field of a JSON object, or null. */
    static String text(JsonNode node, String field) {
        if (node == null || !node.isObject()) {
            return null;
        }
        JsonNode v = node.get(field);
        if (v == null || v.isNull() || v.isContainerNode()) {
            return null;
        }
        return v.asText();
    }
}
