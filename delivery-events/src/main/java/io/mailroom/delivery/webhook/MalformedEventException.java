package io.mailroom.delivery.webhook;

/** A webhook body an adapter cannot read; the message names the field and what was wrong with it. */
public final class MalformedEventException extends Exception {

    private final String field;

    public MalformedEventException(String field, String problem) {
        super(field + ": " + problem);
        this.field = field;
    }

    /** The JSON path of the field that was wrong ({@code data.bounce.type}), or {@code body}. */
    public String field() {
        return field;
    }
}
