package io.mailroom.outbox;

import org.jooq.DSLContext;

import java.time.Duration;
import java.util.Objects;

/**
 * What became of one attempt, as a handler reports it. Each outcome may carry a {@code detail}
 * (a JSON object, e.g. the provider's status and message id) kept in the attempt history, and a
 * {@link TransactionalStep} run in the very transaction that records the outcome, only if the
 * claim is still held (e.g. recording "sent" in the idempotency store).
 */
public sealed interface Outcome {

    /** JSON object for the attempt history, or null. */
    String detail();

    /** Runs inside the finishing transaction when the claim still holds, or null. */
    TransactionalStep alsoInTransaction();

    /** Work to do in the transaction that records an outcome. */
    @FunctionalInterface
    interface TransactionalStep {
        void run(DSLContext tx);
    }

    /** The work is done: the message becomes {@code done}. */
    record Done(String detail, TransactionalStep alsoInTransaction) implements Outcome {
    }

    /**
     * A transient failure: back to {@code pending} after {@code after} (null: the dispatcher's
     * backoff), or {@code failed} if this was the last attempt.
     */
    record RetryLater(String error, Duration after, String detail, TransactionalStep alsoInTransaction) implements Outcome {
        public RetryLater {
            Objects.requireNonNull(error, "error");
            if (after != null && after.isNegative()) {
                throw new IllegalArgumentException("retry-after must not be negative: " + after);
            }
        }
    }

    /** A permanent failure: {@code failed} at once, whatever attempts are left. */
    record Failed(String reason, String detail, TransactionalStep alsoInTransaction) implements Outcome {
        public Failed {
            Objects.requireNonNull(reason, "reason");
        }
    }

    /**
     * Nothing was attempted (e.g. the provider's circuit breaker is open, or its bulkhead is full):
     * the message goes back to {@code pending} after {@code after} and the attempt is not counted.
     */
    record NotAttempted(String reason, Duration after, String detail, TransactionalStep alsoInTransaction) implements Outcome {
        public NotAttempted {
            Objects.requireNonNull(reason, "reason");
            Objects.requireNonNull(after, "after");
            if (after.isNegative()) {
                throw new IllegalArgumentException("after must not be negative: " + after);
            }
        }
    }

    /** The outcome is unknown and repeating could do harm: park for a person to decide ({@code review}). */
    record Review(String reason, String detail, TransactionalStep alsoInTransaction) implements Outcome {
        public Review {
            Objects.requireNonNull(reason, "reason");
        }
    }

    static Outcome done() {
        return new Done(null, null);
    }

    static Outcome done(String detail, TransactionalStep alsoInTransaction) {
        return new Done(detail, alsoInTransaction);
    }

    static Outcome retryLater(String error) {
        return new RetryLater(error, null, null, null);
    }

    static Outcome retryLater(String error, Duration after) {
        return new RetryLater(error, after, null, null);
    }

    static Outcome failed(String reason) {
        return new Failed(reason, null, null);
    }

    static Outcome notAttempted(String reason, Duration after) {
        return new NotAttempted(reason, after, null, null);
    }

    static Outcome review(String reason) {
        return new Review(reason, null, null);
    }
}
