package io.mailroom.idempotency;

import java.time.Instant;
import java.util.Objects;

/**
 * The answer to "may I perform this effect now?" from {@link IdempotencyStore#reserve} and
 * {@link IdempotencyStore#reserveAgain}. Only {@link Reserved} means "go ahead"; every other answer
 * means "do not perform the effect now", and says why.
 */
public sealed interface Reservation {

    /** The business effect this answer is about. */
    String effectKey();

    /**
     * This attempt holds the key: perform the effect, then record the outcome.
     *
     * @param reservationNumber 1 for the first reservation of the key; higher when an earlier attempt
     *                          failed (known not performed) or was knowingly repeated; every transition
     *                          of this attempt passes it, so a stale holder's transition changes nothing
     * @param firstReservedAt   when the key was first reserved: a provider's idempotency-key window
     *                          is counted from here, not from this reservation
     * @param repeats           how many reservations of the key, this one included, repeated an earlier
     *                          attempt whose outcome was unknown ({@link IdempotencyStore#reserveAgain})
     */
    record Reserved(String effectKey, int reservationNumber, Instant firstReservedAt, int repeats)
            implements Reservation {
        public Reserved {
            Objects.requireNonNull(effectKey, "effectKey");
            Objects.requireNonNull(firstReservedAt, "firstReservedAt");
            if (reservationNumber < 1) {
                throw new IllegalArgumentException("reservationNumber must be >= 1, got " + reservationNumber);
            }
            if (repeats < 0 || repeats >= reservationNumber) {
                throw new IllegalArgumentException("repeats must be 0.." + (reservationNumber - 1) + ", got " + repeats);
            }
        }

        /** Whether no attempt of this effect was ever reserved before. */
        public boolean firstTime() {
            return reservationNumber == 1;
        }
    }

    /** The effect already happened: do not perform it again; treat the work as done. */
    record AlreadySucceeded(String effectKey, String resultRef, Instant completedAt) implements Reservation {
    }

    /**
     * The same key arrived with a different request. This is a caller error (a reused key, or a
     * changed template under the same key), never a reason to perform the effect. The row is unchanged.
     *
     * @param expected the fingerprint stored with the key
     * @param actual   the fingerprint of this request
     */
    record FingerprintMismatch(String effectKey, Fingerprint expected, Fingerprint actual) implements Reservation {
    }

    /**
     * An earlier reservation exists whose outcome is unknown. Repeating the effect is the caller's
     * decision, by policy, and is made explicit with {@link IdempotencyStore#reserveAgain}.
     */
    sealed interface OutcomeUnknown extends Reservation {
        /**
         * How many reservations the key had when this answer was given: the number of the reservation
         * whose outcome is unknown. {@code reserveAgain} checks it; {@code markAmbiguous} of an
         * unrecorded attempt is fenced by it.
         */
        int reservations();

        /** How many times an unknown outcome of this key was already repeated deliberately. */
        int repeats();

        /** Who took the latest reservation. */
        String reservedBy();

        /** When the latest reservation was taken. */
        Instant reservedAt();

        /** When the key was first reserved (for a provider's idempotency-key window). */
        Instant firstReservedAt();
    }

    /**
     * Reserved before, no outcome recorded: the holder may still be working (its lease may not have
     * expired) or may have died after performing the effect. Judge by {@link #reservedAt()} and the
     * work item's lease, then repeat ({@code reserveAgain}) or park (e.g. {@code markAmbiguous}).
     */
    record Unrecorded(String effectKey, Instant reservedAt, String reservedBy, int reservations,
                      Instant firstReservedAt, int repeats) implements OutcomeUnknown {
    }

    /**
     * Someone marked the outcome unknown explicitly (e.g. a timeout after the request was sent).
     * Resolved by a person ({@code confirmSucceeded}) or by a deliberate repeat ({@code reserveAgain}).
     *
     * @param reason   why it was marked, as given to {@code markAmbiguous}
     * @param markedAt when it was marked
     */
    record Ambiguous(String effectKey, String reason, Instant markedAt, Instant reservedAt, String reservedBy,
                     int reservations, Instant firstReservedAt, int repeats) implements OutcomeUnknown {
    }
}
