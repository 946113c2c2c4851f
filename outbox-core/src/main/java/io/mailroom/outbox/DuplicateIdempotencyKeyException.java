package io.mailroom.outbox;

/**
 * The business effect was already enqueued: {@code outbox_effect}'s primary key refused the key
 * (SQLSTATE 23505 on constraint {@code outbox_effect_pkey}). PostgreSQL has aborted the caller's
 * transaction; roll it back.
 */
public final class DuplicateIdempotencyKeyException extends OutboxException {

    private final String idempotencyKey;

    public DuplicateIdempotencyKeyException(String idempotencyKey, Throwable cause) {
        super("idempotency key already enqueued: " + idempotencyKey, cause);
        this.idempotencyKey = idempotencyKey;
    }

    public String idempotencyKey() {
        return idempotencyKey;
    }
}
