package io.mailroom.delivery.webhook;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.mailroom.db.sql.PgValues;
import io.mailroom.delivery.DeliveryJson;

import java.io.IOException;
import java.time.Instant;
import java.time.OffsetDateTime;
import java.time.format.DateTimeParseException;

/**
 * JSON reading shared by the adapters: strict, bounded, and every error naming its field. Strings
 * and times are refused here when PostgreSQL could not store them ({@link PgValues}), so such a
 * body is a 400 naming the field, not a data exception in the ingesting transaction.
 */
final class Json {

    /** Strict and bounded: {@link DeliveryJson} is configured for the adapters' reading. */
    private static final ObjectMapper MAPPER = DeliveryJson.mapper();

    private Json() {
    }

    static JsonNode read(byte[] body) throws MalformedEventException {
        try {
            JsonNode node = MAPPER.readTree(body);
            if (node == null || !node.isObject()) {
                throw new MalformedEventException("body", "must be a JSON object");
            }
            return node;
        } catch (IOException e) {
            // the parser's location, not its message: the message may quote the body
            throw new MalformedEventException("body", "is not valid JSON (" + e.getClass().getSimpleName() + ")");
        }
    }

    static String text(JsonNode parent, String name, String path, boolean required) throws MalformedEventException {
        JsonNode v = parent.get(name);
        if (v == null || v.isNull()) {
            if (required) {
                throw new MalformedEventException(path, "is required");
            }
            return null;
        }
        if (!v.isTextual()) {
            throw new MalformedEventException(path, "must be a string");
        }
        String s = checked(v.asText(), path);
        if (required && s.isBlank()) {
            throw new MalformedEventException(path, "must not be blank");
        }
        return s.isBlank() ? null : s;
    }

    static Instant instant(JsonNode parent, String name, String path) throws MalformedEventException {
        String s = text(parent, name, path, false);
        if (s == null) {
            return null;
        }
        Instant at;
        try {
            at = OffsetDateTime.parse(s.replace(' ', 'T')).toInstant();
        } catch (DateTimeParseException e) {
            try {
                at = Instant.parse(s);
            } catch (DateTimeParseException e2) {
                throw new MalformedEventException(path, "is not an ISO-8601 time");
            }
        }
        var problem = PgValues.timeProblem(at);
        if (problem.isPresent()) {
            throw new MalformedEventException(path, problem.get());
        }
        return at;
    }

    /** {@code s}, if a text column can hold it (no U+0000). */
    static String checked(String s, String path) throws MalformedEventException {
        var problem = PgValues.textProblem(s);
        if (problem.isPresent()) {
            throw new MalformedEventException(path, problem.get());
        }
        return s;
    }
}
