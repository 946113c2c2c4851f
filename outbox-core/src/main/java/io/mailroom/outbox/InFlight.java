package io.mailroom.outbox;

/** A claimed message whose handler is running or whose outcome is not yet written. */
final class InFlight implements ClaimContext {

    final ClaimedMessage message;
    volatile boolean lost;
    volatile Thread thread;
    /** Whether this claim took one of the producer's handler slots (runOnce claims take none). */
    boolean holdsSlot;

    InFlight(ClaimedMessage message) {
        this.message = message;
    }

    @Override
    public boolean isClaimLost() {
        return lost;
    }
}
