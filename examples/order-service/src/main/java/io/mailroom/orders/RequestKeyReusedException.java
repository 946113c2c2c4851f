package io.mailroom.orders;

/**
 * An {@code Idempotency-Key} that already placed an order was sent with a different request (HTTP
 * 422). Nothing has been written. The client should use a new key for a new order.
 */
public final class RequestKeyReusedException extends RuntimeException {

    RequestKeyReusedException() {
        super(RequestKey.HEADER + " was already used for a different order request; use a new key for a new order");
    }

    /** The offending input: the header. */
    public String field() {
        return RequestKey.HEADER;
    }
}
