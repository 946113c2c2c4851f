package io.mailroom.outbox.admin;

import io.mailroom.db.jooq.tables.OutboxAttempt;
import org.jooq.Condition;
import org.jooq.DSLContext;
import org.jooq.Field;
import org.jooq.impl.DSL;

import java.time.Instant;
import java.util.Collection;
import java.util.List;

import static io.mailroom.db.jooq.Tables.OUTBOX_ATTEMPT;

/**
 * Reads of the attempt history ({@code outbox_attempt}, one row per finished attempt): the attempts of
 * given keys for an email's story, and the recent outcome counts behind the console's charts. All
 * run in the caller's transaction.
 */
public final class AttemptHistory {

    private static final OutboxAttempt A = OUTBOX_ATTEMPT;

    private AttemptHistory() {
    }

    /**
     * One finished attempt.
     *
     * @param detail the attempt's structured detail as JSON text, null when none
     */
    public record Attempt(String key, int attempt, Instant startedAt, Instant finishedAt, String outcome, String worker,
                          String error, String detail) {
    }

    /** The attempts of these keys, in the order they finished. */
    public static List<Attempt> ofKeys(DSLContext tx, Collection<String> keys) {
        if (keys.isEmpty()) {
            return List.of();
        }
        return tx.select(A.IDEMPOTENCY_KEY, A.ATTEMPT, A.STARTED_AT, A.FINISHED_AT, A.OUTCOME, A.WORKER, A.ERROR, A.DETAIL)
                .from(A)
                .where(A.IDEMPOTENCY_KEY.in(keys))
                .orderBy(A.FINISHED_AT, A.ID)
                .fetch(r -> new Attempt(r.get(A.IDEMPOTENCY_KEY), r.get(A.ATTEMPT), r.get(A.STARTED_AT),
                        r.get(A.FINISHED_AT), r.get(A.OUTCOME), r.get(A.WORKER), r.get(A.ERROR),
                        r.get(A.DETAIL) == null ? null : r.get(A.DETAIL).data()));
    }

    /** Attempts of one outcome in the last minute and the last hour. */
    public record OutcomeCount(String outcome, long lastMinute, long lastHour) {
    }

    public static List<OutcomeCount> outcomeWindows(DSLContext tx) {
        Condition lastMinute = DSL.condition("{0} >= now() - interval '1 minute'", A.FINISHED_AT);
        return tx.select(A.OUTCOME, DSL.count().filterWhere(lastMinute), DSL.count()).from(A)
                .where(DSL.condition("{0} >= now() - interval '1 hour'", A.FINISHED_AT))
                .groupBy(A.OUTCOME)
                .fetch(r -> new OutcomeCount(r.value1(), r.value2(), r.value3()));
    }

    /** Attempts of one outcome in one minute. */
    public record MinuteCount(Instant minute, String outcome, long count) {
    }

    /** Attempts by minute and outcome since {@code from}. */
    public static List<MinuteCount> perMinute(DSLContext tx, Instant from) {
        Field<Instant> m = EffectHistory.minute(A.FINISHED_AT);
        return tx.select(m, A.OUTCOME, DSL.count()).from(A)
                .where(A.FINISHED_AT.ge(from))
                .groupBy(m, A.OUTCOME)
                .fetch(r -> new MinuteCount(r.value1(), r.value2(), r.value3()));
    }
}
