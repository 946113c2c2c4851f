package io.mailroom.outbox.runtime;

import io.mailroom.outbox.DispatcherSessions;
import io.mailroom.db.sql.SqlStates;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Semaphore;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * The claim loops ({@link DispatcherConfig#claimers()} threads, each claiming in its own short
 * transaction, so that one claim's commit overlaps the next claim). A producer never claims more
 * than there are free handler slots ({@link ClaimLedger#slots}); short of a batch's worth of slots
 * with outcomes queued, it writes a batch of those outcomes itself (through the {@link Completer})
 * before it claims again, since only written outcomes free slots. An empty claim never means the
 * queue is empty (rows may be locked or not yet available): it sleeps for the poll interval with
 * jitter, cut short by {@link #wake}. Paused scopes ({@code *} or a topic) are not claimed.
 */
final class Producer {

    private static final Logger log = LoggerFactory.getLogger(Producer.class);

    private final DispatcherConfig config;
    private final Set<String> topics;
    /** Moves the first of the topics claimed one by one on each round (see {@link #claimSets}). */
    private final AtomicInteger rotation = new AtomicInteger();
    private final ClaimGate gate;
    private final DispatcherListener listener;
    private final DispatcherSessions sessions;
    private final OutboxStore store;
    private final String incarnation;
    private final ClaimLedger ledger;
    private final Completer completer;
    private final HandlerExecutor executor;
    private final Semaphore wakeSignal = new Semaphore(0);
    private volatile Set<String> paused = Set.of();
    private volatile boolean claiming;
    private final List<Thread> threads = new ArrayList<>();
    /** Producers writing queued outcomes right now (see {@link #completeQueued}); a stop does not interrupt them. */
    private final Set<Thread> completing = ConcurrentHashMap.newKeySet();

    Producer(DispatcherConfig config, Set<String> topics, ClaimGate gate, DispatcherListener listener,
             DispatcherSessions sessions, OutboxStore store, String incarnation, ClaimLedger ledger,
             Completer completer, HandlerExecutor executor) {
        this.config = config;
        this.topics = topics;
        this.gate = gate;
        this.listener = listener;
        this.sessions = sessions;
        this.store = store;
        this.incarnation = incarnation;
        this.ledger = ledger;
        this.completer = completer;
        this.executor = executor;
    }

    void start() {
        claiming = true;
        for (int i = 0; i < config.claimers(); i++) {
            threads.add(Thread.ofPlatform().name("mailroom-producer-" + i).start(this::produce));
        }
    }

    /**
     * No new claims from now on. A producer waiting or claiming is interrupted; one writing queued
     * outcomes is let finish (an interrupt would cut its connection retries short), so it may still
     * be writing when this returns: {@link #awaitEnd} waits for it.
     */
    void stopClaiming() {
        claiming = false;
        wake();
        for (Thread p : threads) {
            if (!completing.contains(p)) {
                p.interrupt();
            }
        }
    }

    /**
     * Waits, up to {@code max} in all, for the producers that are not writing outcomes to end: a claim
     * under way when the stop began is then in the ledger (and its handlers running) before the stop
     * looks at what is in flight. The ones writing are waited for by {@link #awaitEnd}.
     */
    void awaitClaimsEnded(Duration max) {
        joinAll(max, p -> !completing.contains(p));
    }

    /**
     * Waits until every producer thread has ended, up to {@code max} in all; true if they have. Called
     * after {@link #stopClaiming} and after the handlers still running were interrupted: an outcome a
     * producer is writing can wait on what those handlers hold.
     */
    boolean awaitEnd(Duration max) {
        boolean ended = joinAll(max, p -> true);
        threads.clear();
        return ended;
    }

    /** Joins the producer threads {@code which} accepts, up to {@code max} in all; true if they all ended. */
    private boolean joinAll(Duration max, java.util.function.Predicate<Thread> which) {
        long deadline = System.nanoTime() + max.toNanos();
        boolean ended = true;
        for (Thread p : threads) {
            if (which.test(p)) {
                Dispatcher.joinQuietly(p, Duration.ofMillis(Math.max(1, TimeUnit.NANOSECONDS.toMillis(deadline - System.nanoTime()))));
                ended &= !p.isAlive();
            }
        }
        return ended;
    }

    /** Wakes the producers now (as a notification would). */
    void wake() {
        int missing = config.claimers() - wakeSignal.availablePermits();
        if (missing > 0) {
            wakeSignal.release(missing); // one for each producer; at most one each, so wake-ups coalesce
        }
    }

    Set<String> paused() {
        return paused;
    }

    void paused(Set<String> scopes) {
        paused = Set.copyOf(scopes);
    }

    /** Whether {@code topic} is one of ours and not paused: a claim now could take its messages. */
    boolean claimsNow(String topic) {
        Set<String> pausedNow = paused;
        return topics.contains(topic) && !pausedNow.contains("*") && !pausedNow.contains(topic);
    }

    private void produce() {
        ClaimMarks marks = new ClaimMarks(config.fullScanInterval(), config.markLookback(), System::nanoTime,
                ledger::freedOrderingKeys); // this claimer's own
        Semaphore slots = ledger.slots();
        int fullBatch = Math.min(config.batchSize(), config.concurrency());
        int halfBatch = Math.max(1, fullBatch / 2);
        long lingerNanos = config.claimLinger().toNanos();
        while (claiming) {
            try {
                if (paused.contains("*")) {
                    sleep(config.controlPollInterval());
                    continue;
                }
                int free = slots.drainPermits();
                if (free < fullBatch && completer.queued() > 0) {
                    // Short of slots with outcomes waiting: writing them is what frees slots, so this
                    // claimer writes a batch instead of waiting for the completer (as the bare SQL loop
                    // completes what it claimed), then looks again.
                    slots.release(free);
                    if (completeQueued()) {
                        continue;
                    }
                    free = slots.drainPermits();
                }
                if (!claiming) { // read after leaving completing: a stop from now on interrupts
                    slots.release(free);
                    break;
                }
                if (free < halfBatch && lingerNanos > 0) {
                    // Slots come back with each written batch of outcomes: wait a moment for half a
                    // batch's worth rather than claim (and reserve, and complete) a few messages at a time.
                    if (slots.tryAcquire(halfBatch - free, lingerNanos, TimeUnit.NANOSECONDS)) {
                        free = halfBatch;
                    }
                    free += slots.drainPermits();
                }
                if (free == 0) {
                    slots.acquire();
                    free = 1 + slots.drainPermits();
                }
                int want = claimSize(free, config.batchSize());
                slots.release(free - want);
                if (!claiming) {
                    slots.release(want);
                    break;
                }
                List<InFlight> claimed;
                try {
                    claimed = claimRound(want, true, marks);
                } catch (RuntimeException e) {
                    slots.release(want);
                    listener.error("claim", e);
                    log.warn("Claim failed (SQLSTATE {}): {}; retrying after the poll interval",
                            SqlStates.sqlState(e), e.getMessage());
                    sleep(config.pollInterval());
                    continue;
                }
                slots.release(want - claimed.size());
                executor.execute(claimed);
                if (claimed.size() < want) {
                    sleep(config.pollInterval());
                }
            } catch (InterruptedException e) {
                if (!claiming) {
                    break;
                }
            } catch (RuntimeException e) {
                log.error("Producer loop failed; continuing", e);
            }
        }
    }

    /**
     * How many to claim with {@code free} slots: the batch, or else the largest power of two that
     * fits. The limit is part of the claim's text (so that PostgreSQL keeps a generic plan for it),
     * and claiming exactly the free slots made up to {@code batchSize} texts, each rendered,
     * parsed and planned afresh: a profile at batch 1000 found the claims averaging 270 rows over
     * hundreds of limits. This way a dispatcher uses at most 11.
     */
    static int claimSize(int free, int batchSize) {
        return free >= batchSize ? batchSize : Integer.highestOneBit(free);
    }

    /**
     * Writes one batch of queued outcomes on this producer's thread (and its session: a producer
     * holds one session at a time, claiming or completing); false if none was queued or the
     * dispatcher is stopping, when the completer alone drains what is queued.
     */
    private boolean completeQueued() {
        if (completer.queued() == 0) {
            return false;
        }
        Thread me = Thread.currentThread();
        completing.add(me); // before reading claiming: stop() reads them the other way round
        try {
            return claiming && completer.writeQueued();
        } finally {
            completing.remove(me);
        }
    }

    /**
     * One claim round of up to {@code want} messages, in flight when it returns (see {@link
     * ClaimLedger#claimRound}), each claim starting where {@code marks} say.
     */
    List<InFlight> claimRound(int want, boolean holdsSlots, ClaimMarks marks) {
        return ledger.claimRound(holdsSlots, () -> claim(want, marks));
    }

    private List<ClaimedMessage> claim(int want, ClaimMarks marks) {
        Set<String> pausedNow = paused;
        if (pausedNow.contains("*")) {
            return List.of();
        }
        List<String> unlimited = new ArrayList<>();
        List<ClaimedMessage> claimed = new ArrayList<>();
        for (String topic : topics) {
            if (pausedNow.contains(topic)) {
                continue;
            }
            int limit = gate.claimLimit(topic);
            if (limit == Integer.MAX_VALUE) {
                unlimited.add(topic);
            } else if (limit > 0 && claimed.size() < want) {
                claimed.addAll(claimTopics(List.of(topic), Math.min(limit, want - claimed.size()), marks));
            }
        }
        for (List<String> set : claimSets(unlimited, topics.size(), rotation.getAndIncrement())) {
            if (claimed.size() >= want) {
                break;
            }
            claimed.addAll(claimTopics(set, want - claimed.size(), marks));
        }
        return claimed;
    }

    /**
     * How the topics claimed without a limit are claimed, in order: together in one claim while they
     * are all of this dispatcher's {@code ours} topics; one claim per topic while some of ours are
     * left out (paused, or gated by their breaker), starting from a topic that moves on each round
     * ({@code round}) so that a topic with a backlog does not keep the others waiting. Why: a claim of
     * several topics reads the claim index of every topic in (available_at, id) order and walks the
     * pending rows of the topics it leaves out that sit before its own, and those are the rows that
     * pile up while a topic is paused or its breaker open; a claim of one topic reads only its own
     * (V28, {@link ClaimStore#claimQuery}).
     */
    static List<List<String>> claimSets(List<String> unlimited, int ours, int round) {
        if (unlimited.isEmpty()) {
            return List.of();
        }
        if (unlimited.size() == 1 || unlimited.size() >= ours) {
            return List.of(unlimited);
        }
        List<List<String>> sets = new ArrayList<>(unlimited.size());
        int start = Math.floorMod(round, unlimited.size());
        for (int i = 0; i < unlimited.size(); i++) {
            sets.add(List.of(unlimited.get((start + i) % unlimited.size())));
        }
        return sets;
    }

    private List<ClaimedMessage> claimTopics(List<String> topics, int limit, ClaimMarks marks) {
        long started = System.nanoTime();
        ClaimMark from = marks.next(topics);
        ClaimStore.Claimed claimed = sessions.inTransaction(tx -> store.claims().claim(tx, config.workerId(), incarnation,
                limit, topics, config.lease(), config.orderingKeys(), from));
        marks.claimed(topics, from, claimed.lowest()); // after the commit: a claim that failed moves no mark
        listener.claimed(limit, claimed.messages().size(), Duration.ofNanos(System.nanoTime() - started));
        return claimed.messages();
    }

    private void sleep(Duration max) throws InterruptedException {
        long millis = max.toMillis();
        long jitter = (long) (millis * config.pollJitter() * ThreadLocalRandom.current().nextDouble());
        wakeSignal.tryAcquire(Math.max(1, millis - jitter), TimeUnit.MILLISECONDS);
    }
}
