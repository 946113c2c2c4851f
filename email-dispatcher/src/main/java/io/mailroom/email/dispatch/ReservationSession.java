package io.mailroom.email.dispatch;

import io.mailroom.db.MailroomSchema;
import io.mailroom.db.sql.SqlStates;
import io.mailroom.idempotency.EffectRecord;
import io.mailroom.idempotency.EffectState;
import io.mailroom.idempotency.IdempotencyStore;
import io.mailroom.idempotency.Reservation;
import org.jooq.DSLContext;
import org.jooq.SQLDialect;
import org.jooq.exception.DataAccessException;
import org.jooq.impl.DSL;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import javax.sql.DataSource;
import java.sql.Connection;
import java.sql.SQLException;
import java.sql.SQLTransientConnectionException;
import java.util.List;
import java.util.Optional;
import java.util.function.Function;

/**
 * Runs a batch reservation in one transaction on one session, and again on a fresh session when the
 * connection was lost (SQLSTATE class 08, 57P01..57P03), as the completer does with outcomes, instead
 * of counting the batch's attempts as failed and backing them off.
 *
 * <p>Why a retry cannot send twice: a session lost <em>before</em> COMMIT was sent rolls its
 * transaction back on the server, so nothing of the reservation exists and reserving again is the
 * same as reserving the first time. A session lost <em>during</em> COMMIT leaves the outcome unknown:
 * reserving again would find this very reservation RESERVED and answer "outcome unknown", and the
 * email would be handed to the ambiguity policy although nothing was sent. So the records are read
 * first, on a fresh session: when every key this round reserved is RESERVED by this worker at the
 * number it was granted (a number is granted once per life of the row, and the key's message is
 * claimed by this worker), the commit happened and the round's answers stand; when none is, it did
 * not, and the round goes again; anything else is left to the attempt's usual failure.
 */
final class ReservationSession {

    private static final Logger log = LoggerFactory.getLogger(ReservationSession.class);

    /** Rounds in all, the first included. */
    static final int MAX_ROUNDS = 3;
    private static final long FIRST_PAUSE_MILLIS = 50;

    private final DataSource dataSource;
    /** The schema {@code dataSource} is bound to, looked up once: a pool is bound when it is opened, before this. */
    private final MailroomSchema schema;
    private final IdempotencyStore store;
    private final String worker;

    ReservationSession(DataSource dataSource, MailroomSchema schema, IdempotencyStore store, String worker) {
        this.dataSource = dataSource;
        this.schema = schema;
        this.store = store;
        this.worker = worker;
    }

    /**
     * {@code work}'s result once its transaction committed; {@code reservedOf} tells which
     * reservations it granted (checked after a commit whose answer was lost).
     */
    <T> T run(Function<DSLContext, T> work, Function<T, List<Reservation.Reserved>> reservedOf) {
        long pause = FIRST_PAUSE_MILLIS;
        for (int round = 1; ; round++) {
            T result = null;
            boolean committing = false;
            try (Connection c = dataSource.getConnection()) {
                c.setAutoCommit(false);
                try {
                    result = work.apply(schema.dsl(c));
                } catch (RuntimeException e) {
                    rollbackQuietly(c, e);
                    throw e;
                }
                committing = true;
                c.commit();
                if (round > 1) {
                    log.info("Batch reservation committed on a fresh session after {} lost connection(s)", round - 1);
                }
                return result;
            } catch (SQLException | RuntimeException e) {
                if (!lostSession(e) || round == MAX_ROUNDS) {
                    throw unchecked(e);
                }
                if (committing) {
                    Optional<Boolean> committed = committed(reservedOf.apply(result));
                    if (committed.isEmpty()) {
                        throw unchecked(e);
                    }
                    if (committed.get()) {
                        log.info("Batch reservation: the connection was lost during COMMIT, which had committed (SQLSTATE {})",
                                SqlStates.sqlState(e));
                        return result;
                    }
                }
                log.warn("Batch reservation lost its connection (SQLSTATE {}{}); reserving again on a fresh session in {} ms",
                        SqlStates.sqlState(e), committing ? ", during COMMIT, which did not commit" : "", pause);
                try {
                    Thread.sleep(pause);
                } catch (InterruptedException interrupted) {
                    Thread.currentThread().interrupt();
                    throw unchecked(e);
                }
                pause *= 2;
            }
        }
    }

    /**
     * A session that went away under the round. The pool's own "no session within the timeout"
     * ({@link SQLTransientConnectionException}) is not retried here: the pool already waited for one.
     */
    private static boolean lostSession(Throwable e) {
        return SqlStates.isConnectionLoss(e)
                && !(SqlStates.sqlException(e).orElse(null) instanceof SQLTransientConnectionException);
    }

    /** Whether the round's reservations are in the database: true (all), false (none), empty (cannot tell). */
    private Optional<Boolean> committed(List<Reservation.Reserved> granted) {
        if (granted.isEmpty()) {
            return Optional.of(false); // nothing granted: the round read only, reading again is the same
        }
        try (Connection c = dataSource.getConnection()) {
            DSLContext dsl = schema.dsl(c);
            int found = 0;
            for (Reservation.Reserved r : granted) {
                Optional<EffectRecord> row = store.find(dsl, r.effectKey());
                if (row.isPresent() && row.get().state() == EffectState.RESERVED
                        && row.get().reservations() == r.reservationNumber() && worker.equals(row.get().reservedBy())) {
                    found++;
                }
            }
            return found == granted.size() ? Optional.of(true) : found == 0 ? Optional.of(false) : Optional.empty();
        } catch (SQLException | RuntimeException e) {
            log.warn("Batch reservation: could not tell whether a lost COMMIT committed (SQLSTATE {})", SqlStates.sqlState(e));
            return Optional.empty();
        }
    }

    private static void rollbackQuietly(Connection c, Throwable cause) {
        try {
            c.rollback();
        } catch (SQLException e) {
            cause.addSuppressed(e);
        }
    }

    private static RuntimeException unchecked(Throwable e) {
        return e instanceof RuntimeException r ? r
                : new DataAccessException("batch reservation failed (SQLSTATE " + SqlStates.sqlState(e) + "): " + e.getMessage(), e);
    }
}
