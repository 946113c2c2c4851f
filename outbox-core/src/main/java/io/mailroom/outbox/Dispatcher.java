package io.mailroom.outbox;

import io.mailroom.db.sql.SqlClock;
import io.mailroom.db.sql.SqlStates;
import org.jooq.DSLContext;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import javax.sql.DataSource;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentSkipListSet;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.Semaphore;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The runtime operators run: claims messages for the topics it has handlers for, runs each handler
 * on a virtual thread after the claim has committed, and writes outcomes through the
 * {@link Completer}; keeps leases alive ({@link Heartbeater}), returns expired ones
 * ({@link LeaseRescuer}) and honours the pause switches in {@code outbox_control}.
 *
 * <p>The producers ({@link DispatcherConfig#claimers()} threads, each claiming in its own short
 * transaction, so that one claim's commit overlaps the next claim) never claim more than there are
 * free handler slots; short of a batch's worth of slots with outcomes queued, a producer writes a
 * batch of those outcomes itself (through the {@link Completer}) before it claims again, since only
 * written outcomes free slots. An empty claim never means the
 * queue is empty (rows may be locked or not yet available): it sleeps for the poll interval with
 * jitter, cut short by a LISTEN/NOTIFY wake-up.
 *
 * <p>{@link #stop()} is graceful: no new claims, running handlers get until the shutdown deadline,
 * then the handlers that still have no outcome are interrupted, the outcomes already queued are
 * written, and only the claims without an outcome are handed back to the queue (pending, attempt
 * not counted), so nothing waits for a lease to expire and no finished send is fenced out.
 *
 * <p>A claim is in exactly one of three places while its row is running under it: in a claim
 * round that has not yet ended, {@link #inFlight}, or {@link #leftToLease}. Whatever is in none of
 * them is an orphan ({@link #releaseOrphanedClaims}).
 */
public final class Dispatcher implements AutoCloseable {

    private static final Logger log = LoggerFactory.getLogger(Dispatcher.class);
    /** How old a running claim of ours must be before, not being in flight, it counts as orphaned. */
    static final Duration ORPHAN_GRACE = Duration.ofSeconds(5);
    /** Threads of the maintenance scheduler (heartbeat, rescue, pause polling), one session each at most. */
    static final int MAINTENANCE_THREADS = 2;

    private final DispatcherConfig config;
    private final Map<String, MessageHandler> handlers;
    private final ClaimGate gate;
    private final DispatcherListener listener;
    private final DispatcherSessions sessions;
    private final OutboxStore store;
    private final Completer completer;
    private final Heartbeater heartbeater;
    private final InterruptedClaims interrupted;
    private final Registration registration;
    private final LeaseRescuer rescuer;
    private final SqlClock clock;
    /**
     * This process's claims among those of its worker id: a random id stored on every claim it
     * makes ({@code claimed_incarnation}), so that a successor started under the same worker id
     * tells the claims of the process that stopped from its own (see {@link #interruptPredecessorsClaims}).
     */
    private final String incarnation = java.util.UUID.randomUUID().toString();

    private final Map<Long, InFlight> inFlight = new ConcurrentHashMap<>();
    /**
     * Claims whose outcome the completer gave up writing (the send may have happened): they stay
     * running, attempt counted, until their lease expires and the rescuer returns them; never orphans.
     */
    private final Map<Long, ClaimedMessage> leftToLease = new ConcurrentHashMap<>();
    /** Claim rounds are numbered; those not yet over (rows committed, maybe not yet in flight) are here. */
    private final AtomicLong lastClaimRound = new AtomicLong();
    private final ConcurrentSkipListSet<Long> claimRoundsRunning = new ConcurrentSkipListSet<>();
    /** Running claims of ours seen outside {@link #inFlight} while a claim round that may own them was running. */
    private final Map<Long, Suspect> suspects = new HashMap<>(); // guarded by orphanCheck
    private final Object orphanCheck = new Object();
    private final Semaphore slots;
    private final Semaphore wakeSignal = new Semaphore(0);
    private volatile Set<String> paused = Set.of();
    private volatile boolean running;
    private volatile boolean claiming;

    private ExecutorService handlerThreads;
    private ScheduledExecutorService maintenance;
    private WakeUpListener wakeUpListener;
    private final DataSource listenDataSource;
    private final List<Thread> producers = new ArrayList<>();
    /** Producers writing queued outcomes right now (see {@link #completeQueued}); a stop does not interrupt them. */
    private final Set<Thread> producersCompleting = ConcurrentHashMap.newKeySet();

    public Dispatcher(DataSource dataSource, DispatcherConfig config, Map<String, MessageHandler> handlers,
                      ClaimGate gate, DispatcherListener listener) {
        this(dataSource, config, handlers, gate, listener, null);
    }

    /**
     * @param listenDataSource where the LISTEN session comes from, when it must not come from
     *                         {@code dataSource}: behind a transaction-mode pooler, a direct
     *                         connection to the server (a pooled "session" is not one). Null: from
     *                         {@code dataSource}, unless the config says {@link SessionSettings#TRANSACTION},
     *                         in which case the dispatcher polls and says so once.
     */
    public Dispatcher(DataSource dataSource, DispatcherConfig config, Map<String, MessageHandler> handlers,
                      ClaimGate gate, DispatcherListener listener, DataSource listenDataSource) {
        if (handlers.isEmpty()) {
            throw new IllegalArgumentException("handlers must name at least one topic");
        }
        this.config = config;
        this.handlers = Map.copyOf(handlers);
        this.gate = gate == null ? ClaimGate.OPEN : gate;
        this.listener = listener == null ? DispatcherListener.NONE : listener;
        this.clock = SqlClock.of(config.clock());
        this.sessions = new DispatcherSessions(dataSource, config.statementTimeout(), config.idleInTransactionTimeout(),
                config.sessionSettings());
        this.store = new OutboxStore(clock, config.backoff());
        this.completer = new Completer(sessions, store, config, this.listener, new Completer.Settlement() {
            @Override
            public void written(List<Completer.Pending> batch) {
                settled(batch);
            }

            @Override
            public void givenUp(Completer.Pending pending) {
                listener.finished(pending.claim().message, pending.outcome(), pending.took());
                leaveToLease(pending.claim());
            }
        });
        this.heartbeater = new Heartbeater(sessions, store, config, this.listener);
        this.interrupted = new InterruptedClaims(sessions, store, config, this.listener, incarnation);
        this.registration = new Registration(sessions, config, this.handlers.keySet(), incarnation);
        this.rescuer = new LeaseRescuer(sessions, store, config, this.listener);
        this.slots = new Semaphore(config.concurrency());
        this.listenDataSource = listenDataSource;
    }

    public Dispatcher(DataSource dataSource, DispatcherConfig config, Map<String, MessageHandler> handlers) {
        this(dataSource, config, handlers, ClaimGate.OPEN, DispatcherListener.NONE);
    }

    public DispatcherConfig config() {
        return config;
    }

    /** The id of this dispatcher's process among those of its worker id, stored on its claims. */
    public String incarnation() {
        return incarnation;
    }

    /**
     * The most sessions this runtime holds from its data source at once: one per claimer, one for
     * the completer, one held for good by LISTEN (when on) and one per maintenance thread. Handlers
     * are not counted: a handler that needs the database while it works should draw on a pool of its
     * own, so that a burst of handlers cannot take the sessions the completer needs to free them.
     */
    public static int sessionsNeeded(DispatcherConfig config) {
        return config.claimers() + 1 + (config.listenForNotifications() ? 1 : 0) + MAINTENANCE_THREADS;
    }

    // ---------------------------------------------------------------------------- lifecycle

    /** Starts the producer, completer, heartbeats, rescuer, pause polling and (if configured) LISTEN. */
    public synchronized void start() {
        if (running) {
            throw new IllegalStateException("dispatcher " + config.workerId() + " is already running");
        }
        running = true;
        claiming = true;
        handlerThreads = Executors.newThreadPerTaskExecutor(Thread.ofVirtual().name("mailroom-handler-", 0).factory());
        maintenance = Executors.newScheduledThreadPool(MAINTENANCE_THREADS, Thread.ofPlatform().name("mailroom-maintenance-", 0).daemon().factory());
        completer.start();
        schedule(this::heartbeatQuietly, config.heartbeatInterval());
        schedule(this::rescueQuietly, config.rescueInterval());
        schedule(this::refreshPausedQuietly, config.controlPollInterval());
        refreshPausedQuietly();
        // the claims an earlier process of this worker id held when it stopped: counted now, not after their lease
        maintenance.execute(this::interruptPredecessorsQuietly);
        maintenance.execute(this::registerQuietly);
        schedule(this::registerQuietly, config.heartbeatInterval());
        if (config.listenForNotifications()) {
            if (listenDataSource != null) {
                wakeUpListener = new WakeUpListener(listenDataSource, this::wake);
                wakeUpListener.start();
            } else if (config.sessionSettings() == SessionSettings.TRANSACTION) {
                // a LISTEN through a transaction-mode pooler lands on whichever server session is free
                // and is never heard again: poll instead of pretending
                log.warn("LISTEN is off: the sessions come through a transaction-mode pooler and no direct session was given"
                        + " for it (MAILROOM_LISTEN_DB_URL); new messages are found by polling every {}", config.pollInterval());
            } else {
                wakeUpListener = new WakeUpListener(sessions.dataSource(), this::wake);
                wakeUpListener.start();
            }
        }
        for (int i = 0; i < config.claimers(); i++) {
            producers.add(Thread.ofPlatform().name("mailroom-producer-" + i).start(this::produce));
        }
        log.info("Dispatcher {} started: topics {}, batch {}, concurrency {}, claimers {}, lease {}", config.workerId(),
                handlers.keySet(), config.batchSize(), config.concurrency(), config.claimers(), config.lease());
    }

    /** Graceful stop; see the class comment. Safe to call more than once. */
    public synchronized void stop() {
        if (!running) {
            return;
        }
        long deadline = System.nanoTime() + config.shutdownDeadline().toNanos();
        claiming = false;
        wake();
        for (Thread p : producers) {
            // a producer writing outcomes is let finish: an interrupt would cut its connection retries short
            if (!producersCompleting.contains(p)) {
                p.interrupt();
            }
            joinQuietly(p, Duration.ofSeconds(5));
        }
        producers.clear();
        if (wakeUpListener != null) {
            wakeUpListener.stop();
        }
        // Let running handlers finish and their outcomes be written, up to the deadline.
        while (!inFlight.isEmpty() && System.nanoTime() < deadline) {
            try {
                Thread.sleep(20);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                break;
            }
        }
        // Handlers without an outcome are taken back and interrupted; a claim whose outcome is queued
        // stays the completer's, which writes it before anything is handed back.
        List<InFlight> unfinished = new ArrayList<>();
        for (InFlight f : inFlight.values()) {
            if (f.handBack()) {
                unfinished.add(f);
                Thread t = f.thread;
                if (t != null) {
                    t.interrupt();
                }
            }
        }
        completer.stop(Duration.ofSeconds(5));
        if (!unfinished.isEmpty()) {
            handBack(unfinished);
        }
        maintenance.shutdownNow();
        registration.remove();
        handlerThreads.shutdownNow();
        running = false;
        log.info("Dispatcher {} stopped ({} claims handed back)", config.workerId(), unfinished.size());
    }

    @Override
    public void close() {
        stop();
    }

    public boolean isRunning() {
        return running;
    }

    /** Claims currently held by this instance (handlers running or outcomes not yet written). */
    public int inFlightCount() {
        return inFlight.size();
    }

    /** Wakes the producers now (as a notification would). */
    public void wake() {
        int missing = config.claimers() - wakeSignal.availablePermits();
        if (missing > 0) {
            wakeSignal.release(missing); // one for each producer; at most one each, so wake-ups coalesce
        }
    }

    // ------------------------------------------------------------------- single steps (tests, tools)

    /**
     * One deterministic step on the caller's thread: claims up to a batch, runs the handlers one after
     * the other and writes their outcomes. Returns how many messages were claimed.
     */
    public int runOnce() {
        List<InFlight> held = claimRound(config.batchSize(), false);
        Map<String, SharedRound<?>> rounds = sharedRounds(held);
        List<InFlight> sharing = new ArrayList<>();
        for (InFlight f : held) {
            if (rounds.containsKey(f.message.topic())) {
                sharing.add(f); // below: each round's messages meet at the shared step, so each needs its thread
                continue;
            }
            Completer.Pending pending = handle(f, null);
            if (pending != null) {
                completer.writeWithFallback(List.of(pending));
            }
        }
        if (!sharing.isEmpty()) {
            List<Completer.Pending> outcomes = java.util.Collections.synchronizedList(new ArrayList<>());
            List<Thread> threads = new ArrayList<>(sharing.size());
            for (InFlight f : sharing) {
                threads.add(Thread.ofVirtual().name("mailroom-handler-once").start(() -> {
                    Completer.Pending pending = handle(f, rounds.get(f.message.topic()));
                    if (pending != null) {
                        outcomes.add(pending);
                    }
                }));
            }
            threads.forEach(t -> joinQuietly(t, Duration.ofDays(1)));
            if (!outcomes.isEmpty()) {
                completer.writeWithFallback(List.copyOf(outcomes)); // one batch, as the completer would
            }
        }
        return held.size();
    }

    /** One pass of the lease rescuer; returns how many messages it returned. */
    public int rescueOnce() {
        return rescuer.rescue();
    }

    /** One heartbeat over the claims held; returns how many were found lost. */
    public int heartbeatOnce() {
        return heartbeater.beat(inFlight.values());
    }

    // ---------------------------------------------------------------------------------- producer

    private void produce() {
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
                if (!claiming) { // read after leaving producersCompleting: a stop from now on interrupts
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
                    claimed = claimRound(want, true);
                } catch (RuntimeException e) {
                    slots.release(want);
                    listener.error("claim", e);
                    log.warn("Claim failed (SQLSTATE {}): {}; retrying after the poll interval",
                            SqlStates.sqlState(e), e.getMessage());
                    sleep(config.pollInterval());
                    continue;
                }
                slots.release(want - claimed.size());
                Map<String, SharedRound<?>> rounds = sharedRounds(claimed);
                for (int i = 0; i < claimed.size(); i++) {
                    InFlight f = claimed.get(i);
                    SharedRound<?> round = rounds.get(f.message.topic());
                    try {
                        handlerThreads.execute(() -> {
                            Completer.Pending pending = handle(f, round);
                            if (pending != null) {
                                completer.submit(pending);
                            }
                        });
                    } catch (RuntimeException e) {
                        // the rest stay in flight until a stop hands them back; their round must not wait for them
                        for (InFlight rest : claimed.subList(i, claimed.size())) {
                            SharedRound<?> r = rounds.get(rest.message.topic());
                            if (r != null) {
                                r.skip();
                            }
                        }
                        throw e;
                    }
                }
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
        producersCompleting.add(me); // before reading claiming: stop() reads them the other way round
        try {
            return claiming && completer.writeQueued();
        } finally {
            producersCompleting.remove(me);
        }
    }

    /**
     * One claim round: claims up to {@code want} and puts every claim in flight before the round is
     * over. Until then its committed claims are in no other place, so the orphan check leaves alone
     * every claim a running round may have made, however slow the round is (see
     * {@link #releaseOrphanedClaims}).
     */
    private List<InFlight> claimRound(int want, boolean holdsSlots) {
        long round = lastClaimRound.incrementAndGet();
        claimRoundsRunning.add(round); // before its first claim transaction begins
        try {
            List<ClaimedMessage> claimed = claim(want);
            List<InFlight> held = new ArrayList<>(claimed.size());
            for (ClaimedMessage m : claimed) {
                InFlight f = new InFlight(m);
                f.holdsSlot = holdsSlots;
                inFlight.put(m.id(), f);
                held.add(f);
            }
            return held;
        } finally {
            claimRoundsRunning.remove(round);
        }
    }

    private List<ClaimedMessage> claim(int want) {
        Set<String> pausedNow = paused;
        if (pausedNow.contains("*")) {
            return List.of();
        }
        List<String> unlimited = new ArrayList<>();
        List<ClaimedMessage> claimed = new ArrayList<>();
        for (String topic : handlers.keySet()) {
            if (pausedNow.contains(topic)) {
                continue;
            }
            int limit = gate.claimLimit(topic);
            if (limit == Integer.MAX_VALUE) {
                unlimited.add(topic);
            } else if (limit > 0 && claimed.size() < want) {
                claimed.addAll(claimTopics(List.of(topic), Math.min(limit, want - claimed.size())));
            }
        }
        if (!unlimited.isEmpty() && claimed.size() < want) {
            claimed.addAll(claimTopics(unlimited, want - claimed.size()));
        }
        return claimed;
    }

    private List<ClaimedMessage> claimTopics(Collection<String> topics, int limit) {
        long started = System.nanoTime();
        List<ClaimedMessage> claimed = sessions.inTransaction(tx ->
                store.claim(tx, config.workerId(), incarnation, limit, topics, config.lease(), config.orderingKeys()));
        listener.claimed(limit, claimed.size(), Duration.ofNanos(System.nanoTime() - started));
        return claimed;
    }

    // ---------------------------------------------------------------------------------- executor

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
            release(f);
            return null;
        }
        return pending(f, outcome, started);
    }

    private Completer.Pending pending(InFlight f, Outcome outcome, long startedNanos) {
        ClaimedMessage m = f.message;
        OutboxStore.Finish finish = switch (outcome) {
            case Outcome.Done d -> new OutboxStore.Finish(m, "done", null, null, d.detail(), clock.instant());
            case Outcome.RetryLater r -> new OutboxStore.Finish(m, "retry", r.error(),
                    r.after() != null ? r.after() : config.backoff().delay(m.attempt()), r.detail(), clock.instant());
            case Outcome.Failed x -> new OutboxStore.Finish(m, "failed", x.reason(), null, x.detail(), clock.instant());
            case Outcome.Review v -> new OutboxStore.Finish(m, "review", v.reason(), null, v.detail(), clock.instant());
            case Outcome.NotAttempted x -> new OutboxStore.Finish(m, "release", x.reason(), x.after(), x.detail(), clock.instant(),
                    x.waitingFor());
        };
        Duration took = Duration.ofNanos(System.nanoTime() - startedNanos);
        return new Completer.Pending(finish, outcome.alsoInTransaction(), f, finish.kind(), took);
    }

    /** Outcomes written: the claims leave flight and their slots come back, all of the batch at once. */
    private void settled(List<Completer.Pending> batch) {
        int freed = 0;
        for (Completer.Pending p : batch) {
            InFlight f = p.claim();
            listener.finished(f.message, p.outcome(), p.took());
            if (inFlight.remove(f.message.id(), f) && f.holdsSlot) {
                freed++;
            }
        }
        if (freed > 0) {
            slots.release(freed);
        }
    }

    /**
     * The completer gave up writing the outcome, though the handler ran (the email may be sent): the
     * claim is neither handed back nor an orphan, it stays running with its attempt counted until
     * the lease expires, so the next attempt sees an unknown outcome instead of "never handled".
     */
    private void leaveToLease(InFlight f) {
        leftToLease.put(f.message.id(), f.message); // before it leaves inFlight: never in neither
        release(f);
    }

    private void release(InFlight f) {
        if (inFlight.remove(f.message.id(), f) && f.holdsSlot) {
            slots.release();
        }
    }

    /** Graceful stop: hands back (fenced) the claims it took from their handlers ({@link InFlight#handBack}). */
    private void handBack(List<InFlight> unfinished) {
        List<ClaimedMessage> messages = unfinished.stream().map(f -> f.message).toList();
        try {
            int released = releaseClaims(messages, "dispatcher stopped before the handler finished",
                    AttemptDetail.RELEASE_STOPPING);
            log.info("Handed {} unfinished claims back to the queue", released);
        } catch (RuntimeException e) {
            log.error("Could not hand back {} claims; their leases will expire and the rescuer will return them",
                    messages.size(), e);
        }
        unfinished.forEach(this::release);
    }

    /** Hands claims back (fenced; attempt not counted) with their effects and a "released" attempt row. */
    private int releaseClaims(List<ClaimedMessage> messages, String why, String release) {
        return sessions.inTransaction(tx -> {
            List<OutboxStore.ChangedRow> rows = store.release(tx, messages);
            store.updateEffects(tx, rows);
            if (config.recordAttempts()) {
                Instant now = clock.instant();
                store.insertAttempts(tx, rows.stream().map(r -> new OutboxStore.AttemptRow(r.idempotencyKey(),
                        r.id(), r.attempts() + 1, r.claimVersion(), config.workerId(), r.claimedAt(), now,
                        "released", why, AttemptDetail.released(null, release))).toList());
            }
            return rows.size();
        });
    }

    /**
     * Returns this dispatcher's orphaned claims to the queue: rows it claimed (its worker id and incarnation) that
     * are running but in none of the places a live claim is (see the class comment). They come from
     * a claim whose COMMIT went through while the session was being killed, so the claimer saw an
     * error and never ran them; without this they would wait for their lease. Claims younger than
     * {@link #ORPHAN_GRACE} are left alone. A claim seen outside {@link #inFlight} is judged only
     * once every claim round that may have made it is over (a round puts its claims in flight
     * before it ends, but it claims topic after topic, each in its own transaction, so its first
     * claims are committed and visible while it is still claiming, for as long as that takes).
     * Returns how many were released.
     */
    public int releaseOrphanedClaims() {
        List<ClaimedMessage> orphans = new ArrayList<>();
        synchronized (orphanCheck) {
            List<ClaimedMessage> running = sessions.inTransaction(tx -> {
                forgetSettledLeftToLease(tx);
                return store.ownRunning(tx, config.workerId(), incarnation, ORPHAN_GRACE, config.rescuePageSize());
            });
            // Read after the query: a round that committed a row the query saw had its number by then.
            // A round counted here but not yet in claimRoundsRunning has not begun claiming.
            long lastRound = lastClaimRound.get();
            Long oldestRunningRound = claimRoundsRunning.ceiling(Long.MIN_VALUE);
            Map<Long, Suspect> stillSuspect = new HashMap<>();
            for (ClaimedMessage m : running) {
                // inFlight first: a claim enters leftToLease before it leaves inFlight
                if (inFlight.containsKey(m.id()) || isLeftToLease(m)) {
                    continue;
                }
                Suspect seen = suspects.get(m.id());
                if (seen == null || seen.claimVersion() != m.claimVersion()) {
                    seen = new Suspect(m.claimVersion(), lastRound);
                }
                if (oldestRunningRound == null || oldestRunningRound > seen.lastRoundBefore()) {
                    orphans.add(m);
                } else {
                    stillSuspect.put(m.id(), seen);
                }
            }
            suspects.clear();
            suspects.putAll(stillSuspect);
        }
        if (orphans.isEmpty()) {
            return 0;
        }
        int released = releaseClaims(orphans, "claim committed while its session was lost; never handled",
                AttemptDetail.RELEASE_ORPHANED);
        if (released > 0) {
            log.warn("Returned {} orphaned claims of {} to the queue (their claim's commit outcome was unknown)",
                    released, config.workerId());
            wake();
        }
        return released;
    }

    /**
     * Ends the running claims of this worker id that another process made: the process before this
     * one under the same id (a StatefulSet pod, a systemd unit with a fixed worker id), which stopped
     * while holding them (killed, crashed, out of memory). Nobody is working on them, but their
     * handler may have run, even to the provider: unlike an orphan of this process's own (whose
     * claim committed while the claimer saw an error, so no handler ever ran), the attempt is
     * counted, as an expired lease's is, and recorded as {@code interrupted}, so a message that kills
     * its process every time ends failed after its attempt limit instead of crashing the fleet
     * forever. Runs once at start and with each rescue. Returns how many claims it ended.
     */
    public int interruptPredecessorsClaims() {
        int ended = interrupted.end();
        if (ended > 0) {
            wake();
        }
        return ended;
    }

    private void interruptPredecessorsQuietly() {
        try {
            interruptPredecessorsClaims();
        } catch (RuntimeException e) {
            listener.error("rescue", e);
            log.warn("Could not end the claims of an earlier process of {} (SQLSTATE {}); retrying with the next rescue",
                    config.workerId(), SqlStates.sqlState(e));
        }
    }

    /** A claim seen outside flight: by the time it was first seen, the claim rounds up to this number had begun. */
    private record Suspect(long claimVersion, long lastRoundBefore) {
    }

    private boolean isLeftToLease(ClaimedMessage m) {
        ClaimedMessage left = leftToLease.get(m.id());
        return left != null && left.claimVersion() == m.claimVersion();
    }

    /** Forgets the claims left to their lease that are no longer running under that claim (rescued, or changed by a person). */
    private void forgetSettledLeftToLease(DSLContext tx) {
        if (leftToLease.isEmpty()) {
            return;
        }
        List<ClaimedMessage> left = List.copyOf(leftToLease.values());
        Set<Long> stillRunning = store.stillClaimed(tx, left);
        for (ClaimedMessage m : left) {
            if (!stillRunning.contains(m.id())) {
                leftToLease.remove(m.id(), m);
            }
        }
    }

    // ------------------------------------------------------------------------------ maintenance

    private void schedule(Runnable task, Duration every) {
        long millis = every.toMillis();
        long initial = ThreadLocalRandom.current().nextLong(Math.max(1, millis));
        maintenance.scheduleWithFixedDelay(task, initial, millis, TimeUnit.MILLISECONDS);
    }

    private void heartbeatQuietly() {
        try {
            heartbeater.beat(inFlight.values());
        } catch (RuntimeException e) {
            listener.error("heartbeat", e);
            log.warn("Heartbeat failed (SQLSTATE {}); retrying at the next interval", SqlStates.sqlState(e));
        }
    }

    private void rescueQuietly() {
        try {
            rescuer.rescue();
            interruptPredecessorsClaims();
            releaseOrphanedClaims();
        } catch (RuntimeException e) {
            listener.error("rescue", e);
            log.warn("Lease rescue failed (SQLSTATE {}); retrying at the next interval", SqlStates.sqlState(e));
        }
    }

    private void registerQuietly() {
        try {
            registration.beat();
        } catch (RuntimeException e) {
            listener.error("registry", e);
            log.warn("Could not update the dispatcher registry (SQLSTATE {}); retrying at the next heartbeat",
                    SqlStates.sqlState(e));
        }
    }

    private void refreshPausedQuietly() {
        try {
            Set<String> now = sessions.inTransaction(store::pausedScopes);
            if (!now.equals(paused)) {
                log.info("Pause switches changed: {}", now.isEmpty() ? "none paused" : now);
                paused = Set.copyOf(now);
                if (now.isEmpty()) {
                    wake();
                }
            }
        } catch (RuntimeException e) {
            listener.error("control", e);
            log.warn("Could not read pause switches (SQLSTATE {}); keeping the last known", SqlStates.sqlState(e));
        }
    }

    private void sleep(Duration max) throws InterruptedException {
        long millis = max.toMillis();
        long jitter = (long) (millis * config.pollJitter() * ThreadLocalRandom.current().nextDouble());
        wakeSignal.tryAcquire(Math.max(1, millis - jitter), TimeUnit.MILLISECONDS);
    }

    private static void joinQuietly(Thread t, Duration max) {
        if (t == null) {
            return;
        }
        try {
            t.join(max.toMillis());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
