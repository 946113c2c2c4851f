package io.mailroom.outbox.runtime;

import io.mailroom.outbox.DispatcherSessions;
import io.mailroom.outbox.SessionSettings;
import io.mailroom.db.sql.SqlClock;
import io.mailroom.db.sql.SqlStates;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import javax.sql.DataSource;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;

/**
 * The runtime operators run, and its lifecycle: wires one part per role and starts and stops them.
 * The {@link Producer} claims messages for the topics it has handlers for, never more than the free
 * handler slots; the {@link HandlerExecutor} runs each handler on a virtual thread after the claim
 * has committed; the {@link Completer} writes the outcomes; the {@link ClaimLedger} knows which
 * claims this process holds; {@link HandBack} returns the claims nobody will finish. On a
 * maintenance schedule it keeps leases alive ({@link Heartbeater}), returns expired ones
 * ({@link LeaseRescuer}) and orphaned ones, and honours the pause switches in {@code outbox_control}.
 *
 * <p>{@link #stop()} is graceful: no new claims, running handlers get until the shutdown deadline,
 * then the handlers that still have no outcome are interrupted, the outcomes already queued are
 * written, and only the claims without an outcome are handed back to the queue (pending, attempt
 * not counted), so nothing waits for a lease to expire and no finished send is fenced out.
 */
public final class Dispatcher implements AutoCloseable {

    private static final Logger log = LoggerFactory.getLogger(Dispatcher.class);
    /** Threads of the maintenance scheduler (heartbeat, rescue, pause polling), one session each at most. */
    static final int MAINTENANCE_THREADS = 2;
    /** How long a stop waits, after the handlers' deadline, for each kind of writer of outcomes to finish. */
    static final Duration WRITERS_GRACE = Duration.ofSeconds(5);

    private final DispatcherConfig config;
    private final Set<String> topics;
    private final DispatcherListener listener;
    private final DispatcherSessions sessions;
    private final OutboxStore store;
    private final Completer completer;
    private final Heartbeater heartbeater;
    private final InterruptedClaims interrupted;
    private final Registration registration;
    private final LeaseRescuer rescuer;
    private final ClaimLedger ledger;
    private final HandlerExecutor executor;
    private final Producer producer;
    private final HandBack handBack;
    /**
     * This process's claims among those of its worker id: a random id stored on every claim it
     * makes ({@code claimed_incarnation}), so that a successor started under the same worker id
     * tells the claims of the process that stopped from its own (see {@link #interruptPredecessorsClaims}).
     */
    private final String incarnation = java.util.UUID.randomUUID().toString();
    private volatile boolean running;

    private ScheduledExecutorService maintenance;
    private WakeUpListener wakeUpListener;
    private final DataSource listenDataSource;

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
        Map<String, MessageHandler> ownHandlers = Map.copyOf(handlers);
        this.config = config;
        this.topics = ownHandlers.keySet();
        this.listener = listener == null ? DispatcherListener.NONE : listener;
        SqlClock clock = SqlClock.of(config.clock());
        this.sessions = new DispatcherSessions(dataSource, config.statementTimeout(), config.idleInTransactionTimeout(),
                config.sessionSettings());
        this.store = new OutboxStore(clock, config.backoff());
        this.ledger = new ClaimLedger(sessions, store, config, this.listener, incarnation);
        this.completer = new Completer(sessions, store, config, this.listener, new Completer.Settlement() {
            @Override
            public void written(List<Completer.Pending> batch) {
                ledger.settled(batch);
            }

            @Override
            public void givenUp(Completer.Pending pending) {
                Dispatcher.this.listener.finished(pending.claim().message, pending.outcome(), pending.took());
                ledger.leaveToLease(pending.claim());
            }
        });
        this.executor = new HandlerExecutor(ownHandlers, config, clock, this.listener, ledger, completer);
        this.producer = new Producer(config, topics, gate == null ? ClaimGate.OPEN : gate, this.listener, sessions,
                store, incarnation, ledger, completer, executor);
        this.handBack = new HandBack(sessions, store, config, clock, ledger);
        this.heartbeater = new Heartbeater(sessions, store, config, this.listener);
        this.interrupted = new InterruptedClaims(sessions, store, config, this.listener, incarnation);
        this.registration = new Registration(sessions, config, topics, incarnation, ledger::inFlightCount);
        this.rescuer = new LeaseRescuer(sessions, store, config, this.listener);
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
        executor.start();
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
                wakeUpListener = new WakeUpListener(listenDataSource, this::wake, this::wakesFor);
                wakeUpListener.start();
            } else if (config.sessionSettings() == SessionSettings.TRANSACTION) {
                // a LISTEN through a transaction-mode pooler lands on whichever server session is free
                // and is never heard again: poll instead of pretending
                log.warn("LISTEN is off: the sessions come through a transaction-mode pooler and no direct session was given"
                        + " for it (MAILROOM_LISTEN_DB_URL); new messages are found by polling every {}", config.pollInterval());
            } else {
                wakeUpListener = new WakeUpListener(sessions.dataSource(), this::wake, this::wakesFor);
                wakeUpListener.start();
            }
        }
        producer.start();
        log.info("Dispatcher {} started: topics {}, batch {}, concurrency {}, claimers {}, lease {}", config.workerId(),
                topics, config.batchSize(), config.concurrency(), config.claimers(), config.lease());
    }

    /** Graceful stop; see the class comment. Safe to call more than once. */
    public synchronized void stop() {
        if (!running) {
            return;
        }
        long deadline = System.nanoTime() + config.shutdownDeadline().toNanos();
        producer.stopClaiming();
        producer.awaitClaimsEnded(WRITERS_GRACE);
        if (wakeUpListener != null) {
            wakeUpListener.stop();
        }
        // Let running handlers finish and their outcomes be written, up to the deadline.
        while (ledger.inFlightCount() > 0 && System.nanoTime() < deadline) {
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
        for (InFlight f : ledger.inFlight()) {
            if (f.handBack()) {
                unfinished.add(f);
                Thread t = f.thread;
                if (t != null) {
                    t.interrupt();
                }
            }
        }
        // A producer may be writing a batch of outcomes (a claimer short of slots does): like the
        // completer's, it is written before anything is handed back and before stop returns.
        if (!producer.awaitEnd(WRITERS_GRACE)) {
            log.warn("Dispatcher {}: a claimer was still writing outcomes {} after the handlers' deadline; stopping"
                    + " without it (its writes are fenced; claims it never records are rescued when their leases expire)", config.workerId(), WRITERS_GRACE);
        }
        completer.stop(WRITERS_GRACE);
        if (!unfinished.isEmpty()) {
            handBack.unfinished(unfinished);
        }
        maintenance.shutdownNow();
        registration.remove();
        executor.stop();
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

    /**
     * What this dispatcher reports about itself in the registry ({@code outbox_dispatcher.details})
     * at every heartbeat, beside who it is, what it serves and the claims it holds: the text of a
     * JSON object of at most 4 KB, or null for nothing. The supplier is called on the maintenance
     * thread, so it must be quick; outbox-core stores the text without reading it (the email
     * service reports its transports' breaker states). Details it cannot store are left out of the
     * row, with a warning, never the row. May be set before or after {@link #start()}.
     */
    public Dispatcher registrationDetails(java.util.function.Supplier<String> json) {
        registration.details(json);
        return this;
    }

    /** Claims currently held by this instance (handlers running or outcomes not yet written). */
    public int inFlightCount() {
        return ledger.inFlightCount();
    }

    /** Whether a notification for {@code topic} wakes this dispatcher: one of its topics, not paused. */
    boolean wakesFor(String topic) {
        return producer.claimsNow(topic);
    }

    /** Wakes the producers now (as a notification would). */
    public void wake() {
        producer.wake();
    }

    // ------------------------------------------------------------------- single steps (tests, tools)

    /**
     * One deterministic step on the caller's thread: claims up to a batch, runs the handlers one after
     * the other and writes their outcomes. Returns how many messages were claimed.
     */
    public int runOnce() {
        return runOnce(ClaimMarks.none());
    }

    /** {@link #runOnce()} with its claims starting where {@code marks} say (as a claimer's do). */
    int runOnce(ClaimMarks marks) {
        List<InFlight> held = producer.claimRound(config.batchSize(), false, marks);
        executor.runInline(held);
        return held.size();
    }

    /** One pass of the lease rescuer; returns how many messages it returned. */
    public int rescueOnce() {
        return rescuer.rescue();
    }

    /** One heartbeat over the claims held; returns how many were found lost. */
    public int heartbeatOnce() {
        return heartbeater.beat(ledger.inFlight());
    }

    /**
     * Returns this dispatcher's orphaned claims to the queue (see {@link ClaimLedger#orphans}):
     * without this they would wait for their lease. Returns how many were released.
     */
    public int releaseOrphanedClaims() {
        int released = handBack.orphans();
        if (released > 0) {
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

    // ------------------------------------------------------------------------------ maintenance

    private void schedule(Runnable task, Duration every) {
        long millis = every.toMillis();
        long initial = ThreadLocalRandom.current().nextLong(Math.max(1, millis));
        maintenance.scheduleWithFixedDelay(task, initial, millis, TimeUnit.MILLISECONDS);
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

    private void heartbeatQuietly() {
        try {
            heartbeater.beat(ledger.inFlight());
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
            Set<String> now = sessions.inTransaction(store.control()::pausedScopes);
            if (!now.equals(producer.paused())) {
                log.info("Pause switches changed: {}", now.isEmpty() ? "none paused" : now);
                producer.paused(now);
                if (now.isEmpty()) {
                    wake();
                }
            }
        } catch (RuntimeException e) {
            listener.error("control", e);
            log.warn("Could not read pause switches (SQLSTATE {}); keeping the last known", SqlStates.sqlState(e));
        }
    }

    static void joinQuietly(Thread t, Duration max) {
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
