package io.mailroom.idempotency;

import org.postgresql.util.PSQLException;
import org.postgresql.util.ServerErrorMessage;

import java.sql.SQLException;

/** Classifies database errors by SQLSTATE and constraint name, never by message text. */
final class SqlErrors {

    static final String UNIQUE_VIOLATION = "23505";
    static final String SERIALIZATION_FAILURE = "40001";
    /** invalid_text_representation: e.g. a descriptor that is not JSON. */
    static final String INVALID_TEXT_REPRESENTATION = "22P02";

    private SqlErrors() {
    }

    /** SQLSTATE of the first {@link SQLException} in the cause chain, or null. */
    static String sqlState(Throwable t) {
        SQLException e = sqlException(t);
        return e == null ? null : e.getSQLState();
    }

    /** Whether {@code t} is a unique violation of the constraint named {@code constraint}. */
    static boolean isUniqueViolation(Throwable t, String constraint) {
        SQLException e = sqlException(t);
        if (e == null || !UNIQUE_VIOLATION.equals(e.getSQLState()) || !(e instanceof PSQLException p)) {
            return false;
        }
        ServerErrorMessage server = p.getServerErrorMessage();
        return server != null && constraint.equals(server.getConstraint());
    }

    private static SQLException sqlException(Throwable t) {
        for (Throwable c = t; c != null; c = c.getCause() == c ? null : c.getCause()) {
            if (c instanceof SQLException e) {
                return e;
            }
        }
        return null;
    }
}
