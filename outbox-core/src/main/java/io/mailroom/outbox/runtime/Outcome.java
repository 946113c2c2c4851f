package io.mailroom.outbox.runtime;

import org.jooq.DSLContext;

import java.time.Duration;
import java.util.List;
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

    /**
     * A step the completer writes together with the other outcomes' steps of the same
     * {@link #group()}, in one call of {@link #runGroup} in the batch's transaction (e.g. one
     * statement for the idempotency records of a whole batch), instead of one {@link #run} each.
     * Written alone it is a group of one. If the group throws, the completer writes the batch's
     * outcomes one by one, each step alone, as it does for any step that fails.
     */
    interface GroupedStep extends TransactionalStep {

        /** Steps whose groups are equal are written together by one of them. */
        Object group();

        /** Writes {@code steps} (all of this group) with the effect of running each of them. */
        void runGroup(DSLContext tx, List<GroupedStep> steps);

        @Override
        default void run(DSLContext tx) {
            runGroup(tx, List.of(this));
        }
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
     *
     * @param waitingFor what the message waits for, as a code of the handler's (e.g.
     *                   {@code breaker:smtp}), or null: when it is there before {@code after} has
     *                   passed, {@link WaitingMessages#availableNow} ends the wait of every message
     *                   waiting for it
     */
    record NotAttempted(String reason, Duration after, String detail, TransactionalStep alsoInTransaction,
                        String waitingFor) implements Outcome {
        public NotAttempted {
            Objects.requireNonNull(reason, "reason");
            Objects.requireNonNull(after, "after");
            if (after.isNegative()) {
                throw new IllegalArgumentException("after must not be negative: " + after);
            }
            WaitingMessages.requireCode(waitingFor);
        }

        /** Waiting for nothing in particular: only for {@code after} to pass. */
        public NotAttempted(String reason, Duration after, String detail, TransactionalStep alsoInTransaction) {
            this(reason, after, detail, alsoInTransaction, null);
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
