package io.mailroom.email.resilience;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;

import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Locale;

/**
 * The breaker state of each transport of a dispatcher process, as it reports it in the dispatcher
 * registry at every heartbeat ({@code outbox_dispatcher.details}, which outbox-core stores without
 * reading), and as the support surfaces read it back: {@code {"transports": [{"name": "smtp",
 * "breaker": "closed"}]}}. The breaker is Resilience4j's state in lower case: closed, open,
 * half_open, forced_open (a halted transport), disabled, metrics_only.
 */
public final class BreakerReport {

    private static final ObjectMapper JSON = new ObjectMapper();
    /** Longest transport name or state kept when reading a report back (a row another build wrote). */
    private static final int MAX_TEXT = 100;

    private BreakerReport() {
    }

    /** One transport's breaker, as of the report. */
    public record State(String transport, String breaker) {
    }

    /** The report of these transports now. */
    public static String json(Collection<ResilientTransport> transports) {
        return json(transports.stream()
                .map(t -> new State(t.name(), t.breakerState().name().toLowerCase(Locale.ROOT))).toList());
    }

    static String json(List<State> states) {
        ObjectNode root = JSON.createObjectNode();
        ArrayNode list = root.putArray("transports");
        for (State s : states) {
            list.addObject().put("name", s.transport()).put("breaker", s.breaker());
        }
        try {
            return JSON.writeValueAsString(root);
        } catch (JsonProcessingException e) {
            throw new IllegalStateException(e); // a tree of strings always writes
        }
    }

    /**
     * The transports of a report, in its order; empty for null, for anything that is not a report,
     * and without the entries that lack a name (a row written by another process is read, not trusted).
     */
    public static List<State> parse(String json) {
        if (json == null || json.isBlank()) {
            return List.of();
        }
        JsonNode root;
        try {
            root = JSON.readTree(json);
        } catch (JsonProcessingException e) {
            return List.of();
        }
        JsonNode list = root == null ? null : root.get("transports");
        if (list == null || !list.isArray()) {
            return List.of();
        }
        List<State> states = new ArrayList<>();
        for (JsonNode t : list) {
            String name = text(t.get("name"));
            if (name != null) {
                String breaker = text(t.get("breaker"));
                states.add(new State(name, breaker == null ? "unknown" : breaker.toLowerCase(Locale.ROOT)));
            }
        }
        return List.copyOf(states);
    }

    private static String text(JsonNode node) {
        if (node == null || !node.isTextual() || node.textValue().isBlank()) {
            return null;
        }
        String s = node.textValue().strip();
        return s.length() <= MAX_TEXT ? s : s.substring(0, MAX_TEXT);
    }
}
