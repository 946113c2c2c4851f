package io.mailroom.outbox.runtime;

import io.mailroom.db.sql.HotSql;
import io.mailroom.db.sql.SqlClock;
import org.jooq.DSLContext;

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

    static final String FINISH = """
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
            FROM unnest(?::bigint[], ?::varchar[]::timestamptz[], ?::bigint[], ?::varchar[], ?::varchar[], ?::bigint[],
                        ?::varchar[])
                 AS v(id, created_at, claim_version, kind, error, delay_ms, waiting_for)
            """ + FENCED + CHANGED_ROW;

    private final HotSql finishSql;

    CompletionStore(SqlClock clock) {
        this.finishSql = HotSql.of(FINISH, clock);
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
        List<Finish> finishes = new ArrayList<>(unordered);
        finishes.sort(Comparator.comparingLong(f -> f.message().id())); // lock order, see fence()
        int n = finishes.size();
        Long[] ids = new Long[n];
        String[] createdAts = new String[n];
        Long[] versions = new Long[n];
        String[] kinds = new String[n];
        String[] errors = new String[n];
        Long[] delays = new Long[n];
        String[] waitingFor = new String[n];
        for (int i = 0; i < n; i++) {
            Finish f = finishes.get(i);
            ids[i] = f.message().id();
            createdAts[i] = f.message().createdAt().toString();
            versions[i] = f.message().claimVersion();
            kinds[i] = f.kind().label(); // the outcome becomes SQL text here, and only here
            errors[i] = HistoryStore.truncate(f.error());
            delays[i] = f.delay() == null ? 0L : f.delay().toMillis();
            waitingFor[i] = f.waitingFor();
        }
        return finishSql.query(tx, ChangedRow::changedRow, ids, createdAts, versions, kinds, errors, delays, waitingFor);
    }
}
