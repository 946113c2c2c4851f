package io.mailroom.idempotency;

import java.util.Optional;
import java.util.Set;

/**
 * A guarded transition found the record in a state it does not start from (or found no record), and
 * changed nothing. The SQL statement itself succeeded, so the caller's transaction is still usable:
 * the caller decides whether to roll it back (usually yes: e.g. do not mark the outbox message done
 * when its success could not be recorded) or to go on.
 */
public final class TransitionRejectedException extends IdempotencyException {

    private final String transition;
    private final Set<EffectState> expected;
    private final transient EffectRecord current;

    TransitionRejectedException(String effectKey, String transition, Set<EffectState> expected,
                                EffectRecord current) {
        super(effectKey, transition + " of '" + effectKey + "' rejected: expected state " + expected
                + ", found " + (current == null ? "no record" : current.state()), null);
        this.transition = transition;
        this.expected = Set.copyOf(expected);
        this.current = current;
    }

    /** The operation that was rejected, e.g. {@code recordSucceeded}. */
    public String transition() {
        return transition;
    }

    /** The states the transition starts from. */
    public Set<EffectState> expected() {
        return expected;
    }

    /** The record as it was when the transition was rejected; empty when there is none. */
    public Optional<EffectRecord> current() {
        return Optional.ofNullable(current);
    }
}
