package io.mailroom.email.service;

/**
 * The dispatcher could not start on its database: it refused the dispatcher (credentials, no such
 * database, no permission), or did not answer within {@code MAILROOM_DB_STARTUP_TIMEOUT}. The
 * message names the URL (password masked) and the last SQLSTATE, and is all an operator needs to see.
 */
public final class DatabaseStartupException extends RuntimeException {

    DatabaseStartupException(String message, Throwable cause) {
        super(message, cause);
    }
}
