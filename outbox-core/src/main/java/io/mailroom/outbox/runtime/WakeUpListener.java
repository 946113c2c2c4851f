package io.mailroom.outbox.runtime;

import io.mailroom.outbox.OutboxEnqueuer;
import io.mailroom.db.sql.SqlStates;
import org.postgresql.PGConnection;
import org.postgresql.PGNotification;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import javax.sql.DataSource;
import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.function.Predicate;

/**
 * Holds one session that LISTENs on {@link OutboxEnqueuer#CHANNEL} and wakes the producer when a
 * transaction that enqueued commits. It is only a shortcut: if the session breaks, the producer
 * keeps polling while this reconnects with backoff, and no message depends on a notification.
 *
 * <p>A notification's payload is the topic enqueued to; one for a topic this dispatcher does not
 * claim now (another service's, or one paused) does not wake it. Every claim it would wake walks
 * the pending rows of the topics it cannot take (the claim index is ordered by time, not topic):
 * with 30,000 messages waiting in a paused topic, each took 25 to 77 ms, and an enqueue into that
 * topic woke every claimer for another (BENCHMARKS.md, issue 28). A notification without a topic
 * wakes it, as before.
 */
final class WakeUpListener {

    private static final Logger log = LoggerFactory.getLogger(WakeUpListener.class);
    private static final Duration MAX_RECONNECT_DELAY = Duration.ofSeconds(30);

    private final DataSource dataSource;
    private final Runnable wake;
    private final Predicate<String> claimsTopic;
    private volatile boolean running;
    private volatile Connection connection;
    private Thread thread;

    /** @param claimsTopic whether a topic is one this dispatcher claims now (asked for each notification) */
    WakeUpListener(DataSource dataSource, Runnable wake, Predicate<String> claimsTopic) {
        this.dataSource = dataSource;
        this.wake = wake;
        this.claimsTopic = claimsTopic;
    }

    void start() {
        running = true;
        thread = Thread.ofPlatform().name("mailroom-listen").daemon().start(this::loop);
    }

    void stop() {
        running = false;
        if (thread != null) {
            thread.interrupt();
            closeQuietly();
            try {
                thread.join(2000);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
    }

    private void loop() {
        long delayMillis = 500;
        while (running) {
            try {
                connection = dataSource.getConnection();
                connection.setAutoCommit(true);
                try (Statement st = connection.createStatement()) {
                    st.execute("LISTEN " + OutboxEnqueuer.CHANNEL);
                }
                PGConnection pg = connection.unwrap(PGConnection.class);
                delayMillis = 500;
                // Wake once after (re)connecting: a notification sent while disconnected is lost.
                wake.run();
                while (running) {
                    PGNotification[] notifications = pg.getNotifications(1000);
                    if (notifications != null && concernsUs(notifications)) {
                        wake.run();
                    }
                }
            } catch (SQLException | RuntimeException e) {
                if (!running) {
                    break;
                }
                log.warn("LISTEN session lost (SQLSTATE {}); polling continues, reconnecting in {} ms",
                        SqlStates.sqlState(e), delayMillis);
            } finally {
                closeQuietly();
            }
            try {
                Thread.sleep(delayMillis);
            } catch (InterruptedException e) {
                if (!running) {
                    break;
                }
            }
            delayMillis = Math.min(delayMillis * 2, MAX_RECONNECT_DELAY.toMillis());
        }
    }

    private boolean concernsUs(PGNotification[] notifications) {
        for (PGNotification n : notifications) {
            String topic = n.getParameter();
            if (topic == null || topic.isEmpty() || claimsTopic.test(topic)) {
                return true;
            }
        }
        return false;
    }

    private void closeQuietly() {
        Connection c = connection;
        connection = null;
        if (c != null) {
            try {
                c.close();
            } catch (SQLException ignored) {
                // closing a broken session
            }
        }
    }
}
