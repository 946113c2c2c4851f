package io.mailroom.outbox;

import java.sql.SQLException;
import java.util.Optional;

/**
 * Moved to {@link io.mailroom.db.sql.SqlStates} (module db), so that the idempotency store, which does
 * not depend on this module, classifies errors with the same code. This forwarder only keeps
 * email-dispatcher and order-service compiling until their imports are switched; it holds no logic.
 */
@Deprecated(forRemoval = true)
public final class SqlStates {

    public static final String UNIQUE_VIOLATION = io.mailroom.db.sql.SqlStates.UNIQUE_VIOLATION;
    public static final String LOCK_NOT_AVAILABLE = io.mailroom.db.sql.SqlStates.LOCK_NOT_AVAILABLE;
    public static final String SERIALIZATION_FAILURE = io.mailroom.db.sql.SqlStates.SERIALIZATION_FAILURE;
    public static final String DEADLOCK_DETECTED = io.mailroom.db.sql.SqlStates.DEADLOCK_DETECTED;
    public static final String QUERY_CANCELED = io.mailroom.db.sql.SqlStates.QUERY_CANCELED;
    public static final String ADMIN_SHUTDOWN = io.mailroom.db.sql.SqlStates.ADMIN_SHUTDOWN;
    public static final String IDLE_IN_TRANSACTION_TIMEOUT = io.mailroom.db.sql.SqlStates.IDLE_IN_TRANSACTION_TIMEOUT;
    public static final String INVALID_TEXT_REPRESENTATION = io.mailroom.db.sql.SqlStates.INVALID_TEXT_REPRESENTATION;
    public static final String UNTRANSLATABLE_CHARACTER = io.mailroom.db.sql.SqlStates.UNTRANSLATABLE_CHARACTER;

    private SqlStates() {
    }

    public static Optional<SQLException> sqlException(Throwable t) {
        return io.mailroom.db.sql.SqlStates.sqlException(t);
    }

    public static String sqlState(Throwable t) {
        return io.mailroom.db.sql.SqlStates.sqlState(t);
    }

    public static boolean is(Throwable t, String sqlState) {
        return io.mailroom.db.sql.SqlStates.is(t, sqlState);
    }

    public static boolean isUniqueViolation(Throwable t, String constraint) {
        return io.mailroom.db.sql.SqlStates.isUniqueViolation(t, constraint);
    }

    public static Optional<String> constraint(Throwable t) {
        return io.mailroom.db.sql.SqlStates.constraint(t);
    }

    public static boolean isConnectionLoss(Throwable t) {
        return io.mailroom.db.sql.SqlStates.isConnectionLoss(t);
    }
}
