package io.mailroom.outbox.runtime;

import io.mailroom.outbox.MessageStatus;
import io.mailroom.db.sql.HotSql;
import io.mailroom.db.sql.SqlClock;
import org.jooq.DSLContext;

import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;

import static io.mailroom.outbox.runtime.ChangedRow.CHANGED_ROW;
import static io.mailroom.outbox.runtime.ChangedRow.FENCED;

/**
 * Writes the outcomes of attempts: one fenced statement for a whole batch. The outcome stays a
 * {@link Finish.Kind} (derived from the handler's {@link Outcome}) until the statement is bound,
 * where it becomes the text the statement decides on.
 */
final class CompletionStore {

    /** The new state of a finished row, by the outcome's kind ({@code v.kind}); shared by {@link #FINISH} and {@link #COMPLETE}. */
    private static final String SET_OUTCOME = """
            UPDATE {schema}.outbox_message AS m SET
              status = CASE WHEN v.kind = 'release' THEN 'pending'
                            WHEN v.kind <> 'retry' THEN v.kind
                            WHEN m.attempts >= m.max_attempts THEN 'failed'
                            ELSE 'pending' END,
              available_at = CASE WHEN v.kind IN ('retry', 'release')
                                  THEN {now} + make_interval(secs => v.delay_ms / 1000.0)
                                  ELSE m.available_at END,
              attempts = CASE WHEN v.kind = 'release' THEN greatest(m.attempts - 1, 0) ELSE m.attempts END,
              lease_until = NULL,
              last_error = CASE WHEN v.kind = 'done' THEN m.last_error ELSE v.error END,
              waiting_for = CASE WHEN v.kind = 'release' THEN v.waiting_for END,
              finished_at = CASE WHEN v.kind = 'release' THEN NULL
                                 WHEN v.kind = 'retry' AND m.attempts < m.max_attempts THEN NULL
                                 ELSE {now} END,
              updated_at = {now}
            """;

    /** The outcomes alone: the fenced state change, returning the rows changed. */
    static final String FINISH = SET_OUTCOME + """
            FROM unnest(?::bigint[], ?::varchar[]::timestamptz[], ?::bigint[], ?::varchar[], ?::varchar[], ?::bigint[],
                        ?::varchar[])
                 AS v(id, created_at, claim_version, kind, error, delay_ms, waiting_for)
            """ + FENCED + CHANGED_ROW;

    /**
     * A batch's whole completion in one statement: the fenced state change ({@link #SET_OUTCOME}),
     * the changed rows' new state mirrored onto their {@code outbox_effect} (what
     * {@link HistoryStore#EFFECTS} does) and, when {@code %s} is {@link #ATTEMPTS_PART}, one
     * {@code outbox_attempt} row per outcome (what {@link HistoryStore#ATTEMPTS} does), returning
     * of each changed row only what the completer reads ({@link Written}). One statement instead of
     * three: each statement costs its round trip, parse, bind and array decoding whatever its size,
     * the effects' arrays were the finish's own result sent back, and the finish's result carried
     * two timestamps per row that the client parsed and never used.
     *
     * <p>An attempt's outcome is decided here on the row as changed, as it was in Java before: a
     * row the fence did not return is {@code claim_lost} (with the handler's own detail), a retry
     * that used the last attempt is {@code failed}; otherwise the outcome and detail Java gave for
     * a held claim ({@code v.outcome}, {@code v.held_detail} where it differs from the handler's).
     * All parts see the same snapshot, and each changes a table the others do not.
     */
    private static final String COMPLETE_TEMPLATE = """
            WITH v AS (
              SELECT * FROM unnest(?::bigint[], ?::varchar[]::timestamptz[], ?::bigint[], ?::varchar[], ?::varchar[],
                                   ?::bigint[], ?::varchar[]%s)
                   AS v(id, created_at, claim_version, kind, error, delay_ms, waiting_for%s)),
            changed AS (
            """ + SET_OUTCOME + "FROM v\n" + FENCED + """
              RETURNING m.id, m.idempotency_key, m.status, m.attempts, m.last_error),
            effects AS (
              UPDATE {schema}.outbox_effect AS e SET
                status = c.status, attempts = c.attempts, last_error = c.last_error, updated_at = {now},
                finished_at = CASE WHEN c.status IN ('done', 'failed', 'review', 'cancelled') THEN {now} END
              FROM changed AS c
              WHERE e.idempotency_key = c.idempotency_key AND e.message_id = c.id)%s
            SELECT c.id, c.status, c.last_error FROM changed AS c""";

    /** The attempt history's part of {@link #COMPLETE} ({@link #COMPLETE_TEMPLATE}'s three {@code %s}). */
    private static final String[] ATTEMPTS_PART = {
            """
            ,
                                   ?::varchar[], ?::int[], ?::varchar[]::timestamptz[], ?::varchar[]::timestamptz[],
                                   ?::varchar[], ?::varchar[], ?::varchar[]""",
            ", idempotency_key, attempt, started_at, finished_at, outcome, detail, held_detail",
            """
            ,
            attempts AS (
              INSERT INTO {schema}.outbox_attempt (idempotency_key, message_id, attempt, claim_version, worker,
                                                   started_at, finished_at, outcome, error, detail)
              SELECT v.idempotency_key, v.id, v.attempt, v.claim_version, ?::varchar, v.started_at, v.finished_at,
                     CASE WHEN c.id IS NULL THEN 'claim_lost'
                          WHEN v.kind = 'retry' AND c.status = 'failed' THEN 'failed'
                          ELSE v.outcome END,
                     v.error,
                     (CASE WHEN c.id IS NULL THEN v.detail ELSE coalesce(v.held_detail, v.detail) END)::jsonb
              FROM v LEFT JOIN changed AS c ON c.id = v.id)"""};

    /** {@link #COMPLETE_TEMPLATE} with the attempt history. */
    static final String COMPLETE = COMPLETE_TEMPLATE.formatted((Object[]) ATTEMPTS_PART);
    /** {@link #COMPLETE_TEMPLATE} without it ({@link DispatcherConfig#recordAttempts()} off). */
    static final String COMPLETE_UNRECORDED = COMPLETE_TEMPLATE.formatted("", "", "");

    private final HotSql finishSql;
    private final HotSql completeSql;
    private final HotSql completeUnrecordedSql;

    CompletionStore(SqlClock clock) {
        this.finishSql = HotSql.of(FINISH, clock);
        this.completeSql = HotSql.of(COMPLETE, clock);
        this.completeUnrecordedSql = HotSql.of(COMPLETE_UNRECORDED, clock);
    }

    /**
     * One outcome to write; {@code waitingFor} only with {@link Kind#RELEASE} (see
     * {@link Outcome.NotAttempted#waitingFor()}), {@code delay} with a retry or a release.
     */
    record Finish(ClaimedMessage message, Kind kind, String error, Duration delay, String detail, Instant finishedAt,
                  String waitingFor) {

        Finish(ClaimedMessage message, Kind kind, String error, Duration delay, String detail, Instant finishedAt) {
            this(message, kind, error, delay, detail, finishedAt, null);
        }

        /** What the statement does with the row, one per kind of {@link Outcome}. */
        enum Kind {
            /** {@link Outcome.Done}. */
            DONE,
            /** {@link Outcome.RetryLater}: pending after the delay, or failed once the attempts are used up. */
            RETRY,
            /** {@link Outcome.Failed}. */
            FAILED,
            /** {@link Outcome.Review}. */
            REVIEW,
            /** {@link Outcome.NotAttempted}: pending after the delay, the attempt not counted. */
            RELEASE;

            /** The value {@link #FINISH} decides on ({@code v.kind}), and the name the listener is told. */
            String label() {
                return name().toLowerCase(java.util.Locale.ROOT);
            }
        }
    }

    /**
     * Writes many outcomes in one statement. Retries go back to pending after their delay, or to
     * failed when the attempts are used up (decided on the row's current {@code max_attempts}, which
     * a person may have raised). Returns the rows changed; a missing one lost its claim.
     */
    List<ChangedRow> finish(DSLContext tx, List<Finish> unordered) {
        Outcomes o = Outcomes.of(unordered);
        return finishSql.query(tx, ChangedRow::changedRow, o.ids, o.createdAts, o.versions, o.kinds, o.errors, o.delays,
                o.waitingFor);
    }

    /**
     * The columns both statements bind for the outcomes, in lock order (by id, see {@link
     * ChangedRow#fence}); the outcome becomes SQL text here, and only here.
     */
    private record Outcomes(List<Finish> sorted, Long[] ids, String[] createdAts, Long[] versions, String[] kinds,
                            String[] errors, Long[] delays, String[] waitingFor) {
        static Outcomes of(List<Finish> unordered) {
            List<Finish> finishes = new ArrayList<>(unordered);
            finishes.sort(Comparator.comparingLong(f -> f.message().id()));
            int n = finishes.size();
            Outcomes o = new Outcomes(finishes, new Long[n], new String[n], new Long[n], new String[n], new String[n],
                    new Long[n], new String[n]);
            for (int i = 0; i < n; i++) {
                Finish f = finishes.get(i);
                o.ids[i] = f.message().id();
                o.createdAts[i] = f.message().createdAt().toString();
                o.versions[i] = f.message().claimVersion();
                o.kinds[i] = f.kind().label();
                o.errors[i] = HistoryStore.truncate(f.error());
                o.delays[i] = f.delay() == null ? 0L : f.delay().toMillis();
                o.waitingFor[i] = f.waitingFor();
            }
            return o;
        }
    }

    /**
     * Writes a batch's outcomes, their effects' new state and (with {@code recordAttempts}) one
     * attempt row each, in one statement ({@link #COMPLETE}); {@code worker} is the attempts'
     * worker. Returns the rows changed; a missing one lost its claim (and its attempt row says
     * {@code claim_lost}).
     */
    List<Written> complete(DSLContext tx, List<Finish> unordered, String worker, boolean recordAttempts) {
        Outcomes o = Outcomes.of(unordered);
        List<Finish> finishes = o.sorted();
        int n = finishes.size();
        Long[] ids = o.ids();
        String[] createdAts = o.createdAts();
        Long[] versions = o.versions();
        String[] kinds = o.kinds();
        String[] errors = o.errors();
        Long[] delays = o.delays();
        String[] waitingFor = o.waitingFor();
        if (!recordAttempts) {
            return completeUnrecordedSql.query(tx, Written::read, ids, createdAts, versions, kinds, errors,
                    delays, waitingFor);
        }
        String[] keys = new String[n];
        Integer[] numbers = new Integer[n];
        String[] started = new String[n];
        String[] finished = new String[n];
        String[] outcomes = new String[n];
        String[] details = new String[n];
        String[] heldDetails = new String[n];
        for (int i = 0; i < n; i++) {
            Finish f = finishes.get(i);
            ClaimedMessage m = f.message();
            keys[i] = m.idempotencyKey();
            numbers[i] = m.attempt();
            started[i] = m.claimedAt().toString();
            finished[i] = (f.finishedAt() == null ? Instant.now() : f.finishedAt()).toString();
            details[i] = HistoryStore.storableJson(f.detail());
            switch (f.kind()) {
                case RELEASE -> {
                    outcomes[i] = "released";
                    heldDetails[i] = HistoryStore.storableJson(
                            AttemptDetail.released(f.detail(), AttemptDetail.RELEASE_NOT_ATTEMPTED));
                }
                case FAILED -> {
                    outcomes[i] = f.kind().label();
                    heldDetails[i] = HistoryStore.storableJson(AttemptDetail.permanent(f.detail()));
                }
                default -> outcomes[i] = f.kind().label();
            }
        }
        return completeSql.query(tx, Written::read, ids, createdAts, versions, kinds, errors, delays,
                waitingFor, keys, numbers, started, finished, outcomes, details, heldDetails,
                worker == null ? "unknown" : worker);
    }

    /** A row {@link #complete} changed: its id and new status and error, all the completer needs of it. */
    record Written(long id, String status, String lastError) {

        /** The message ended here (failed or review), as {@link ChangedRow#ended()}. */
        boolean ended() {
            return MessageStatus.FAILED.sql().equals(status) || MessageStatus.REVIEW.sql().equals(status);
        }

        static Written read(ResultSet rs) throws SQLException {
            return new Written(rs.getLong(1), rs.getString(2), rs.getString(3));
        }
    }
}
