package io.mailroom.outbox.runtime;

import io.mailroom.db.sql.SqlClock;

import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;

import static io.mailroom.outbox.runtime.CompletionStore.Finish.Kind.DONE;
import static io.mailroom.outbox.runtime.CompletionStore.Finish.Kind.FAILED;
import static io.mailroom.outbox.runtime.CompletionStore.Finish.Kind.RELEASE;
import static io.mailroom.outbox.runtime.CompletionStore.Finish.Kind.RETRY;
import static io.mailroom.outbox.runtime.CompletionStore.Finish.Kind.REVIEW;

/**
 * Runs the handler of each claimed message on a virtual thread of its own, after its claim has
 * committed, and hands the outcome to the {@link Completer}. Messages of one claim whose handler is
 * a {@link BatchHandler} meet in a {@link SharedRound}. An outcome is queued only while the claim is
 * still this process's ({@link InFlight#startCompleting}); a claim lost or handed back meanwhile
 * leaves flight with nothing written.
 */
final class HandlerExecutor {

    private final Map<String, MessageHandler> handlers;
    private final DispatcherConfig config;
    private final SqlClock clock;
    private final DispatcherListener listener;
    private final ClaimLedger ledger;
    private final Completer completer;
    private ExecutorService threads;

    HandlerExecutor(Map<String, MessageHandler> handlers, DispatcherConfig config, SqlClock clock,
                    DispatcherListener listener, ClaimLedger ledger, Completer completer) {
        this.handlers = handlers;
        this.config = config;
        this.clock = clock;
        this.listener = listener;
        this.ledger = ledger;
        this.completer = completer;
    }

    void start() {
        threads = Executors.newThreadPerTaskExecutor(Thread.ofVirtual().name("mailroom-handler-", 0).factory());
    }

    void stop() {
        threads.shutdownNow();
    }

    /**
     * Starts the handlers of one claim round; their outcomes go to the completer's queue. If a
     * handler cannot be started, the rest of the round stay in flight until a stop hands them back,
     * and the exception is thrown.
     */
    void execute(List<InFlight> claimed) {
        Map<String, SharedRound<?>> rounds = sharedRounds(claimed);
        for (int i = 0; i < claimed.size(); i++) {
            InFlight f = claimed.get(i);
            SharedRound<?> round = rounds.get(f.message.topic());
            try {
                threads.execute(() -> {
                    Completer.Pending pending = handle(f, round);
                    if (pending != null) {
                        completer.submit(pending);
                    }
                });
            } catch (RuntimeException e) {
                // their round must not wait for the messages whose handler never starts
                for (InFlight rest : claimed.subList(i, claimed.size())) {
                    SharedRound<?> r = rounds.get(rest.message.topic());
                    if (r != null) {
                        r.skip();
                    }
                }
                throw e;
            }
        }
    }

    /**
     * Runs the handlers of one claim round and writes their outcomes before returning: one after
     * the other on the caller's thread, except the messages of a shared round, which meet at the
     * shared step and so each need a thread of their own.
     */
    void runInline(List<InFlight> held) {
        Map<String, SharedRound<?>> rounds = sharedRounds(held);
        List<InFlight> sharing = new ArrayList<>();
        for (InFlight f : held) {
            if (rounds.containsKey(f.message.topic())) {
                sharing.add(f);
                continue;
            }
            Completer.Pending pending = handle(f, null);
            if (pending != null) {
                completer.writeWithFallback(List.of(pending));
            }
        }
        if (sharing.isEmpty()) {
            return;
        }
        List<Completer.Pending> outcomes = Collections.synchronizedList(new ArrayList<>());
        List<Thread> started = new ArrayList<>(sharing.size());
        for (InFlight f : sharing) {
            started.add(Thread.ofVirtual().name("mailroom-handler-once").start(() -> {
                Completer.Pending pending = handle(f, rounds.get(f.message.topic()));
                if (pending != null) {
                    outcomes.add(pending);
                }
            }));
        }
        started.forEach(t -> Dispatcher.joinQuietly(t, Duration.ofDays(1)));
        if (!outcomes.isEmpty()) {
            completer.writeWithFallback(List.copyOf(outcomes)); // one batch, as the completer would
        }
    }

    /**
     * The shared rounds of one claim: one per topic whose handler is a {@link BatchHandler} and which
     * has more than one message in the claim (one message is handled alone, as a batch of one).
     */
    private Map<String, SharedRound<?>> sharedRounds(List<InFlight> claimed) {
        if (claimed.size() < 2) {
            return Map.of();
        }
        Map<String, Integer> perTopic = new HashMap<>();
        for (InFlight f : claimed) {
            if (handlers.get(f.message.topic()) instanceof BatchHandler<?>) {
                perTopic.merge(f.message.topic(), 1, Integer::sum);
            }
        }
        Map<String, SharedRound<?>> rounds = new HashMap<>();
        perTopic.forEach((topic, n) -> {
            if (n > 1) {
                rounds.put(topic, new SharedRound<>((BatchHandler<?>) handlers.get(topic), n));
            }
        });
        return rounds;
    }

    /**
     * Runs the handler of one claimed message (through its claim's shared round, if it has one);
     * returns the outcome to write, or null if there is none.
     */
    private Completer.Pending handle(InFlight f, SharedRound<?> round) {
        ClaimedMessage m = f.message;
        f.thread = Thread.currentThread();
        long started = System.nanoTime();
        Outcome outcome = null;
        try {
            outcome = round != null ? round.handle(m, f) : handlers.get(m.topic()).handle(m, f);
            if (outcome == null) {
                outcome = Outcome.retryLater("handler for " + m.topic() + " returned no outcome");
            }
        } catch (ClaimLostException e) {
            f.lost = true;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            outcome = Outcome.retryLater("handler interrupted");
        } catch (Exception e) {
            outcome = Outcome.retryLater("handler threw " + e.getClass().getName()
                    + (e.getMessage() == null ? "" : ": " + e.getMessage()));
        } finally {
            f.thread = null;
        }
        if (f.lost || outcome == null || !f.startCompleting()) {
            // Someone else holds the message now, or it was handed back: record nothing.
            listener.finished(m, "claim_lost", Duration.ofNanos(System.nanoTime() - started));
            ledger.release(f);
            return null;
        }
        return pending(f, outcome, started);
    }

    private Completer.Pending pending(InFlight f, Outcome outcome, long startedNanos) {
        ClaimedMessage m = f.message;
        Instant now = clock.instant();
        CompletionStore.Finish finish = switch (outcome) {
            case Outcome.Done d -> new CompletionStore.Finish(m, DONE, null, null, d.detail(), now);
            case Outcome.RetryLater r -> new CompletionStore.Finish(m, RETRY, r.error(),
                    r.after() != null ? r.after() : config.backoff().delay(m.attempt()), r.detail(), now);
            case Outcome.Failed x -> new CompletionStore.Finish(m, FAILED, x.reason(), null, x.detail(), now);
            case Outcome.Review v -> new CompletionStore.Finish(m, REVIEW, v.reason(), null, v.detail(), now);
            case Outcome.NotAttempted x -> new CompletionStore.Finish(m, RELEASE, x.reason(), x.after(), x.detail(), now,
                    x.waitingFor());
        };
        Duration took = Duration.ofNanos(System.nanoTime() - startedNanos);
        return new Completer.Pending(finish, outcome.alsoInTransaction(), f, finish.kind().label(), took);
    }
}
