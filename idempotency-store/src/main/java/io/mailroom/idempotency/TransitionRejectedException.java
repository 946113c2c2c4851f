package io.mailroom.idempotency;

import java.util.Optional;
import java.util.Set;

/**
 * A fenced transition found the record in a state it does not start from, or at another reservation
 * than the caller's (a newer attempt holds the key), or found no record, and changed nothing. The SQL statement itself succeeded, so the caller's transaction is still usable:
 * the caller decides whether to roll it back (usually yes: e.g. do not mark the outbox message done
 * when its success could not be recorded) or to go on.
 */
public final class TransitionRejectedException extends IdempotencyException {

    private final String transition;
    private final Set<EffectState> expected;
    private final int expectedReservation;
    private final transient EffectRecord current;

    TransitionRejectedException(String effectKey, String transition, Set<EffectState> expected,
                                int expectedReservation, EffectRecord current) {
        super(effectKey, transition + " of '" + effectKey + "' rejected: expected state " + expected
                + " at reservation " + expectedReservation + ", found "
                + (current == null ? "no record" : current.state() + " at reservation " + current.reservations()), null);
        this.transition = transition;
        this.expected = Set.copyOf(expected);
        this.expectedReservation = expectedReservation;
        this.current = current;
    }

    /** The reservation the caller held (or read); a record at another one belongs to another attempt. */
    public int expectedReservation() {
        return expectedReservation;
    }

    /** Whether the record is at a different reservation than the caller's: a newer attempt owns it. */
    public boolean supersededByAnotherReservation() {
        return current != null && current.reservations() != expectedReservation;
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
