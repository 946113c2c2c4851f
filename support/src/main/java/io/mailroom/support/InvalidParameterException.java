package io.mailroom.support;

/**
 * A request parameter (or CLI option) is malformed or out of range. The message says what was
 * expected and never repeats the offending value, so it is safe to show in any page or log.
 */
public final class InvalidParameterException extends RuntimeException {

    private final String parameter;

    public InvalidParameterException(String parameter, String message) {
        super(message);
        this.parameter = parameter;
    }

    /** The parameter's name as the caller wrote it, e.g. {@code orderId} or {@code since}. */
    public String parameter() {
        return parameter;
    }
}
