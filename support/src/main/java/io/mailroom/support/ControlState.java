package io.mailroom.support;

import java.time.Instant;
import java.util.List;

/**
 * The pause switches every dispatcher polls ({@code outbox_control}).
 *
 * @param switches every scope that has a switch, paused or not
 */
public record ControlState(List<Switch> switches) {

    public ControlState {
        switches = List.copyOf(switches);
    }

    /** Whether everything ({@code *}) is paused. */
    public boolean allPaused() {
        return switches.stream().anyMatch(s -> s.paused() && s.scope().equals("*"));
    }

    public List<String> pausedScopes() {
        return switches.stream().filter(Switch::paused).map(Switch::scope).toList();
    }

    /** @param scope {@code *} or a topic */
    public record Switch(String scope, boolean paused, String reason, String updatedBy, Instant updatedAt) {
    }
}
