package io.mailroom.outbox;

import java.time.Instant;
import java.util.Objects;

/**
 * The answer to {@link PendingMessages#cancel} or {@link PendingMessages#reschedule}: what happened
 * to the message of one idempotency key.
 *
 * @param outcome        cancelled, rescheduled, too late, or not found
 * @param idempotencyKey the key asked about
 * @param status         the message's status after the call ({@link MessageStatus#CANCELLED},
 *                       {@link MessageStatus#PENDING} when rescheduled); for {@link Outcome#TOO_LATE}
 *                       the status that made it too late: {@link MessageStatus#RUNNING} (claimed by a
 *                       dispatcher: being sent), {@link MessageStatus#DONE} (sent), or a finished one;
 *                       null when not found
 * @param sendAt         when rescheduled, the time it is now claimable from; else null
 */
public record PendingChange(Outcome outcome, String idempotencyKey, MessageStatus status, Instant sendAt) {

    /** What a cancel or reschedule did. */
    public enum Outcome {
        /** The message was pending and is now cancelled: it will never be sent. */
        CANCELLED,
        /** The message was pending and is now claimable from {@link #sendAt()}. */
        RESCHEDULED,
        /** The message was no longer pending: {@link #status()} says why (claimed, sent, ...). Nothing changed. */
        TOO_LATE,
        /** No message with that idempotency key, or its queue row was removed by retention. Nothing changed. */
        NOT_FOUND
    }

    public PendingChange {
        Objects.requireNonNull(outcome, "outcome");
        Objects.requireNonNull(idempotencyKey, "idempotencyKey");
    }

    /**
     * The answer as the SQL functions {@code cancel_email} and {@code reschedule_email} return it:
     * {@code cancelled}, {@code rescheduled}, {@code not_found}, or {@code too_late:<state>} with the
     * state in support's words: {@code sending} (claimed by a dispatcher), {@code sent}, {@code failed},
     * {@code review}, {@code cancelled}, {@code closed}.
     */
    public String answer() {
        return switch (outcome) {
            case CANCELLED -> "cancelled";
            case RESCHEDULED -> "rescheduled";
            case NOT_FOUND -> "not_found";
            case TOO_LATE -> "too_late:" + stateWord(status);
        };
    }

    /** Why it is too late, in words; null for any other outcome. */
    public String tooLateBecause() {
        if (outcome != Outcome.TOO_LATE) {
            return null;
        }
        return switch (status) {
            case RUNNING -> "a dispatcher has already claimed " + idempotencyKey + " and is sending it";
            case DONE -> idempotencyKey + " has already been sent";
            case FAILED -> idempotencyKey + " has already failed for good";
            case REVIEW -> idempotencyKey + " was attempted and is waiting for review";
            case CANCELLED -> idempotencyKey + " is already cancelled";
            case CLOSED -> idempotencyKey + " was closed without sending";
            case PENDING -> throw new IllegalStateException("a pending message is never too late");
        };
    }

    /** A status in the words support and the SQL answers use: running is "sending", done is "sent". */
    static String stateWord(MessageStatus status) {
        return switch (status) {
            case RUNNING -> "sending";
            case DONE -> "sent";
            default -> status.sql();
        };
    }
}
