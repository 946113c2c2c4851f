package io.mailroom.bench;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;

/**
 * Preloads the queue the way the throughput scenarios need it: {@code n} pending messages of one
 * topic, available since an hour ago, no ordering key, each with its {@code outbox_effect} row, in
 * one statement; then VACUUM ANALYZE so that every run starts from the same physical state (fresh
 * visibility map, current statistics) whichever driver runs next.
 */
final class QueueLoader {

    static final String TOPIC = "bench.noop";

    /**
     * CHECKPOINT after each load, so that no run pays for flushing the previous load's pages (full
     * runs); off for the quick run, where a checkpoint of a busy shared server costs more than the run.
     */
    static volatile boolean checkpointAfterLoad = true;

    /** Ids of the loaded messages: {@code first .. first + count - 1}, contiguous. */
    record Loaded(long firstId, int count) {
        long lastId() {
            return firstId + count - 1;
        }
    }

    private QueueLoader() {
    }

    static Loaded load(Connection c, int n) throws SQLException {
        return load(c, n, TOPIC);
    }

    static Loaded load(Connection c, int n, String topic) throws SQLException {
        boolean autoCommit = c.getAutoCommit();
        c.setAutoCommit(true);
        long first;
        try (PreparedStatement ps = c.prepareStatement("""
                WITH s AS (SELECT g, nextval('mailroom.outbox_message_id_seq') AS id FROM generate_series(1, ?) g),
                     m AS (
                  INSERT INTO mailroom.outbox_message (id, topic, aggregate_type, aggregate_id, idempotency_key, payload,
                                              available_at)
                  SELECT id, ?, 'bench', g::text, ? || '-' || g, jsonb_build_object('n', g),
                         now() - interval '1 hour' + g * interval '1 microsecond'
                  FROM s RETURNING id, created_at, idempotency_key, aggregate_id),
                     e AS (
                  INSERT INTO mailroom.outbox_effect (idempotency_key, topic, aggregate_type, aggregate_id, message_id,
                                             message_created_at, max_attempts)
                  SELECT idempotency_key, ?, 'bench', aggregate_id, id, created_at, 10 FROM m)
                SELECT min(id), count(*) FROM m
                """)) {
            ps.setInt(1, n);
            ps.setString(2, topic);
            ps.setString(3, topic);
            ps.setString(4, topic);
            try (ResultSet rs = ps.executeQuery()) {
                rs.next();
                first = rs.getLong(1);
                long count = rs.getLong(2);
                if (count != n) {
                    throw new IllegalStateException("loaded " + count + " messages, wanted " + n);
                }
            }
        }
        try (PreparedStatement ps = c.prepareStatement("SELECT max(id) - min(id) + 1 FROM mailroom.outbox_message WHERE topic = ?")) {
            ps.setString(1, topic);
            try (ResultSet rs = ps.executeQuery()) {
                rs.next();
                if (rs.getLong(1) != n) {
                    throw new IllegalStateException("message ids are not contiguous; the duplicate check needs them to be");
                }
            }
        }
        try (Statement st = c.createStatement()) {
            st.execute("VACUUM ANALYZE mailroom.outbox_message, mailroom.outbox_effect, mailroom.outbox_attempt");
        }
        if (checkpointAfterLoad) {
            try (Statement st = c.createStatement()) {
                // flush the load's dirty pages now rather than in the middle of the timed run
                st.execute("CHECKPOINT");
            } catch (SQLException notAllowed) {
                // CHECKPOINT needs superuser or pg_checkpoint; the run is still valid, only noisier
            }
        }
        c.setAutoCommit(autoCommit);
        return new Loaded(first, n);
    }

    /** Counts of messages by status, effects done and attempts recorded, for the after-run checks. */
    record Counts(long done, long notDone, long effectsDone, long attempts) {
    }

    static Counts counts(Connection c) throws SQLException {
        return counts(c, TOPIC);
    }

    static Counts counts(Connection c, String topic) throws SQLException {
        try (PreparedStatement ps = c.prepareStatement("""
                SELECT (SELECT count(*) FROM mailroom.outbox_message WHERE topic = ? AND status = 'done'),
                       (SELECT count(*) FROM mailroom.outbox_message WHERE topic = ? AND status <> 'done'),
                       (SELECT count(*) FROM mailroom.outbox_effect WHERE topic = ? AND status = 'done'),
                       (SELECT count(*) FROM mailroom.outbox_attempt WHERE starts_with(idempotency_key, ? || '-'))
                """)) {
            for (int i = 1; i <= 4; i++) {
                ps.setString(i, topic);
            }
            try (ResultSet rs = ps.executeQuery()) {
                rs.next();
                return new Counts(rs.getLong(1), rs.getLong(2), rs.getLong(3), rs.getLong(4));
            }
        }
    }

    /**
     * Whether any message is still to do, pending or running: a look at the head of each partial
     * index, so that a poll every few milliseconds costs the server almost nothing. Counting them
     * ({@link #remaining}) reads every entry, about 10 ms at 30,000 pending: polled every 50 ms, that
     * was a fifth of a core taken from the drain being measured.
     */
    static boolean anyLeft(Connection c) throws SQLException {
        try (Statement st = c.createStatement();
             ResultSet rs = st.executeQuery(
                     "SELECT EXISTS (SELECT 1 FROM mailroom.outbox_message WHERE status = 'pending')"
                             + " OR EXISTS (SELECT 1 FROM mailroom.outbox_message WHERE status = 'running')")) {
            rs.next();
            return rs.getBoolean(1);
        }
    }

    /** Messages still to do: pending or running (both read through their partial indexes). */
    static long remaining(Connection c) throws SQLException {
        try (Statement st = c.createStatement();
             ResultSet rs = st.executeQuery(
                     "SELECT (SELECT count(*) FROM mailroom.outbox_message WHERE status = 'pending')"
                             + " + (SELECT count(*) FROM mailroom.outbox_message WHERE status = 'running')")) {
            rs.next();
            return rs.getLong(1);
        }
    }
}
