package io.mailroom.outbox.runtime;

import io.mailroom.db.sql.HotSql;
import io.mailroom.db.sql.SqlClock;
import org.jooq.DSLContext;

import java.time.Instant;
import java.util.List;

/**
 * The history of claimed messages: the new state of each changed row mirrored onto its
 * {@code outbox_effect}, and one {@code outbox_attempt} row per finished attempt for the support
 * timeline. Texts are made storable first ({@link #truncate}, {@link #storableJson}), so that one
 * handler's odd error cannot fail a whole batch's completion.
 */
final class HistoryStore {

    static final int MAX_ERROR_LENGTH = 2000;

    static final String EFFECTS = """
            UPDATE {schema}.outbox_effect AS e SET
              status = v.status, attempts = v.attempts, last_error = v.error, updated_at = {now},
              finished_at = CASE WHEN v.status IN ('done', 'failed', 'review', 'cancelled') THEN {now} END
            FROM unnest(?::varchar[], ?::bigint[], ?::varchar[], ?::int[], ?::varchar[])
                 AS v(idempotency_key, message_id, status, attempts, error)
            WHERE e.idempotency_key = v.idempotency_key AND e.message_id = v.message_id""";

    static final String ATTEMPTS = """
            INSERT INTO {schema}.outbox_attempt (idempotency_key, message_id, attempt, claim_version, worker,
                                        started_at, finished_at, outcome, error, detail)
            SELECT * FROM unnest(?::varchar[], ?::bigint[], ?::int[], ?::bigint[], ?::varchar[],
                                 ?::varchar[]::timestamptz[], ?::varchar[]::timestamptz[], ?::varchar[], ?::varchar[],
                                 ?::varchar[]::jsonb[])""";

    private final HotSql effectsSql;
    private final HotSql attemptsSql;

    HistoryStore(SqlClock clock) {
        this.effectsSql = HotSql.of(EFFECTS, clock);
        this.attemptsSql = HotSql.of(ATTEMPTS, clock);
    }

    /** Mirrors the new state of changed rows onto their {@code outbox_effect}. */
    void updateEffects(DSLContext tx, List<ChangedRow> rows) {
        if (rows.isEmpty()) {
            return;
        }
        int n = rows.size();
        String[] keys = new String[n];
        Long[] messageIds = new Long[n];
        String[] statuses = new String[n];
        Integer[] attempts = new Integer[n];
        String[] errors = new String[n];
        for (int i = 0; i < n; i++) {
            ChangedRow r = rows.get(i);
            keys[i] = r.idempotencyKey();
            messageIds[i] = r.id();
            statuses[i] = r.status();
            attempts[i] = r.attempts();
            errors[i] = r.lastError();
        }
        effectsSql.execute(tx, keys, messageIds, statuses, attempts, errors);
    }

    /** One finished attempt for the support timeline. */
    record AttemptRow(String idempotencyKey, long messageId, int attempt, long claimVersion, String worker,
                      Instant startedAt, Instant finishedAt, String outcome, String error, String detail) {
    }

    void insertAttempts(DSLContext tx, List<AttemptRow> attempts) {
        if (attempts.isEmpty()) {
            return;
        }
        int n = attempts.size();
        String[] keys = new String[n];
        Long[] messageIds = new Long[n];
        Integer[] numbers = new Integer[n];
        Long[] versions = new Long[n];
        String[] workers = new String[n];
        String[] started = new String[n];
        String[] finished = new String[n];
        String[] outcomes = new String[n];
        String[] errors = new String[n];
        String[] details = new String[n];
        for (int i = 0; i < n; i++) {
            AttemptRow a = attempts.get(i);
            keys[i] = a.idempotencyKey();
            messageIds[i] = a.messageId();
            numbers[i] = a.attempt();
            versions[i] = a.claimVersion();
            workers[i] = a.worker() == null ? "unknown" : a.worker();
            started[i] = a.startedAt().toString();
            finished[i] = a.finishedAt().toString();
            outcomes[i] = a.outcome();
            errors[i] = truncate(a.error());
            details[i] = storableJson(a.detail());
        }
        attemptsSql.execute(tx, keys, messageIds, numbers, versions, workers, started, finished, outcomes, errors,
                details);
    }

    /**
     * An error text as it can be stored: U+0000 (which PostgreSQL text refuses, failing the whole
     * completion) and unpaired surrogates (which the driver would turn into '?') become U+FFFD, and
     * the text is cut to {@link #MAX_ERROR_LENGTH}. Handlers report whatever their libraries said,
     * including bytes quoted from a broken answer.
     */
    static String truncate(String error) {
        error = storable(error);
        if (error == null || error.length() <= MAX_ERROR_LENGTH) {
            return error;
        }
        int end = MAX_ERROR_LENGTH - 1;
        if (Character.isHighSurrogate(error.charAt(end - 1))) {
            end--;
        }
        return error.substring(0, end) + "…";
    }

    /** {@code text} with U+0000 and unpaired surrogates replaced by U+FFFD; the same string if it has none. */
    static String storable(String text) {
        if (text == null) {
            return null;
        }
        StringBuilder out = null;
        for (int i = 0; i < text.length(); i++) {
            char c = text.charAt(i);
            boolean pair = Character.isHighSurrogate(c) && i + 1 < text.length() && Character.isLowSurrogate(text.charAt(i + 1));
            boolean bad = c == 0 || (!pair && Character.isSurrogate(c));
            if (bad && out == null) {
                out = new StringBuilder(text.length()).append(text, 0, i);
            }
            if (out != null) {
                out.append(bad ? '\uFFFD' : c);
                if (pair) {
                    out.append(text.charAt(i + 1));
                }
            }
            if (pair) {
                i++;
            }
        }
        return out == null ? text : out.toString();
    }

    /**
     * An attempt's detail JSON as jsonb can hold it: a {@code \\u0000} escape (which jsonb refuses,
     * failing the whole completion) becomes {@code \\uFFFD}, and raw U+0000 and unpaired
     * surrogates become U+FFFD. Escaped backslashes are skipped over, so {@code "\\\\u0000"}
     * (a backslash followed by the text u0000) is left alone.
     */
    static String storableJson(String json) {
        if (json == null) {
            return null;
        }
        String text = storable(json);
        if (!text.contains("\\u0000")) {
            return text;
        }
        StringBuilder out = new StringBuilder(text.length());
        for (int i = 0; i < text.length(); i++) {
            char c = text.charAt(i);
            if (c == '\\' && i + 1 < text.length()) {
                if (text.startsWith("u0000", i + 1)) {
                    out.append("\\uFFFD");
                    i += 5;
                } else {
                    out.append(c).append(text.charAt(i + 1));
                    i++;
                }
            } else {
                out.append(c);
            }
        }
        return out.toString();
    }
}
