package io.mailroom.outbox.runtime;

import io.mailroom.outbox.DispatcherSessions;
import io.mailroom.outbox.MessageStatus;
import io.mailroom.outbox.WakeUpNotifier;
import io.mailroom.db.sql.SqlClock;
import org.jooq.CommonTableExpression;
import org.jooq.DSLContext;
import org.jooq.Field;
import org.jooq.Record2;
import org.jooq.impl.DSL;

import javax.sql.DataSource;
import java.time.Instant;
import java.util.Collection;
import java.util.List;
import java.util.Objects;

import static io.mailroom.db.jooq.Tables.OUTBOX_MESSAGE;
import static org.jooq.impl.DSL.any;
import static org.jooq.impl.DSL.name;

/**
 * Ends early the wait of messages handed back because something they need was not there. A handler
 * that hands a message back ({@link Outcome.NotAttempted}) may say what it waits for, as a code of
 * its own ({@code breaker:smtp}: the circuit breaker of transport smtp refused it); the message is
 * pending until the hand-back's delay has passed. When the thing is there sooner (the breaker lets
 * calls through again), {@link #availableNow} makes every message waiting for it available at once
 * and notifies the dispatchers of their topics, in this process and in others.
 *
 * <p>The marker lives on the row ({@code outbox_message.waiting_for}): set by the hand-back, cleared
 * by the next claim and by a person's retry, reschedule or cancel. So the statement finds exactly
 * the rows still waiting from that hand-back, whichever dispatcher of the fleet handed them back:
 * they waited only for the thing to be there, so whoever sees it first may release them all.
 */
public final class WaitingMessages {

    /** The longest code {@code waiting_for} holds. */
    public static final int MAX_CODE_LENGTH = 200;

    private static final String PENDING = MessageStatus.PENDING.sql();

    private final DispatcherSessions sessions;
    private final SqlClock clock;

    /** With the sessions, timeouts and clock of the dispatcher {@code config} configures. */
    public WaitingMessages(DataSource dataSource, DispatcherConfig config) {
        this.sessions = new DispatcherSessions(dataSource, config.statementTimeout(), config.idleInTransactionTimeout(),
                config.sessionSettings());
        this.clock = SqlClock.of(config.clock());
    }

    /**
     * Makes the pending messages of {@code topics} that wait for {@code waitingFor} available now
     * (or keeps their time, if it is earlier), and when there were any, notifies the dispatchers of
     * those topics as the change commits. Returns how many messages it changed.
     */
    public int availableNow(String waitingFor, Collection<String> topics) {
        Objects.requireNonNull(waitingFor, "waitingFor");
        requireCode(waitingFor);
        List<String> list = List.copyOf(topics);
        if (list.isEmpty()) {
            return 0;
        }
        return sessions.inTransaction(tx -> {
            int changed = availableNow(tx, waitingFor, list);
            if (changed > 0) {
                // inside the transaction: delivered at its commit, when the rows can be claimed
                WakeUpNotifier.notifyAtCommit(tx, list);
            }
            return changed;
        });
    }

    /**
     * The statement: the waiting rows are locked in id order (two of these on the same rows, from
     * two dispatchers, wait for each other instead of deadlocking), skipping rows locked right now
     * (a person acting on them, or another dispatcher doing the same), and checked again as locked.
     */
    private int availableNow(DSLContext tx, String waitingFor, List<String> topics) {
        var m = OUTBOX_MESSAGE;
        var w = OUTBOX_MESSAGE.as("w");
        Field<Instant> now = clock.now();
        CommonTableExpression<Record2<Long, Instant>> picked = name("picked").fields("id", "created_at").as(
                DSL.select(w.ID, w.CREATED_AT)
                        .from(w)
                        .where(w.STATUS.eq(PENDING))
                        .and(w.WAITING_FOR.eq(waitingFor))
                        .and(w.TOPIC.eq(any(topics.toArray(String[]::new))))
                        .orderBy(w.ID)
                        .forNoKeyUpdate()
                        .skipLocked());
        return tx.with(picked)
                .update(m)
                .set(m.AVAILABLE_AT, DSL.least(m.AVAILABLE_AT, now))
                .set(m.WAITING_FOR, (String) null)
                .set(m.UPDATED_AT, now)
                .from(picked)
                .where(m.ID.eq(picked.field("id", Long.class)))
                .and(m.CREATED_AT.eq(picked.field("created_at", Instant.class)))
                .and(m.STATUS.eq(PENDING))
                .and(m.WAITING_FOR.eq(waitingFor))
                .execute();
    }

    /** Refuses a code {@code waiting_for} cannot hold; null (waiting for nothing) is fine. */
    static void requireCode(String waitingFor) {
        if (waitingFor != null && (waitingFor.isBlank() || waitingFor.length() > MAX_CODE_LENGTH || waitingFor.indexOf('\0') >= 0)) {
            throw new IllegalArgumentException("waitingFor must be null or a code of 1.." + MAX_CODE_LENGTH
                    + " characters without U+0000: '" + waitingFor + "'");
        }
    }
}
