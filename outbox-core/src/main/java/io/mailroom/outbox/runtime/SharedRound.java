package io.mailroom.outbox.runtime;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;

/**
 * The messages of one claim that share a {@link BatchHandler}'s step: each handler thread prepares
 * its message and arrives; the last to arrive runs {@link BatchHandler#together} for every message
 * that has work, then all of them go on. A message that ends at preparation (or whose thread was
 * never started, {@link #skip}) arrives without work and does not wait.
 *
 * <p>Waiting is not interruptible: a stop interrupts handler threads to end them early, and a
 * thread that left the round before the shared step ran would leave its work in the step
 * (e.g. a reserved idempotency key) with nobody to finish it. The shared step is short (one
 * transaction, bounded by the statement timeout); the interrupt is kept for {@code complete}.
 */
final class SharedRound<W> {

    private final BatchHandler<W> handler;
    private final ReentrantLock lock = new ReentrantLock();
    private final Condition over = lock.newCondition();
    private final List<W> work = new ArrayList<>();
    private int toArrive;
    private boolean done;
    private Throwable failure;

    SharedRound(BatchHandler<W> handler, int parties) {
        if (parties < 1) {
            throw new IllegalArgumentException("parties must be at least 1, got " + parties);
        }
        this.handler = handler;
        this.toArrive = parties;
    }

    /** Handles one message of the round on the caller's thread: prepare, the shared step, complete. */
    Outcome handle(ClaimedMessage message, ClaimContext context) throws Exception {
        BatchHandler.Prepared<W> prepared;
        try {
            prepared = handler.prepare(message, context);
        } catch (Throwable e) {
            arrive(null);
            throw e;
        }
        if (prepared.outcome() != null) {
            arrive(null);
            return prepared.outcome();
        }
        Throwable failed = arrive(prepared.work());
        if (failed != null) {
            return Outcome.retryLater("the batch's shared step failed: " + failed.getClass().getName()
                    + (failed.getMessage() == null ? "" : ": " + failed.getMessage()));
        }
        return handler.complete(prepared.work(), context);
    }

    /** A message of the round that will not be handled (its thread could not start). */
    void skip() {
        arrive(null);
    }

    /** Arrives with {@code mine} (null: nothing to share); returns what the shared step threw, if anything. */
    private Throwable arrive(W mine) {
        List<W> all;
        lock.lock();
        try {
            if (mine != null) {
                work.add(mine);
            }
            if (--toArrive > 0) {
                if (mine == null) {
                    return null;
                }
                boolean interrupted = false;
                while (!done) {
                    try {
                        over.await();
                    } catch (InterruptedException e) {
                        interrupted = true;
                    }
                }
                if (interrupted) {
                    Thread.currentThread().interrupt();
                }
                return failure;
            }
            all = List.copyOf(work);
        } finally {
            lock.unlock();
        }
        // The last to arrive runs the shared step, outside the lock.
        Throwable failed = null;
        try {
            if (!all.isEmpty()) {
                handler.together(all);
            }
        } catch (Throwable e) {
            failed = e;
        } finally {
            lock.lock();
            try {
                failure = failed;
                done = true;
                over.signalAll();
            } finally {
                lock.unlock();
            }
        }
        if (failed instanceof Error error) {
            throw error;
        }
        return failed;
    }
}
