package io.mailroom.spring;

import io.mailroom.email.api.EmailOutbox;
import io.mailroom.email.api.OutgoingEmail;
import io.mailroom.outbox.EnqueuedMessage;
import org.jooq.DSLContext;
import org.jooq.SQLDialect;
import org.jooq.impl.DSL;
import org.springframework.jdbc.datasource.DataSourceUtils;
import org.springframework.jdbc.datasource.TransactionAwareDataSourceProxy;
import org.springframework.transaction.TransactionSystemException;
import org.springframework.transaction.support.TransactionSynchronizationManager;

import javax.sql.DataSource;
import java.sql.Connection;
import java.sql.SQLException;
import java.util.Objects;

/**
 * What a Spring application's code calls to send a transactional email: {@link #enqueue} writes it
 * into Mailroom's outbox on the connection of the Spring-managed transaction in progress, so the
 * email exists exactly when that transaction commits, and a rollback takes it away with everything
 * else.
 *
 * <p>The connection is found the way {@code JdbcTemplate} finds it: a jOOQ context over a
 * {@link TransactionAwareDataSourceProxy} of the application's {@code DataSource}, which hands out
 * the connection bound to the current transaction by a {@code DataSourceTransactionManager}, or by a
 * {@code JpaTransactionManager} (which exposes its EntityManager's JDBC connection for that
 * {@code DataSource}).
 *
 * <p>Invariant: nothing is written unless that connection is in a transaction.
 * An enqueue outside one is refused with {@link EnqueueOutsideTransactionException} rather than
 * committed on its own: an email that commits without its business change (or before it) is exactly
 * the bug an outbox is there to remove.
 */
public class MailroomEmails {

    private final DataSource dataSource;
    private final DSLContext dsl;
    private final EmailOutbox outbox;

    public MailroomEmails(DataSource dataSource, EmailOutbox outbox) {
        Objects.requireNonNull(dataSource, "dataSource");
        this.dataSource = dataSource instanceof TransactionAwareDataSourceProxy proxy
                ? Objects.requireNonNull(proxy.getTargetDataSource(), "target DataSource") : dataSource;
        this.dsl = DSL.using(new TransactionAwareDataSourceProxy(this.dataSource), SQLDialect.POSTGRES);
        this.outbox = Objects.requireNonNull(outbox, "outbox");
    }

    /**
     * Writes {@code email} into the outbox in the current transaction, after every check of
     * {@link EmailOutbox}; the dispatchers see it once that transaction commits.
     *
     * @throws EnqueueOutsideTransactionException no transaction of this {@code DataSource} is in
     *         progress, or it is read-only
     * @throws io.mailroom.email.api.InvalidEmailException a field is wrong (named)
     * @throws io.mailroom.outbox.DuplicateIdempotencyKeyException the key was enqueued before
     */
    public EnqueuedMessage enqueue(OutgoingEmail email) {
        requireTransaction();
        return outbox.enqueue(dsl, email);
    }

    /**
     * Cancels the email of {@code idempotencyKey} in the current transaction unless a dispatcher has
     * claimed it ({@link EmailOutbox#cancel}): cancelled, too late (and why), or not found.
     *
     * @throws EnqueueOutsideTransactionException as {@link #enqueue}
     */
    public io.mailroom.outbox.PendingChange cancel(String idempotencyKey) {
        requireTransaction();
        return outbox.cancel(dsl, idempotencyKey);
    }

    /**
     * Moves the email of {@code idempotencyKey} to {@code sendAt} in the current transaction unless a
     * dispatcher has claimed it ({@link EmailOutbox#reschedule}; at most its bound ahead, a time past is now).
     *
     * @throws EnqueueOutsideTransactionException as {@link #enqueue}
     * @throws io.mailroom.email.api.InvalidEmailException naming {@code sendAt} beyond the bound
     */
    public io.mailroom.outbox.PendingChange reschedule(String idempotencyKey, java.time.Instant sendAt) {
        requireTransaction();
        return outbox.reschedule(dsl, idempotencyKey, sendAt);
    }

    /** The email API underneath, for code that already holds a jOOQ context on the transaction. */
    public EmailOutbox outbox() {
        return outbox;
    }

    private void requireTransaction() {
        if (!TransactionSynchronizationManager.isActualTransactionActive()) {
            throw new EnqueueOutsideTransactionException("Mailroom enqueues an email only inside the business"
                    + " transaction (a @Transactional method, or TransactionTemplate): none is active, and an email"
                    + " written on its own would be sent whatever became of the change it announces");
        }
        if (TransactionSynchronizationManager.isCurrentTransactionReadOnly()) {
            throw new EnqueueOutsideTransactionException("Mailroom cannot enqueue an email in a read-only"
                    + " transaction (@Transactional(readOnly = true))");
        }
        // A transaction of another resource (another DataSource, JTA without this one enlisted) leaves the
        // connection we would get in auto-commit: the email would commit on its own.
        Connection connection = DataSourceUtils.getConnection(dataSource);
        try {
            if (connection.getAutoCommit()) {
                throw new EnqueueOutsideTransactionException("Mailroom enqueues on the application's DataSource,"
                        + " and the active transaction holds no connection of it (a transaction manager of another"
                        + " resource?): the email would commit on its own");
            }
        } catch (SQLException e) {
            throw new TransactionSystemException("Could not read the transaction state of the connection", e);
        } finally {
            DataSourceUtils.releaseConnection(connection, dataSource);
        }
    }
}
