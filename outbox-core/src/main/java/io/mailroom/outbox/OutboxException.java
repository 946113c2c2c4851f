package io.mailroom.outbox;

/** Base of the outbox's own exceptions. */
public class OutboxException extends RuntimeException {

    public OutboxException(String message) {
        super(message);
    }

    public OutboxException(String message, Throwable cause) {
        super(message, cause);
    }
}
