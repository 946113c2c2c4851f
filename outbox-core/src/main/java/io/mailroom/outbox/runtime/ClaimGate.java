package io.mailroom.outbox.runtime;

/**
 * Lets a dispatcher's owner hold back claims for a topic, e.g. while the circuit breaker toward its
 * provider is open: claiming and failing would burn the attempts of healthy messages.
 */
@FunctionalInterface
public interface ClaimGate {

    ClaimGate OPEN = topic -> true;

    /** Whether messages of {@code topic} may be claimed now. */
    boolean allowsClaims(String topic);

    /**
     * How many messages of {@code topic} may be claimed now (e.g. a half-open breaker's probe
     * permits); {@link Integer#MAX_VALUE} for no limit beyond the batch size.
     */
    default int claimLimit(String topic) {
        return allowsClaims(topic) ? Integer.MAX_VALUE : 0;
    }
}
