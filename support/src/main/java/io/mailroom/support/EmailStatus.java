package io.mailroom.support;

import com.fasterxml.jackson.annotation.JsonValue;

import java.util.Locale;

/**
 * The status of an email as support staff read it, derived from the effect's stored status and,
 * while it is being sent, from its queue row: a queue row that is {@code running} means
 * {@link #SENDING}; otherwise the effect's status decides, and a pending email not tried yet whose
 * queue row waits for a time still ahead is {@link #SCHEDULED}.
 */
public enum EmailStatus {
    PENDING("pending", "Waiting to send", "The email is queued and will be sent shortly, or after a short pause if an earlier try failed."),
    SCHEDULED("scheduled", "Scheduled", "The email waits for its send time; until then it can be cancelled or rescheduled."),
    SENDING("sending", "Sending now", "A dispatcher is sending this email right now."),
    SENT("sent", "Sent", "The mail provider accepted this email."),
    FAILED("failed", "Failed", "The email could not be sent and no more tries are planned. Retry it once the cause is fixed, or close it as won't send."),
    REVIEW("review", "Needs review", "It is not known whether this email went out. Check with the customer or the provider, then confirm it as sent or resend it."),
    CANCELLED("cancelled", "Cancelled", "Someone cancelled this email before it was sent."),
    CLOSED("closed", "Closed: won't send", "Support decided this email will not be sent; the reason is in its history.");

    private final String code;
    private final String words;
    private final String explanation;

    EmailStatus(String code, String words, String explanation) {
        this.code = code;
        this.words = words;
        this.explanation = explanation;
    }

    /** The status in the API and CLI, e.g. {@code sent}. */
    @JsonValue
    public String code() {
        return code;
    }

    /** The status in words for the console, e.g. "Waiting to send". */
    public String words() {
        return words;
    }

    /** One sentence saying what the status means for the customer. */
    public String explanation() {
        return explanation;
    }

    /** The value of {@code outbox_effect.status} this status is stored as (sending is stored as pending). */
    public String storedStatus() {
        return switch (this) {
            case PENDING, SCHEDULED, SENDING -> "pending";
            case SENT -> "done";
            case FAILED -> "failed";
            case REVIEW -> "review";
            case CANCELLED -> "cancelled";
            case CLOSED -> "closed";
        };
    }

    /**
     * @param effectStatus {@code outbox_effect.status}
     * @param queueStatus  {@code outbox_message.status} of the current queue row, or null when it is gone
     */
    public static EmailStatus derive(String effectStatus, String queueStatus) {
        if ("running".equals(queueStatus) || "running".equals(effectStatus)) {
            return SENDING;
        }
        return switch (effectStatus) {
            case "pending" -> PENDING;
            case "done" -> SENT;
            case "failed" -> FAILED;
            case "review" -> REVIEW;
            case "cancelled" -> CANCELLED;
            case "closed" -> CLOSED;
            default -> throw new IllegalStateException("unknown outbox_effect.status '" + effectStatus + "'");
        };
    }

    /**
     * {@link #derive(String, String)}, and {@link #SCHEDULED} for a pending email whose queue row has
     * not been attempted and is available only after {@code now} (sent later, or rescheduled).
     */
    public static EmailStatus derive(String effectStatus, String queueStatus, java.time.Instant availableAt, Integer attempts,
                                     java.time.Instant now) {
        EmailStatus status = derive(effectStatus, queueStatus);
        boolean scheduled = status == PENDING && "pending".equals(queueStatus) && availableAt != null && availableAt.isAfter(now)
                && attempts != null && attempts == 0;
        return scheduled ? SCHEDULED : status;
    }

    /** Parses a status code as the API and CLI take it; null if it is none. */
    public static EmailStatus parse(String value) {
        if (value == null) {
            return null;
        }
        String v = value.trim().toLowerCase(Locale.ROOT);
        for (EmailStatus s : values()) {
            if (s.code.equals(v)) {
                return s;
            }
        }
        return null;
    }
}
