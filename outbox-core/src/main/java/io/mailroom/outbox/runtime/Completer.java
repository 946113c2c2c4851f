package io.mailroom.outbox.runtime;

import io.mailroom.outbox.DispatcherSessions;
import io.mailroom.outbox.MessageStatus;
import io.mailroom.db.sql.SqlStates;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;

/**
 * Writes the outcomes of attempts. Outcomes are queued by the executors and written in batches by
 * the completer's thread or by a claimer short of slots ({@link #writeQueued}), one transaction per
 * batch: the fenced state change, each outcome's own
 * {@link Outcome.TransactionalStep} (only for claims still held; {@link Outcome.GroupedStep}s of one
 * group in one call, e.g. one statement for the batch's idempotency records), the effect's new
 * state and the attempt history. If a batch fails, its outcomes are written one by one so that a single bad step
 * cannot hold back the others; an outcome whose step keeps failing is written as a retry without
 * the step (the side effect then looks unrecorded, which the idempotency store is there to handle).
 *
 * <p>A lost connection (SQLSTATE class 08, 57P01...) is retried on a fresh connection, with growing
 * pauses, for up to {@link #connectionRetryBudget} (half the lease, at most 30 s): after a
 * {@code pg_terminate_backend} round or a server restart several pooled connections are dead at
 * once, and giving up would leave a finished send looking unrecorded until its lease expires, to
 * be sent again (HTTP) or parked for review (SMTP). Retrying is safe because every write is fenced
 * by {@code claim_version}: if a lost connection had in fact committed, the retry changes nothing.
 */
final class Completer {

    private static final Logger log = LoggerFactory.getLogger(Completer.class);
    static final Duration MAX_CONNECTION_RETRY_BUDGET = Duration.ofSeconds(30);
    private static final long FIRST_RETRY_PAUSE_MILLIS = 50;
    private static final long MAX_RETRY_PAUSE_MILLIS = 2000;
    /** How long without a new outcome ends the completion linger. */
    static final long QUIET_GAP_NANOS = TimeUnit.MILLISECONDS.toNanos(1);

    /**
     * One outcome waiting to be written for {@code claim}; {@code outcome} and {@code took} are what
     * the listener is told once it is settled.
     */
    record Pending(CompletionStore.Finish finish, Outcome.TransactionalStep step, InFlight claim, String outcome,
                   Duration took) {

        /** The same claim's outcome written as {@code instead}, without the step. */
        Pending instead(CompletionStore.Finish instead) {
            return new Pending(instead, null, claim, outcome, took);
        }
    }

    /** What the dispatcher does with settled outcomes. */
    interface Settlement {

        /**
         * A batch is written (a claim the fence did not return was lost): their claims are over.
         * Called once per batch, so that the slots of a whole batch come back at once.
         */
        void written(List<Pending> batch);

        /** Writing this outcome was given up: its claim is left running until the lease expires. */
        void givenUp(Pending pending);
    }

    private final DispatcherSessions sessions;
    private final OutboxStore store;
    private final DispatcherConfig config;
    private final DispatcherListener listener;
    private final Settlement settlement;
    private final LinkedBlockingQueue<Pending> queue = new LinkedBlockingQueue<>();
    private final Duration connectionRetryBudget;
    private volatile boolean running;
    private Thread thread;

    Completer(DispatcherSessions sessions, OutboxStore store, DispatcherConfig config, DispatcherListener listener,
              Settlement settlement) {
        this.sessions = sessions;
        this.settlement = settlement;
        this.store = store;
        this.config = config;
        this.listener = listener;
        Duration half = config.lease().dividedBy(2);
        this.connectionRetryBudget = half.compareTo(MAX_CONNECTION_RETRY_BUDGET) > 0 ? MAX_CONNECTION_RETRY_BUDGET : half;
    }

    void start() {
        running = true;
        thread = Thread.ofPlatform().name("mailroom-completer").daemon().start(this::loop);
    }

    /** Queues an outcome for the next batch. */
    void submit(Pending pending) {
        queue.add(pending);
    }

    /**
     * Takes up to one batch of the queued outcomes and writes it on the caller's thread (a claimer
     * short of slots: writing them is what frees slots). Each queued outcome is taken by exactly one
     * writer. False if nothing was queued.
     */
    boolean writeQueued() {
        List<Pending> batch = new ArrayList<>(Math.min(queue.size(), config.completionBatchSize()));
        queue.drainTo(batch, config.completionBatchSize());
        if (batch.isEmpty()) {
            return false;
        }
        writeWithFallback(batch);
        return true;
    }

    /** Outcomes queued and not yet taken by a writer. */
    int queued() {
        return queue.size();
    }

    /**
     * Stops after writing everything queued so far. The thread is not interrupted while it drains
     * (an interrupt would cut a connection retry short and give its outcomes up); only if it is
     * still busy at the deadline.
     */
    void stop(Duration deadline) {
        running = false;
        if (thread != null) {
            try {
                thread.join(Math.max(1, deadline.toMillis()));
                thread.interrupt();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
        List<Pending> rest = new ArrayList<>();
        queue.drainTo(rest);
        if (!rest.isEmpty()) {
            writeWithFallback(rest);
        }
    }

    private void loop() {
        List<Pending> batch = new ArrayList<>(config.completionBatchSize());
        while (running || !queue.isEmpty()) {
            try {
                Pending first = queue.poll(100, TimeUnit.MILLISECONDS);
                if (first == null) {
                    continue;
                }
                batch.add(first);
                queue.drainTo(batch, config.completionBatchSize() - 1);
                gatherStragglers(batch);
                writeWithFallback(batch);
            } catch (InterruptedException e) {
                if (!running) {
                    break;
                }
            } catch (RuntimeException e) {
                log.error("Completer loop failed; continuing", e);
            } finally {
                batch.clear();
            }
        }
    }

    /**
     * Adds to {@code batch} the outcomes still arriving, for up to the completion linger, stopping at
     * the first {@link #QUIET_GAP_NANOS} without one (see {@link DispatcherConfig#DEFAULT_COMPLETION_LINGER}).
     */
    private void gatherStragglers(List<Pending> batch) throws InterruptedException {
        long linger = config.completionLinger().toNanos();
        if (linger == 0) {
            return;
        }
        long deadline = System.nanoTime() + linger;
        while (batch.size() < config.completionBatchSize() && running) {
            long left = deadline - System.nanoTime();
            if (left <= 0) {
                return;
            }
            Pending next = queue.poll(Math.min(left, QUIET_GAP_NANOS), TimeUnit.NANOSECONDS);
            if (next == null) {
                return;
            }
            batch.add(next);
            queue.drainTo(batch, config.completionBatchSize() - batch.size());
        }
    }

    /** Writes now, on the caller's thread (runOnce and stop). */
    void writeWithFallback(List<Pending> batch) {
        try {
            writeRetrying(batch);
            return;
        } catch (RuntimeException e) {
            listener.error("completion", e);
            if (SqlStates.isConnectionLoss(e)) {
                // Unreachable for the whole retry budget: one by one would fail the same way.
                log.error("Could not record {} outcomes: no database connection for {} (SQLSTATE {}); their leases"
                        + " will expire and they will be rescued", batch.size(), connectionRetryBudget, SqlStates.sqlState(e));
                batch.forEach(settlement::givenUp);
                return;
            }
            log.warn("Completion batch of {} failed (SQLSTATE {}); writing one by one",
                    batch.size(), SqlStates.sqlState(e), e);
        }
        for (Pending p : batch) {
            try {
                writeRetrying(List.of(p));
            } catch (RuntimeException e) {
                if (p.step() == null || SqlStates.isConnectionLoss(e)) {
                    // The lease will expire and the rescuer will hand the message back.
                    log.error("Could not record the outcome of message {} ({}); its lease will expire and it will be rescued",
                            p.finish().message().id(), SqlStates.sqlState(e), e);
                    listener.error("completion", e);
                    settlement.givenUp(p);
                    continue;
                }
                CompletionStore.Finish f = p.finish();
                String error = "could not record the outcome (" + f.kind().label() + "): "
                        + e.getClass().getSimpleName() + " SQLSTATE " + SqlStates.sqlState(e);
                log.error("Outcome step of message {} failed; recording a retry instead", f.message().id(), e);
                try {
                    writeRetrying(List.of(p.instead(new CompletionStore.Finish(f.message(), CompletionStore.Finish.Kind.RETRY, error, null,
                            f.detail(), f.finishedAt()))));
                } catch (RuntimeException again) {
                    log.error("Could not record a retry for message {} either; its lease will expire",
                            f.message().id(), again);
                    settlement.givenUp(p);
                }
            }
        }
    }

    /**
     * {@link #write}, again on a fresh connection while the failure is a lost connection or a
     * deadlock and the retry budget lasts; any other failure, or the last one, is thrown.
     */
    private void writeRetrying(List<Pending> batch) {
        long deadline = System.nanoTime() + connectionRetryBudget.toNanos();
        long pause = FIRST_RETRY_PAUSE_MILLIS;
        for (int attempt = 1; ; attempt++) {
            try {
                write(batch);
                if (attempt > 1) {
                    log.info("Completion of {} outcomes written after {} connection losses", batch.size(), attempt - 1);
                }
                return;
            } catch (RuntimeException e) {
                if (!retryable(e) || System.nanoTime() + pause * 1_000_000 > deadline) {
                    throw e;
                }
                listener.error("completion", e);
                log.warn("Completion of {} outcomes failed (SQLSTATE {}: {}); retrying in {} ms",
                        batch.size(), SqlStates.sqlState(e),
                        SqlStates.isConnectionLoss(e) ? "connection lost" : "deadlock victim", pause);
                try {
                    Thread.sleep(pause);
                } catch (InterruptedException interrupted) {
                    Thread.currentThread().interrupt();
                    throw e;
                }
                pause = Math.min(pause * 2, MAX_RETRY_PAUSE_MILLIS);
            }
        }
    }

    /** A lost connection, or chosen as a deadlock's victim (nothing was written: the same batch can simply go again). */
    private static boolean retryable(RuntimeException e) {
        return SqlStates.isConnectionLoss(e) || SqlStates.is(e, SqlStates.DEADLOCK_DETECTED);
    }

    private void write(List<Pending> batch) {
        List<CompletionStore.Finish> finishes = new ArrayList<>(batch.size());
        batch.forEach(p -> finishes.add(p.finish()));
        List<ChangedRow> changed = sessions.inTransaction(tx -> {
            List<ChangedRow> rows = store.completions().finish(tx, finishes);
            Set<Long> held = new HashSet<>();
            rows.forEach(r -> held.add(r.id()));
            Map<Object, List<Outcome.GroupedStep>> groups = new LinkedHashMap<>();
            for (Pending p : batch) {
                if (p.step() != null && held.contains(p.finish().message().id())) {
                    if (p.step() instanceof Outcome.GroupedStep g) {
                        groups.computeIfAbsent(g.group(), k -> new ArrayList<>()).add(g);
                    } else {
                        p.step().run(tx);
                    }
                }
            }
            for (List<Outcome.GroupedStep> group : groups.values()) {
                group.getFirst().runGroup(tx, group);
            }
            store.history().updateEffects(tx, rows);
            if (config.recordAttempts()) {
                store.history().insertAttempts(tx, attempts(batch, rows));
            }
            return rows;
        });
        Map<Long, ClaimedMessage> byId = new java.util.HashMap<>();
        batch.forEach(p -> byId.put(p.finish().message().id(), p.finish().message()));
        for (ChangedRow r : changed) {
            ClaimedMessage m = byId.get(r.id());
            if (r.ended() && m != null) {
                listener.ended(m.idempotencyKey(), m.topic(), r.status(), r.lastError(), m.payloadJson());
            }
        }
        if (changed.size() < batch.size()) {
            Set<Long> held = new HashSet<>();
            changed.forEach(r -> held.add(r.id()));
            for (Pending p : batch) {
                ClaimedMessage m = p.finish().message();
                if (!held.contains(m.id())) {
                    log.debug("Claim of message {} (version {}) was lost before completion; outcome {} not recorded",
                            m.id(), m.claimVersion(), p.finish().kind().label());
                    listener.claimLost(m, "completion");
                }
            }
        }
        settlement.written(batch);
    }

    private List<HistoryStore.AttemptRow> attempts(List<Pending> batch, List<ChangedRow> rows) {
        var statusById = new java.util.HashMap<Long, String>();
        rows.forEach(r -> statusById.put(r.id(), r.status()));
        List<HistoryStore.AttemptRow> out = new ArrayList<>(batch.size());
        for (Pending p : batch) {
            CompletionStore.Finish f = p.finish();
            ClaimedMessage m = f.message();
            String status = statusById.get(m.id());
            String outcome;
            String detail = f.detail();
            if (status == null) {
                outcome = "claim_lost";
            } else if (f.kind() == CompletionStore.Finish.Kind.RETRY && status.equals(MessageStatus.FAILED.sql())) {
                outcome = "failed";
            } else if (f.kind() == CompletionStore.Finish.Kind.RELEASE) {
                outcome = "released";
                detail = AttemptDetail.released(detail, AttemptDetail.RELEASE_NOT_ATTEMPTED);
            } else {
                outcome = f.kind().label();
                if (f.kind() == CompletionStore.Finish.Kind.FAILED) {
                    detail = AttemptDetail.permanent(detail);
                }
            }
            out.add(new HistoryStore.AttemptRow(m.idempotencyKey(), m.id(), m.attempt(), m.claimVersion(),
                    config.workerId(), m.claimedAt(), f.finishedAt() == null ? Instant.now() : f.finishedAt(),
                    outcome, f.error(), detail));
        }
        return out;
    }
}
