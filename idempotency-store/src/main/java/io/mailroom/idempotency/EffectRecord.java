package io.mailroom.idempotency;

import java.time.Instant;
import java.util.Objects;

/**
 * An immutable snapshot of one {@code idempotency_record} row, for support views and for the
 * exceptions that report a rejected transition. It is what the row said when it was read, not a
 * live handle.
 *
 * @param effectKey       the business effect, e.g. {@code email-order-102}
 * @param fingerprint     the request that first reserved the key
 * @param state           see {@link EffectState}
 * @param reservations    how many attempts reserved the key (1 for the first); also the number that
 *                        fences the latest reservation's transitions
 * @param repeats         how many of those reservations deliberately repeated an unknown outcome
 *                        ({@code reserveAgain})
 * @param reservedBy      who holds or last held the reservation (a worker id), may be null
 * @param firstReservedAt when the key was first reserved (a provider's idempotency-key window starts here)
 * @param reservedAt      when the latest reservation was taken
 * @param completedAt     when the outcome was recorded (succeeded or failed), else null
 * @param resultRef       how the outside world knows the effect (e.g. a provider message id), may be null
 * @param lastError       the latest failure or ambiguity reason, at most 2000 characters, may be null;
 *                        after a re-reservation it still describes the earlier attempt
 * @param descriptorJson  what the caller said about the effect (a JSON object), may be null; a person
 *                        confirming success is added as {@code confirmedBy}
 * @param updatedAt       when the row last changed
 */
public record EffectRecord(String effectKey, Fingerprint fingerprint, EffectState state, int reservations,
                           int repeats, String reservedBy, Instant firstReservedAt, Instant reservedAt, Instant completedAt,
                           String resultRef, String lastError, String descriptorJson, Instant updatedAt) {

    public EffectRecord {
        Objects.requireNonNull(effectKey, "effectKey");
        Objects.requireNonNull(fingerprint, "fingerprint");
        Objects.requireNonNull(state, "state");
        Objects.requireNonNull(firstReservedAt, "firstReservedAt");
        Objects.requireNonNull(reservedAt, "reservedAt");
        Objects.requireNonNull(updatedAt, "updatedAt");
    }
}
