package io.mailroom.idempotency;

/**
 * A concurrent transaction kept a reservation from being decided. Either the database refused it
 * (SQLSTATE {@code 40001} under REPEATABLE READ or SERIALIZABLE, where a row committed after this
 * transaction's snapshot cannot be read; or {@code 23505} on {@code idempotency_record_pkey}), and
 * the caller's transaction is then aborted; or the key was released and re-reserved by others in
 * every round of {@link IdempotencyStore#reserve}. Either way: roll back and try again in a new
 * transaction, at READ COMMITTED, where reservations of one key wait for each other instead.
 */
public final class ReservationConflictException extends IdempotencyException {

    private final String sqlState;

    ReservationConflictException(String effectKey, String sqlState, String message, Throwable cause) {
        super(effectKey, message, cause);
        this.sqlState = sqlState;
    }

    /** The SQLSTATE the database answered with, or null when no statement failed. */
    public String sqlState() {
        return sqlState;
    }
}
