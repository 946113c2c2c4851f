package io.mailroom.outbox.runtime;

/**
 * Does the work of one claimed message, after the claim has committed. Runs on its own (virtual)
 * thread; the dispatcher keeps the lease alive meanwhile. A handler should check
 * {@link ClaimContext#isClaimLost()} before any irreversible step it can still avoid.
 *
 * <p>An exception thrown by the handler counts as {@link Outcome#retryLater(String)} with the
 * exception's class name as the error.
 */
@FunctionalInterface
public interface MessageHandler {

    Outcome handle(ClaimedMessage message, ClaimContext context) throws Exception;
}
