package io.mailroom.email;

/**
 * An email that must never be sent as it stands: a malformed address, a header-injection attempt,
 * an oversized body. Permanent by nature: sending it again cannot succeed. {@link #field()} names
 * the part at fault ({@code to.address}, {@code subject}, {@code body}, {@code headers.X-Foo}).
 */
public final class InvalidEmailException extends IllegalArgumentException {

    private static final long serialVersionUID = 1L;

    private final String field;

    public InvalidEmailException(String field, String message) {
        super(field + ": " + message);
        this.field = field;
    }

    public String field() {
        return field;
    }
}
