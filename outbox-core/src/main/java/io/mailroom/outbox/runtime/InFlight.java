package io.mailroom.outbox.runtime;

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
    /** A graceful stop took the claim back before the handler had an outcome (see {@link #handBack}). */
    private boolean handedBack;
    /** Whether this claim took one of the producer's handler slots (runOnce claims take none). */
    boolean holdsSlot;

    InFlight(ClaimedMessage message) {
        this.message = message;
    }

    /**
     * The handler has an outcome: from now on the claim is the completer's. False if a stop took it
     * back first; then the outcome must not be written. Exclusive with {@link #handBack}, so a stop
     * never hands back a claim whose outcome is queued.
     */
    synchronized boolean startCompleting() {
        if (handedBack) {
            return false;
        }
        completing = true;
        return true;
    }

    /** A stop takes the claim back; false if its outcome is already the completer's. */
    synchronized boolean handBack() {
        if (completing) {
            return false;
        }
        handedBack = true;
        lost = true;
        return true;
    }

    @Override
    public boolean isClaimLost() {
        return lost;
    }
}
