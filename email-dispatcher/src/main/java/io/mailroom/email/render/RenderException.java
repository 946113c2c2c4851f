package io.mailroom.email.render;

/**
 * The outbox payload cannot become an email: malformed JSON, invalid UTF-8, a missing or invalid
 * field, a recipient that is not a valid address, a body over the size limit. Permanent: the same
 * payload will fail the same way on every attempt, so the message should fail at once.
 * {@link #field()} names the payload field at fault ({@code customerEmail}, {@code lines[1].unitPrice},
 * {@code payload} for the document as a whole, {@code body} for the size limit).
 */
public final class RenderException extends Exception {

    private static final long serialVersionUID = 1L;

    private final String field;

    public RenderException(String field, String problem) {
        super(field + ": " + problem);
        this.field = field;
    }

    public String field() {
        return field;
    }
}
