package io.mailroom.outbox.runtime;

import io.mailroom.outbox.MessageStatus;
import io.mailroom.db.sql.HotSql;

import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Comparator;
import java.util.List;

/**
 * A row a fenced statement changed, as it is afterwards, and the SQL every fenced statement
 * shares. Statements that change a claimed row are fenced by {@code claim_version} and by the row
 * still running ({@code lease_until IS NOT NULL}, see {@link #FENCED}): a row they do not return was
 * not changed, because the claim is no longer the caller's.
 */
record ChangedRow(long id, Instant createdAt, String idempotencyKey, String status, int attempts, int maxAttempts,
                  long claimVersion, String claimedBy, Instant claimedAt, String lastError, String topic,
                  String payloadJson) {

    /** The columns a fenced statement returns, read by {@link #changedRow}. */
    static final String CHANGED_ROW = """
            RETURNING m.id, m.created_at, m.idempotency_key, m.status, m.attempts, m.max_attempts,
                      m.claim_version, m.claimed_by, m.claimed_at, m.last_error""";

    /**
     * The fence every statement on a claimed row carries: same row, same claim, still running.
     * "Still running" is said as {@code lease_until IS NOT NULL}, which the table's
     * {@code outbox_message_lease_check} makes the same as {@code status = 'running'}, because
     * {@code status = 'running'} lets the planner read the lease index {@code (lease_until) WHERE
     * status = 'running'} whole and hash-join it with the claims (its statistics say it is small,
     * and the generic plan keeps that choice): while a long transaction holds the xmin horizon, that
     * index keeps an entry for every row that ran since, and a heartbeat or a completion of 50
     * claims touched 1,419 buffers after 30,000 messages instead of 199 through the primary key
     * (issue 28; BENCHMARKS.md). Without it, the primary key is the only way in.
     */
    static final String FENCED = """
            WHERE m.id = v.id AND m.created_at = v.created_at
              AND m.claim_version = v.claim_version AND m.lease_until IS NOT NULL
            """;

    static final String FENCE_ARRAYS = """
            unnest(?::bigint[], ?::varchar[]::timestamptz[], ?::bigint[]) AS v(id, created_at, claim_version)
            """;

    /** {@link #CHANGED_ROW} and what {@link DispatcherListener#ended} needs, for the statements that may end a message. */
    static final String ENDED_ROW = CHANGED_ROW + ", m.topic, m.payload";

    /** The message ended here (failed or review), rather than going back to the queue or to done. */
    boolean ended() {
        return MessageStatus.FAILED.sql().equals(status) || MessageStatus.REVIEW.sql().equals(status);
    }

    /**
     * The fence of each claim, as the three arrays (ids, created_at texts, claim versions) the
     * statements unnest, in id order: the statements then lock their rows in id order (the planner
     * joins the few unnested rows by index, in their order), so two of them on overlapping rows
     * wait for each other instead of deadlocking.
     */
    static Object[] fence(Collection<ClaimedMessage> unordered) {
        List<ClaimedMessage> held = new ArrayList<>(unordered);
        held.sort(Comparator.comparingLong(ClaimedMessage::id));
        int n = held.size();
        Long[] ids = new Long[n];
        String[] createdAts = new String[n];
        Long[] versions = new Long[n];
        int i = 0;
        for (ClaimedMessage msg : held) {
            ids[i] = msg.id();
            createdAts[i] = msg.createdAt().toString();
            versions[i] = msg.claimVersion();
            i++;
        }
        return new Object[] {ids, createdAts, versions};
    }

    /** Reads the columns every fenced statement returns ({@link #CHANGED_ROW}), by position. */
    static ChangedRow changedRow(ResultSet rs) throws SQLException {
        return new ChangedRow(rs.getLong(1), HotSql.instant(rs, 2), rs.getString(3), rs.getString(4), rs.getInt(5),
                rs.getInt(6), rs.getLong(7), rs.getString(8), HotSql.instant(rs, 9), rs.getString(10), null, null);
    }

    /** Reads {@link #ENDED_ROW}, by position. */
    static ChangedRow endedRow(ResultSet rs) throws SQLException {
        return new ChangedRow(rs.getLong(1), HotSql.instant(rs, 2), rs.getString(3), rs.getString(4), rs.getInt(5),
                rs.getInt(6), rs.getLong(7), rs.getString(8), HotSql.instant(rs, 9), rs.getString(10), rs.getString(11),
                rs.getString(12));
    }
}
