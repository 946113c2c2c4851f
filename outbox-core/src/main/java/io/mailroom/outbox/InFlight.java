package io.mailroom.outbox;

/** A claimed message whose handler is running or whose outcome is not yet written. */
final class InFlight implements ClaimContext {

    final ClaimedMessage message;
    volatile boolean lost;
    volatile Thread thread;
    /**
     * The handler has returned and its outcome is queued for the completer: the heartbeat leaves the
     * row alone, so that the two never lock the same rows at once (which can deadlock), and the
     * completer's retry budget (at most half the lease) ends before the lease does.
     */
    volatile boolean completing;
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
