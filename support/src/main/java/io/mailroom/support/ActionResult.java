package io.mailroom.support;

/** What a support action did. The server maps it to 200, 409 (busy or not allowed) or 404. */
public sealed interface ActionResult {

    /** Done, and written to the audit log in the same transaction; {@code email} is as it is now. */
    record Applied(String action, EmailView email, String newKey) implements ActionResult {
    }

    /** A dispatcher holds the email right now (NOWAIT); nothing changed; try again in a moment. */
    record Busy(String key) implements ActionResult {
        public String message() {
            return "email " + key + " is being worked on right now; nothing was changed, try again in a moment";
        }
    }

    /** No email with that key (or its queue row is gone, for actions that need it). */
    record NotFound(String key, String message) implements ActionResult {
    }

    /**
     * The action does not fit the email's current status (or, {@code code} {@link ApiError#SUPPRESSED}, its
     * recipient is suppressed); nothing changed.
     *
     * @param code the API's error code: {@link ApiError#NOT_ALLOWED} or {@link ApiError#SUPPRESSED}
     */
    record NotAllowed(String key, EmailStatus current, String message, String code) implements ActionResult {
        public NotAllowed(String key, EmailStatus current, String message) {
            this(key, current, message, ApiError.NOT_ALLOWED);
        }
    }
}
