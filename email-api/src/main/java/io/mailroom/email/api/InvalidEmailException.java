package io.mailroom.email.api;

/**
 * An email that cannot be enqueued, raised inside the caller's transaction before anything is
 * written: {@link #field()} names what was wrong ({@code to.address}, {@code data.order.lines[2]},
 * {@code headers.X-Campaign}), the message says why.
 */
public final class InvalidEmailException extends IllegalArgumentException {

    private final String field;

    public InvalidEmailException(String field, String problem) {
        super(field + " " + problem);
        this.field = field;
    }

    public String field() {
        return field;
    }
}
