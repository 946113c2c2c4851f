package io.mailroom.outbox;

/** States of an outbox message, as stored in {@code outbox_message.status}. */
public enum MessageStatus {
    /** Waiting to be claimed once {@code available_at} has come. */
    PENDING,
    /** Claimed; a worker holds a lease until {@code lease_until}. */
    RUNNING,
    /** Handled successfully. */
    DONE,
    /** Failed for good: a permanent error, or the last attempt failed. */
    FAILED,
    /** Parked for a person: the outcome is unknown and repeating could do harm. */
    REVIEW,
    /** Cancelled by a person before it was handled. */
    CANCELLED,
    /** Closed by a person after it failed or was parked ("won't send"): it will not be handled again. */
    CLOSED;

    public String sql() {
        return name().toLowerCase(java.util.Locale.ROOT);
    }

    public static MessageStatus fromSql(String value) {
        return valueOf(value.toUpperCase(java.util.Locale.ROOT));
    }

    /** Whether nothing more will happen to the message without a person. */
    public boolean isFinished() {
        return this == DONE || this == FAILED || this == REVIEW || this == CANCELLED || this == CLOSED;
    }
}
