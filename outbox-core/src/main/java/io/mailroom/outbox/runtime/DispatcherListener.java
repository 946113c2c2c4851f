package io.mailroom.outbox.runtime;

import java.time.Duration;

/**
 * Hooks for metrics and logs, called on the dispatcher's threads; implementations must be quick
 * and must not throw. Every method has a no-op default.
 */
public interface DispatcherListener {

    DispatcherListener NONE = new DispatcherListener() {
    };

    /** A claim statement ran: how many were asked for, how many came back, and how long it took. */
    default void claimed(int requested, int claimed, Duration took) {
    }

    /** An attempt ended with {@code outcome} (done, retry, failed, review, claim_lost) after the handler ran {@code took}. */
    default void finished(ClaimedMessage message, String outcome, Duration took) {
    }

    /**
     * A message reached {@code failed} or {@code review} (as written: a retry whose attempts ran out
     * is {@code failed}; so is an expired lease or an interrupted attempt on the last try), so that
     * an operator's log says which, and why.
     *
     * @param status      failed or review
     * @param reason      the error stored with it ({@code last_error})
     * @param payloadJson the message's payload, for an implementation that knows its shape (e.g. to name the recipient)
     */
    default void ended(String idempotencyKey, String topic, String status, String reason, String payloadJson) {
    }

    /** A claim turned out lost: at a heartbeat or at completion. */
    default void claimLost(ClaimedMessage message, String where) {
    }

    /** The rescuer returned expired leases to the queue (or to failed). */
    default void rescued(int count) {
    }

    /** Something failed that the runtime will retry by itself (database down, completion failed...). */
    default void error(String where, Throwable error) {
    }
}
