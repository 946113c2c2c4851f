package io.mailroom.support;

import java.util.List;

/**
 * The state of the circuit breaker in front of each mail transport, as the dispatcher process
 * running the transports knows it. The support surfaces cannot see it themselves (breakers live in
 * memory); the dispatcher service supplies an implementation when it embeds the server. Until then
 * (and always in the CLI, another process) the state is {@link #UNKNOWN}.
 */
public interface TransportStatus {

    /** Nothing known: no transport runs in this process. */
    TransportStatus UNKNOWN = new TransportStatus() {
        @Override
        public List<TransportState> transports() {
            return List.of();
        }

        @Override
        public boolean known() {
            return false;
        }
    };

    /** One entry per transport; must be quick and must not throw. */
    List<TransportState> transports();

    /** False when this process cannot know (then {@link #transports()} is empty). */
    default boolean known() {
        return true;
    }

    /**
     * @param transport e.g. {@code smtp} or {@code http}
     * @param breaker   closed, open, half_open, disabled, forced_open, or unknown
     */
    record TransportState(String transport, String breaker) {
    }
}
