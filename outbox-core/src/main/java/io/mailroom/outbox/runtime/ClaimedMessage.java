package io.mailroom.outbox.runtime;

import java.time.Instant;

/**
 * A message this dispatcher holds a lease on. {@code claimVersion} fences every later write: a
 * completion, heartbeat or failure carrying an older version changes nothing.
 *
 * @param attempt the number of this attempt, starting at 1
 */
public record ClaimedMessage(long id, Instant createdAt, String topic, String aggregateType, String aggregateId,
                             String idempotencyKey, String orderingKey, String payloadJson, int attempt,
                             int maxAttempts, long claimVersion, Instant claimedAt, Instant leaseUntil) {

    /** Whether a failure of this attempt is final. */
    public boolean isLastAttempt() {
        return attempt >= maxAttempts;
    }
}
