package io.mailroom.support.cli;

/** Exit codes of the support commands, so scripts can tell "try again" from "wrong input". */
public final class ExitCodes {

    public static final int OK = 0;
    /** Something unexpected; the message says what. */
    public static final int FAILURE = 1;
    /** Bad options or arguments (picocli's own code for invalid input, too). */
    public static final int INVALID_INPUT = 2;
    /** No such email. */
    public static final int NOT_FOUND = 3;
    /** A dispatcher holds the email right now; nothing changed; try again shortly. */
    public static final int BUSY = 4;
    /** The action does not fit the email's status; nothing changed. */
    public static final int NOT_ALLOWED = 5;
    /** The database could not be reached. */
    public static final int UNAVAILABLE = 6;

    private ExitCodes() {
    }
}
