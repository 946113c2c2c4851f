package io.mailroom.outbox.maintenance;

import io.mailroom.outbox.DispatcherSessions;
import io.mailroom.db.sql.SqlClock;
import org.jooq.DSLContext;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import javax.sql.DataSource;
import java.time.Instant;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;

/**
 * Deletes support history older than its retention, in small batches: {@code outbox_attempt} by
 * {@code finished_at}, {@code outbox_effect} by {@code finished_at}/{@code updated_at},
 * {@code audit_log} by {@code at} (with its own retention), and the tables of other modules through
 * the {@link RetentionStep}s their owners give (renderings and delivery events with their effect,
 * settled idempotency records by age). Each effect batch hands the effects it deleted to every step
 * in its own transaction, so history that belongs to an effect leaves with it; each step's own pass
 * then takes what is left (older rows, rows that never had an effect). Each batch is its own short transaction that locks its rows with
 * {@code FOR UPDATE SKIP LOCKED}, so the cleaner never holds many locks, never waits for a worker or
 * a person, and several instances may run it at once; a run stops after
 * {@code historyMaxBatchesPerRun} batches per table, so a large backlog is worked off over several
 * runs without a long transaction (which would itself hold back vacuum).
 *
 * <p>Invariant: history that someone may still need is never deleted.
 * <ul>
 *   <li>An effect is deleted only when done, failed, cancelled or closed, finished and untouched since the
 *       cutoff, and its hot row is gone: while the hot row exists, its effect is what makes the
 *       idempotency key unique. Pending and running effects are work in progress; <b>review effects
 *       are kept whatever their age</b>, because a person has not decided yet.</li>
 *   <li>The attempts of an effect that is pending, running or in review are kept with it; its
 *       rendering (what the customer got) is kept for as long as the effect itself.</li>
 *   <li>Idempotency records are deleted only when settled (succeeded or failed); reserved and
 *       ambiguous ones are unknown outcomes waiting to be resolved.</li>
 * </ul>
 *
 * <p>The history retention is also the deduplication window: once an effect and its idempotency
 * record are gone, enqueueing the same key again is accepted as a new effect. It must be longer than
 * any upstream retry horizon.
 */
public final class HistoryCleaner {

    private static final Logger log = LoggerFactory.getLogger(HistoryCleaner.class);

    /**
     * Rows deleted by one {@link #cleanHistory()} run, per table; {@code complete} is false when a
     * table hit {@code historyMaxBatchesPerRun} and old rows remain for the next run.
     */
    public record Report(long attempts, long effects, long auditEntries, Map<String, Long> steps, boolean complete) {
        public Report {
            steps = Map.copyOf(steps);
        }

        /** Rows a step deleted, by its {@link RetentionStep#table()}; 0 for a table no step has. */
        public long deleted(String table) {
            return steps.getOrDefault(table, 0L);
        }

        public long total() {
            return attempts + effects + auditEntries + steps.values().stream().mapToLong(Long::longValue).sum();
        }
    }

    @FunctionalInterface
    private interface BatchDelete {
        int delete(DSLContext tx, Instant cutoff, int limit);
    }

    private final RetentionConfig config;
    private final DispatcherSessions sessions;
    private final RetentionStore store;
    private final List<RetentionStep> steps;

    /** A cleaner of outbox-core's own history only. */
    public HistoryCleaner(DataSource dataSource, RetentionConfig config) {
        this(dataSource, config, List.of());
    }

    /** A cleaner that also runs the other owners' {@code steps}, in this order. */
    public HistoryCleaner(DataSource dataSource, RetentionConfig config, List<RetentionStep> steps) {
        Objects.requireNonNull(dataSource, "dataSource");
        this.steps = List.copyOf(Objects.requireNonNull(steps, "steps"));
        Set<String> tables = new HashSet<>();
        for (RetentionStep step : this.steps) {
            if (!tables.add(step.table())) {
                throw new IllegalArgumentException("steps: two retention steps for " + step.table());
            }
        }
        this.config = Objects.requireNonNull(config, "config");
        this.sessions = new DispatcherSessions(dataSource, null, null);
        this.store = new RetentionStore(SqlClock.of(config.clock()));
    }

    public RetentionConfig config() {
        return config;
    }

    /** One bounded pass over the history tables and the steps; see the class comment for what is kept. */
    public Report cleanHistory() {
        Instant now = sessions.inTransaction(store::now);
        Instant historyCutoff = now.minus(config.historyRetention());
        Instant auditCutoff = now.minus(config.auditRetention());
        // Attempts before effects, so an effect's timeline never outlives it by a run.
        Batches attempts = deleteInBatches("outbox_attempt", historyCutoff, store::deleteAttempts);
        // Effects hand what they leave behind to its owners in the same transaction.
        Map<String, Long> byStep = new LinkedHashMap<>();
        steps.forEach(step -> byStep.put(step.table(), 0L));
        Batches effects = deleteInBatches("outbox_effect", historyCutoff, (tx, cutoff, limit) -> {
            List<RetentionStep.DeletedEffect> gone = store.deleteEffects(tx, cutoff, limit);
            if (!gone.isEmpty()) {
                for (RetentionStep step : steps) {
                    int n = step.deleteWithEffects(tx, gone, cutoff);
                    byStep.merge(step.table(), (long) n, Long::sum);
                }
            }
            return gone.size();
        });
        boolean complete = attempts.complete && effects.complete;
        for (RetentionStep step : steps) {
            Batches own = deleteInBatches(step.table(), historyCutoff, step::deleteOld);
            byStep.merge(step.table(), own.rows, Long::sum);
            complete &= own.complete;
        }
        Batches audit = deleteInBatches("audit_log", auditCutoff, store::deleteAuditEntries);
        Report report = new Report(attempts.rows, effects.rows, audit.rows, byStep, complete && audit.complete);
        if (report.total() > 0) {
            log.info("Deleted old history: {} attempts, {} effects, {} (before {}), {} audit entries (before {}){}",
                    report.attempts(), report.effects(), byStep, historyCutoff, report.auditEntries(), auditCutoff,
                    report.complete() ? "" : "; more remain for the next run");
        }
        return report;
    }

    private record Batches(long rows, boolean complete) {
    }

    private Batches deleteInBatches(String table, Instant cutoff, BatchDelete delete) {
        long total = 0;
        int size = config.historyBatchSize();
        for (int batch = 0; batch < config.historyMaxBatchesPerRun(); batch++) {
            int n = sessions.inTransaction(tx -> {
                store.limitTransaction(tx, config.lockTimeout(), config.statementTimeout());
                return delete.delete(tx, cutoff, size);
            });
            total += n;
            if (n < size) {
                return new Batches(total, true);
            }
        }
        log.debug("{}: stopped after {} batches of {} rows; the rest waits for the next run", table,
                config.historyMaxBatchesPerRun(), size);
        return new Batches(total, false);
    }
}
