package io.mailroom.idempotency;

/** Base of the idempotency store's own exceptions; bad arguments are {@link IllegalArgumentException}s. */
public abstract class IdempotencyException extends RuntimeException {

    private final String effectKey;

    protected IdempotencyException(String effectKey, String message, Throwable cause) {
        super(message, cause);
        this.effectKey = effectKey;
    }

    /** The business effect concerned. */
    public String effectKey() {
        return effectKey;
    }
}
