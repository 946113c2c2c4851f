package io.mailroom.delivery.dsn;

/** The bytes are not an RFC 3464 delivery status notification; the message names what is missing. */
public final class MalformedDsnException extends Exception {

    public MalformedDsnException(String message) {
        super(message);
    }

    public MalformedDsnException(String message, Throwable cause) {
        super(message, cause);
    }
}
