package io.mailroom.support.cli;

/** Holder for the command classes' shared text; the commands themselves are top-level classes. */
final class Commands {

    static final String KEY_HELP = "the email's key, e.g. email-order-102";

    private Commands() {
    }
}
