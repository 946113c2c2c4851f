package io.mailroom.orders;

import java.util.Objects;

/**
 * The request contradicts what already happened to the order (HTTP 409): shipping a cancelled
 * order, cancelling a shipped one, or recording a second, different shipment or cancellation.
 * {@link #field()} names the input that differs, or {@code id} when the order's state is to blame.
 * Nothing has been written.
 */
public final class OrderConflictException extends RuntimeException {

    private final String field;

    OrderConflictException(String field, String message) {
        super(Objects.requireNonNull(message, "message"));
        this.field = Objects.requireNonNull(field, "field");
    }

    public String field() {
        return field;
    }
}
