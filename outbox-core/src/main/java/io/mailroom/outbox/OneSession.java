package io.mailroom.outbox;

import io.mailroom.db.MailroomSchema;
import org.jooq.SQLDialect;
import org.jooq.TransactionalCallable;
import org.jooq.exception.DataAccessException;
import org.jooq.impl.DSL;

import javax.sql.DataSource;
import java.sql.Connection;
import java.sql.SQLException;

/**
 * A transaction on one session taken from the pool once. jOOQ's transactions over a
 * {@link DataSource} ask the pool for a connection in {@code begin}, again in {@code rollback} and in
 * its error path: with the database refusing connections each of those waits the pool's whole
 * connection timeout, so a caller learned "unavailable" only after three of them (15 s at 5 s) while
 * holding a request slot. Here the first refusal is the answer.
 */
public final class OneSession {

    private OneSession() {
    }

    /**
     * Runs {@code tx} in one transaction on one session of {@code dataSource}, committed when it
     * returns, rolled back when it throws. No session within the pool's timeout is a
     * {@link DataAccessException} carrying the pool's {@link SQLException} (its SQLSTATE, 08xxx for a
     * refused or lost connection).
     */
    public static <T> T transactionResult(DataSource dataSource, TransactionalCallable<T> tx) {
        Connection connection;
        try {
            connection = dataSource.getConnection();
        } catch (SQLException e) {
            throw new DataAccessException("no database session: " + e.getMessage(), e);
        }
        try (connection) {
            return MailroomSchema.of(dataSource).dsl(connection).transactionResult(tx);
        } catch (SQLException e) { // from close(): the work is done, the session was already lost
            throw new DataAccessException("closing the database session failed: " + e.getMessage(), e);
        }
    }
}
