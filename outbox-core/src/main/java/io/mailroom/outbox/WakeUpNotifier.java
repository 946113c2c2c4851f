package io.mailroom.outbox;

import io.mailroom.db.sql.SqlStates;
import org.jooq.DSLContext;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import javax.sql.DataSource;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Wakes dispatchers <b>after</b> the business transaction has committed, on a session of its own,
 * instead of with a {@code pg_notify} inside it.
 *
 * <p>Why: PostgreSQL serialises the commits of transactions that notify (a cluster-wide lock taken
 * before commit and held until the commit record is flushed), so a notification inside every order
 * transaction makes concurrent orders wait for each other's WAL flush; the benchmarks measured it as
 * most of the outbox's enqueue overhead. A transaction that only notifies writes no WAL and holds
 * that lock for microseconds.
 *
 * <p>Requests coalesce: while one notification is on its way, every topic asked for meanwhile goes
 * in the next one, so under load far fewer than one is sent per order. Best effort by design: a
 * wake-up lost to a crash between commit and {@link #wake}, or to a database error, costs at most
 * one poll interval, because dispatchers poll anyway. {@link #wake} never blocks and never throws.
 */
public final class WakeUpNotifier {

    private static final Logger log = LoggerFactory.getLogger(WakeUpNotifier.class);
    /** Notifies {@link OutboxEnqueuer#CHANNEL} once per topic of the array bound to it. */
    static final String NOTIFY = "SELECT pg_notify('" + OutboxEnqueuer.CHANNEL + "', t) FROM unnest(?::varchar[]) t";

    private final DataSource dataSource;
    private final Set<String> pending = ConcurrentHashMap.newKeySet();
    private final AtomicBoolean sending = new AtomicBoolean();
    private final AtomicLong sent = new AtomicLong();
    private final AtomicLong failed = new AtomicLong();

    /** @param dataSource where the notifications are sent from (autocommit sessions; a pool) */
    public WakeUpNotifier(DataSource dataSource) {
        this.dataSource = Objects.requireNonNull(dataSource, "dataSource");
    }

    /**
     * Notifies the dispatchers of {@code topics} from inside the caller's transaction {@code tx}:
     * delivered at its commit, when the rows it changed can be claimed, and never if it rolls back.
     */
    public static void notifyAtCommit(DSLContext tx, List<String> topics) {
        tx.resultQuery(NOTIFY, (Object) topics.toArray(String[]::new)).fetch();
    }

    /** Asks for dispatchers of {@code topic} to be woken soon; call it after the commit. */
    public void wake(String topic) {
        pending.add(Objects.requireNonNull(topic, "topic"));
        if (sending.compareAndSet(false, true)) {
            Thread.ofVirtual().name("mailroom-wakeup").start(this::drain);
        }
    }

    /** Notification statements sent so far (each may carry several topics). */
    public long sent() {
        return sent.get();
    }

    /** Notification statements that failed (their wake-ups are lost; dispatchers poll). */
    public long failed() {
        return failed.get();
    }

    private void drain() {
        while (true) {
            List<String> topics = takePending();
            if (topics.isEmpty()) {
                sending.set(false);
                // a wake() between takePending() and set(false) saw sending=true and started no thread
                if (pending.isEmpty() || !sending.compareAndSet(false, true)) {
                    return;
                }
                continue;
            }
            send(topics);
        }
    }

    private List<String> takePending() {
        List<String> topics = new ArrayList<>(2);
        for (Iterator<String> it = pending.iterator(); it.hasNext(); ) {
            topics.add(it.next());
            it.remove();
        }
        return topics;
    }

    private void send(List<String> topics) {
        try (Connection c = dataSource.getConnection(); PreparedStatement ps = c.prepareStatement(NOTIFY)) {
            if (!c.getAutoCommit()) {
                c.setAutoCommit(true);
            }
            ps.setArray(1, c.createArrayOf("varchar", topics.toArray(String[]::new)));
            ps.execute();
            sent.incrementAndGet();
        } catch (SQLException | RuntimeException e) {
            long n = failed.incrementAndGet();
            if (Long.bitCount(n) == 1) { // 1st, 2nd, 4th, 8th... failure: visible, not a flood
                log.warn("Could not wake dispatchers for {} (SQLSTATE {}; {} failures so far); they will find the"
                        + " messages at their next poll", topics, SqlStates.sqlState(e), n);
            }
        }
    }
}
