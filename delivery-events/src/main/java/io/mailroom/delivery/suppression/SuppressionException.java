package io.mailroom.delivery.suppression;

/**
 * A person's suppression action that cannot be done as asked; {@link #field()} names the input at
 * fault, {@link #conflict()} says the input was well-formed but the list's state forbids it
 * (lifting an address that is not suppressed, adding one already suppressed by hand).
 */
public final class SuppressionException extends RuntimeException {

    private final String field;
    private final boolean conflict;

    private SuppressionException(String field, String message, boolean conflict) {
        super(message);
        this.field = field;
        this.conflict = conflict;
    }

    static SuppressionException invalid(String field, String message) {
        return new SuppressionException(field, message, false);
    }

    static SuppressionException conflict(String field, String message) {
        return new SuppressionException(field, message, true);
    }

    public String field() {
        return field;
    }

    public boolean conflict() {
        return conflict;
    }
}
