package io.mailroom.db.sql;

import org.postgresql.util.PSQLException;
import org.postgresql.util.ServerErrorMessage;

import java.sql.SQLException;
import java.util.Optional;

/** Classifies database errors by SQLSTATE (and constraint name), never by message text. */
public final class SqlStates {

    public static final String UNIQUE_VIOLATION = "23505";
    public static final String LOCK_NOT_AVAILABLE = "55P03";
    public static final String SERIALIZATION_FAILURE = "40001";
    public static final String DEADLOCK_DETECTED = "40P01";
    public static final String QUERY_CANCELED = "57014";
    public static final String ADMIN_SHUTDOWN = "57P01";
    public static final String IDLE_IN_TRANSACTION_TIMEOUT = "25P03";
    /** invalid_text_representation: e.g. a payload that is not JSON. */
    public static final String INVALID_TEXT_REPRESENTATION = "22P02";
    /** untranslatable_character: e.g. a JSON {@code \\u0000} escape, which jsonb cannot hold. */
    public static final String UNTRANSLATABLE_CHARACTER = "22P05";

    /** Class 22, data exception: the statement's data (NUL in text 22021, a time out of range 22008), not the database. */
    public static final String DATA_EXCEPTION_CLASS = "22";

    private SqlStates() {
    }

    /** The first SQLException in the cause chain. */
    public static Optional<SQLException> sqlException(Throwable t) {
        for (Throwable c = t; c != null; c = c.getCause()) {
            if (c instanceof SQLException e) {
                return Optional.of(e);
            }
            if (c.getCause() == c) {
                break;
            }
        }
        return Optional.empty();
    }

    /** SQLSTATE of the first SQLException in the cause chain, or null. */
    public static String sqlState(Throwable t) {
        return sqlException(t).map(SQLException::getSQLState).orElse(null);
    }

    public static boolean is(Throwable t, String sqlState) {
        return sqlState.equals(sqlState(t));
    }

    /** Whether {@code t} is a unique violation of the named constraint. */
    public static boolean isUniqueViolation(Throwable t, String constraint) {
        return sqlException(t)
                .filter(e -> UNIQUE_VIOLATION.equals(e.getSQLState()))
                .filter(e -> e instanceof PSQLException p && p.getServerErrorMessage() != null
                        && constraint.equals(p.getServerErrorMessage().getConstraint()))
                .isPresent();
    }

    /** Constraint named by the server for {@code t}, if any. */
    public static Optional<String> constraint(Throwable t) {
        return sqlException(t)
                .filter(e -> e instanceof PSQLException)
                .map(e -> ((PSQLException) e).getServerErrorMessage())
                .map(ServerErrorMessage::getConstraint);
    }

    /**
     * A data exception (SQLSTATE class 22): bad input that slipped past the checks before SQL. The
     * caller's data is wrong and a retry will fail the same way: never "database unavailable".
     */
    public static boolean isDataException(Throwable t) {
        String state = sqlState(t);
        return state != null && state.startsWith(DATA_EXCEPTION_CLASS);
    }

    /** Connection-level failure (class 08, admin shutdown, crash recovery): the session is gone. */
    public static boolean isConnectionLoss(Throwable t) {
        String state = sqlState(t);
        return state != null && (state.startsWith("08") || state.equals(ADMIN_SHUTDOWN)
                || state.equals("57P02") || state.equals("57P03") || state.equals(IDLE_IN_TRANSACTION_TIMEOUT));
    }
}
