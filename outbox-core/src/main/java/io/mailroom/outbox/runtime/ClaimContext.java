package io.mailroom.outbox.runtime;

/** What a handler may ask of the dispatcher about its claim while it works. */
public interface ClaimContext {

    /** True once a heartbeat found the claim gone (lease expired and taken, or cancelled by a person). */
    boolean isClaimLost();

    /** Throws {@link ClaimLostException} if the claim is lost; call before an irreversible step. */
    default void ensureClaimHeld() {
        if (isClaimLost()) {
            throw new ClaimLostException("claim lost before the side effect; nothing was done");
        }
    }
}
