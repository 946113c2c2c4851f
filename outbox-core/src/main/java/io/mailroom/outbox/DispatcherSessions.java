package io.mailroom.outbox;

import io.mailroom.db.MailroomSchema;
import org.jooq.DSLContext;
import org.jooq.SQLDialect;
import org.jooq.impl.DSL;
import org.postgresql.PGConnection;

import javax.sql.DataSource;
import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.Collections;
import java.util.Set;
import java.util.WeakHashMap;
import java.util.function.Function;

/**
 * Runs the dispatcher's short transactions. Each physical session is prepared once, the first time
 * the runtime sees it: READ COMMITTED as its default isolation (the claim must never run at
 * REPEATABLE READ or SERIALIZABLE), a {@code statement_timeout} so that a claim stuck behind a lock
 * or a bloated index fails instead of hanging, and an {@code idle_in_transaction_session_timeout}
 * so that a worker that hangs mid-transaction releases its row locks. Settings are per session, so
 * give the dispatcher a pool of its own. Behind a transaction-mode pooler the session is not ours
 * from one transaction to the next: {@link SessionSettings#TRANSACTION} makes the same settings with
 * {@code SET LOCAL} in every transaction instead, {@link SessionSettings#SERVER} leaves them to the
 * role or database.
 */
public final class DispatcherSessions {

    private final DataSource dataSource;
    /** Where Mailroom's tables are: read from the data source ({@link MailroomSchema#bind}). */
    private final MailroomSchema schema;
    private final Duration statementTimeout;
    private final Duration idleInTransactionTimeout;
    private final SessionSettings mode;
    private final String perTransaction;
    private final Set<Object> prepared = Collections.synchronizedSet(Collections.newSetFromMap(new WeakHashMap<>()));

    public DispatcherSessions(DataSource dataSource, Duration statementTimeout, Duration idleInTransactionTimeout) {
        this(dataSource, statementTimeout, idleInTransactionTimeout, SessionSettings.SESSION);
    }

    public DispatcherSessions(DataSource dataSource, Duration statementTimeout, Duration idleInTransactionTimeout,
                              SessionSettings mode) {
        this.dataSource = dataSource;
        this.schema = MailroomSchema.of(dataSource);
        this.statementTimeout = statementTimeout;
        this.idleInTransactionTimeout = idleInTransactionTimeout;
        this.mode = java.util.Objects.requireNonNull(mode, "mode");
        // one string, sent with the BEGIN in the same round trip; SET TRANSACTION must come first
        StringBuilder sql = new StringBuilder("SET TRANSACTION ISOLATION LEVEL READ COMMITTED");
        if (statementTimeout != null) {
            sql.append("; SET LOCAL statement_timeout = ").append(statementTimeout.toMillis());
        }
        if (idleInTransactionTimeout != null) {
            sql.append("; SET LOCAL idle_in_transaction_session_timeout = ").append(idleInTransactionTimeout.toMillis());
        }
        this.perTransaction = sql.toString();
    }

    /** Where this runtime's session settings are made. */
    public SessionSettings mode() {
        return mode;
    }

    /** Runs {@code work} in one READ COMMITTED transaction and commits it; rolls back on any exception. */
    public <T> T inTransaction(Function<DSLContext, T> work) {
        try (Connection connection = dataSource.getConnection()) {
            prepare(connection);
            boolean autoCommit = connection.getAutoCommit();
            if (autoCommit) {
                connection.setAutoCommit(false);
            }
            try {
                if (mode == SessionSettings.TRANSACTION) {
                    try (Statement st = connection.createStatement()) {
                        st.execute(perTransaction);
                    }
                }
                T result = work.apply(schema.dsl(connection));
                connection.commit();
                return result;
            } catch (RuntimeException | Error e) {
                rollbackQuietly(connection, e);
                throw e;
            } finally {
                if (autoCommit && !connection.isClosed()) {
                    try {
                        connection.setAutoCommit(true);
                    } catch (SQLException ignored) {
                        // a broken connection; the pool will evict it
                    }
                }
            }
        } catch (SQLException e) {
            throw new OutboxException("database connection failed (SQLSTATE " + e.getSQLState() + ")", e);
        }
    }

    /** The data source the sessions come from. */
    public DataSource dataSource() {
        return dataSource;
    }

    private void prepare(Connection connection) throws SQLException {
        if (mode != SessionSettings.SESSION) {
            return;
        }
        Object physical = connection.isWrapperFor(PGConnection.class) ? connection.unwrap(PGConnection.class) : connection;
        if (prepared.contains(physical)) {
            return;
        }
        StringBuilder sql = new StringBuilder("SET SESSION CHARACTERISTICS AS TRANSACTION ISOLATION LEVEL READ COMMITTED");
        if (statementTimeout != null) {
            sql.append("; SET statement_timeout = ").append(statementTimeout.toMillis());
        }
        if (idleInTransactionTimeout != null) {
            sql.append("; SET idle_in_transaction_session_timeout = ").append(idleInTransactionTimeout.toMillis());
        }
        try (Statement st = connection.createStatement()) {
            st.execute(sql.toString());
        }
        if (!connection.getAutoCommit()) {
            connection.commit();
        }
        prepared.add(physical);
    }

    private static void rollbackQuietly(Connection connection, Throwable cause) {
        try {
            connection.rollback();
        } catch (SQLException e) {
            cause.addSuppressed(e);
        }
    }
}
