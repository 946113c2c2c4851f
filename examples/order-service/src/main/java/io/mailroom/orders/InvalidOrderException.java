package io.mailroom.orders;

import java.util.Objects;

/**
 * An order request that cannot be placed as given. {@link #field()} names the offending input in
 * the request's JSON terms ({@code customerEmail}, {@code lines[2].unitPrice}, or {@code body} when
 * the document as a whole is unusable), so an HTTP client can point at it. Nothing has been written
 * when this is thrown.
 */
public final class InvalidOrderException extends RuntimeException {

    private final String field;

    public InvalidOrderException(String field, String message) {
        super(Objects.requireNonNull(message, "message"));
        this.field = Objects.requireNonNull(field, "field");
    }

    /** The offending input, e.g. {@code lines[0].quantity}. */
    public String field() {
        return field;
    }
}
