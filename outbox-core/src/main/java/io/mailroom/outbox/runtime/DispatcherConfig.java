package io.mailroom.outbox.runtime;

import io.mailroom.outbox.Checks;
import io.mailroom.outbox.SessionSettings;
import java.lang.management.ManagementFactory;
import java.time.Clock;
import java.time.Duration;
import java.util.Objects;
import java.util.concurrent.ThreadLocalRandom;

/**
 * Immutable settings of a {@link Dispatcher}. Build with {@link #builder()}; {@link Builder#build()}
 * rejects bad or conflicting values with a message naming the setting, and never clamps silently.
 */
public record DispatcherConfig(
        String workerId,
        int batchSize,
        int concurrency,
        int claimers,
        Duration lease,
        Duration heartbeatInterval,
        Duration pollInterval,
        double pollJitter,
        Backoff backoff,
        Duration rescueInterval,
        int rescuePageSize,
        Duration shutdownDeadline,
        boolean listenForNotifications,
        boolean recordAttempts,
        int completionBatchSize,
        Duration statementTimeout,
        Duration idleInTransactionTimeout,
        Duration controlPollInterval,
        boolean orderingKeys,
        Duration claimLinger,
        Duration completionLinger,
        Duration fullScanInterval,
        Duration markLookback,
        SessionSettings sessionSettings,
        Clock clock) {

    public static final int DEFAULT_BATCH_SIZE = 50;
    public static final int DEFAULT_CONCURRENCY = 32;
    /**
     * Two: one claim's commit (a WAL flush) overlaps the other claim, which at small batch sizes
     * nearly doubles what one dispatcher can claim; the same as two instances, within one.
     */
    public static final int DEFAULT_CLAIMERS = 2;
    public static final Duration DEFAULT_LEASE = Duration.ofSeconds(60);
    public static final Duration DEFAULT_POLL_INTERVAL = Duration.ofSeconds(1);
    public static final double DEFAULT_POLL_JITTER = 0.25;
    public static final Duration DEFAULT_RESCUE_INTERVAL = Duration.ofSeconds(5);
    public static final int DEFAULT_RESCUE_PAGE_SIZE = 500;
    public static final Duration DEFAULT_SHUTDOWN_DEADLINE = Duration.ofSeconds(30);
    public static final int DEFAULT_COMPLETION_BATCH_SIZE = 500;
    public static final Duration DEFAULT_STATEMENT_TIMEOUT = Duration.ofSeconds(10);
    public static final Duration DEFAULT_IDLE_IN_TRANSACTION_TIMEOUT = Duration.ofSeconds(30);
    public static final Duration DEFAULT_CONTROL_POLL_INTERVAL = Duration.ofSeconds(2);
    /**
     * How long a claimer with fewer than half a batch of free slots waits for more before claiming
     * what it has. Without it, a busy dispatcher whose slots come back a few at a time claims a few
     * messages at a time (a measured drain averaged three per claim), and everything paid per claim
     * (the claim, the email path's batch reservation, the completion) is paid per few messages.
     * Measured on the dispatcher-only HTTP drain (2 cores, loaded): 10 ms gave 0.74 commits per
     * email, 50 ms 0.34. A slow provider loses at most this long of some slots per claim; a quiet
     * dispatcher never waits (it has more than half a batch free).
     */
    public static final Duration DEFAULT_CLAIM_LINGER = Duration.ofMillis(50);
    /**
     * How long the completer, holding a batch of outcomes, waits for the ones still arriving (it
     * stops at the first millisecond without one): the sends of one claim end nearly together, and
     * writing them in one transaction instead of three is a third of the commits.
     */
    public static final Duration DEFAULT_COMPLETION_LINGER = Duration.ofMillis(5);
    /**
     * How often each claimer's claims reach below its low-water mark at least; in between, they
     * start from the mark, the lowest (available_at, id) its last claim took ({@code ClaimMarks}).
     * While a long transaction holds the xmin horizon, a claim from the head of the claim index
     * walks the index entries of every row claimed since (VACUUM cannot remove them), and its cost
     * grows with the hold's age; from the mark it walks only what was claimed since its last claim.
     * A row that appears below a mark (an enqueue that committed late, a message rescheduled
     * earlier, an ordering key's follower) waits for the next claim that reaches below it: at most
     * this long when it lies within {@link #DEFAULT_MARK_LOOKBACK markLookback} of the mark, at most
     * {@value ClaimMarks#HEAD_EVERY} times this long in any case.
     */
    public static final Duration DEFAULT_FULL_SCAN_INTERVAL = Duration.ofSeconds(1);
    /** The longest {@code fullScanInterval}. */
    public static final Duration MAX_FULL_SCAN_INTERVAL = Duration.ofMinutes(1);
    /**
     * How far below the mark (in available_at) the claim that reaches below it every {@code
     * fullScanInterval} starts, rather than at the head of the claim index (which one claim in
     * {@value ClaimMarks#HEAD_EVERY} still does). An enqueue's available_at is its transaction's
     * start, so a row that committed late lands below the mark by about its transaction's length:
     * five seconds covers the business transactions that enqueue, and bounds what such a claim
     * walks while the xmin horizon is held to five seconds of traffic.
     */
    public static final Duration DEFAULT_MARK_LOOKBACK = Duration.ofSeconds(5);
    /** The longest {@code markLookback}. */
    public static final Duration MAX_MARK_LOOKBACK = Duration.ofHours(1);
    /** The most either linger may be: each delays a message's progress by as much. */
    public static final Duration MAX_LINGER = Duration.ofSeconds(1);

    public DispatcherConfig {
        Objects.requireNonNull(workerId, "workerId");
        Objects.requireNonNull(backoff, "backoff");
        Objects.requireNonNull(sessionSettings, "sessionSettings");
    }

    public static Builder builder() {
        return new Builder();
    }

    /** A builder holding this configuration's values. */
    public Builder toBuilder() {
        Builder b = new Builder();
        b.workerId = workerId;
        b.batchSize = batchSize;
        b.concurrency = concurrency;
        b.claimers = claimers;
        b.lease = lease;
        b.heartbeatInterval = heartbeatInterval;
        b.pollInterval = pollInterval;
        b.pollJitter = pollJitter;
        b.backoff = backoff;
        b.rescueInterval = rescueInterval;
        b.rescuePageSize = rescuePageSize;
        b.shutdownDeadline = shutdownDeadline;
        b.listenForNotifications = listenForNotifications;
        b.recordAttempts = recordAttempts;
        b.completionBatchSize = completionBatchSize;
        b.statementTimeout = statementTimeout;
        b.idleInTransactionTimeout = idleInTransactionTimeout;
        b.controlPollInterval = controlPollInterval;
        b.orderingKeys = orderingKeys;
        b.claimLinger = claimLinger;
        b.completionLinger = completionLinger;
        b.fullScanInterval = fullScanInterval;
        b.markLookback = markLookback;
        b.sessionSettings = sessionSettings;
        b.clock = clock;
        return b;
    }

    /** Default worker id: host, process id and a random suffix, unique per dispatcher instance. */
    public static String defaultWorkerId() {
        String host;
        try {
            host = java.net.InetAddress.getLocalHost().getHostName();
        } catch (java.net.UnknownHostException e) {
            host = "host";
        }
        return host + "-" + ManagementFactory.getRuntimeMXBean().getPid() + "-"
                + Integer.toHexString(ThreadLocalRandom.current().nextInt(0x10000));
    }

    public static final class Builder {
        private String workerId;
        private int batchSize = DEFAULT_BATCH_SIZE;
        private int concurrency = DEFAULT_CONCURRENCY;
        private int claimers = DEFAULT_CLAIMERS;
        private Duration lease = DEFAULT_LEASE;
        private Duration heartbeatInterval;
        private Duration pollInterval = DEFAULT_POLL_INTERVAL;
        private double pollJitter = DEFAULT_POLL_JITTER;
        private Backoff backoff = Backoff.DEFAULT;
        private Duration rescueInterval = DEFAULT_RESCUE_INTERVAL;
        private int rescuePageSize = DEFAULT_RESCUE_PAGE_SIZE;
        private Duration shutdownDeadline = DEFAULT_SHUTDOWN_DEADLINE;
        private boolean listenForNotifications = true;
        private boolean recordAttempts = true;
        private int completionBatchSize = DEFAULT_COMPLETION_BATCH_SIZE;
        private Duration statementTimeout = DEFAULT_STATEMENT_TIMEOUT;
        private Duration idleInTransactionTimeout = DEFAULT_IDLE_IN_TRANSACTION_TIMEOUT;
        private boolean idleInTransactionTimeoutSet;
        private Duration controlPollInterval = DEFAULT_CONTROL_POLL_INTERVAL;
        private boolean orderingKeys = true;
        private Duration claimLinger = DEFAULT_CLAIM_LINGER;
        private Duration completionLinger = DEFAULT_COMPLETION_LINGER;
        private Duration fullScanInterval = DEFAULT_FULL_SCAN_INTERVAL;
        private Duration markLookback = DEFAULT_MARK_LOOKBACK;
        private SessionSettings sessionSettings = SessionSettings.SESSION;
        private Clock clock;

        private Builder() {
        }

        /** Names this instance in {@code claimed_by}; default host-pid-random. */
        public Builder workerId(String v) { this.workerId = v; return this; }
        /** Most messages one claim takes (1..1000). */
        public Builder batchSize(int v) { this.batchSize = v; return this; }
        /** Handlers running at once; the claimer never takes more than the free slots. */
        public Builder concurrency(int v) { this.concurrency = v; return this; }

        /** Producer threads claiming at once (each in its own short transaction); 1..16. */
        public Builder claimers(int v) { this.claimers = v; return this; }
        /** How long a claim holds without a heartbeat. */
        public Builder lease(Duration v) { this.lease = v; return this; }
        /** How often leases of running handlers are extended; default a third of the lease. */
        public Builder heartbeatInterval(Duration v) { this.heartbeatInterval = v; return this; }
        /** Longest sleep after a claim found nothing (a wake-up cuts it short). */
        public Builder pollInterval(Duration v) { this.pollInterval = v; return this; }
        /** Random share taken off each poll sleep (0..1). */
        public Builder pollJitter(double v) { this.pollJitter = v; return this; }
        public Builder backoff(Backoff v) { this.backoff = v; return this; }
        /** How often expired leases are looked for. */
        public Builder rescueInterval(Duration v) { this.rescueInterval = v; return this; }
        /** Most rows one rescue statement returns to the queue. */
        public Builder rescuePageSize(int v) { this.rescuePageSize = v; return this; }
        /** How long a graceful stop lets running handlers finish before handing their leases back. */
        public Builder shutdownDeadline(Duration v) { this.shutdownDeadline = v; return this; }
        /** LISTEN for enqueue notifications (polling continues as the fallback). */
        public Builder listenForNotifications(boolean v) { this.listenForNotifications = v; return this; }
        /** Append every finished attempt to {@code outbox_attempt} (the support timeline). */
        public Builder recordAttempts(boolean v) { this.recordAttempts = v; return this; }
        /** Most outcomes written in one completion transaction. */
        public Builder completionBatchSize(int v) { this.completionBatchSize = v; return this; }
        /** {@code statement_timeout} of the dispatcher's sessions (claim included); null leaves the server's. */
        public Builder statementTimeout(Duration v) { this.statementTimeout = v; return this; }
        /**
         * {@code idle_in_transaction_session_timeout} of the dispatcher's sessions; null leaves the server's.
         * At most the lease; by default {@link #DEFAULT_IDLE_IN_TRANSACTION_TIMEOUT} or the lease if shorter.
         */
        public Builder idleInTransactionTimeout(Duration v) {
            this.idleInTransactionTimeout = v;
            this.idleInTransactionTimeoutSet = true;
            return this;
        }
        /** How often the pause switches in {@code outbox_control} are read. */
        public Builder controlPollInterval(Duration v) { this.controlPollInterval = v; return this; }
        /**
         * Honour ordering keys in the claim (default). Off, the claim skips the per-key check and
         * messages of one key may run side by side: only for queues that never set an ordering key.
         */
        public Builder orderingKeys(boolean v) { this.orderingKeys = v; return this; }
        /** See {@link #DEFAULT_CLAIM_LINGER}; zero claims whatever is free at once. */
        public Builder claimLinger(Duration v) { this.claimLinger = v; return this; }
        /** See {@link #DEFAULT_COMPLETION_LINGER}; zero writes what is queued at once. */
        public Builder completionLinger(Duration v) { this.completionLinger = v; return this; }
        /** See {@link #DEFAULT_FULL_SCAN_INTERVAL}; zero claims from the head every time (no marks). */
        public Builder fullScanInterval(Duration v) { this.fullScanInterval = v; return this; }
        /** See {@link #DEFAULT_MARK_LOOKBACK}. */
        public Builder markLookback(Duration v) { this.markLookback = v; return this; }
        /** Where the session settings are made; {@link SessionSettings#TRANSACTION} behind a transaction-mode pooler. */
        public Builder sessionSettings(SessionSettings v) { this.sessionSettings = v; return this; }
        /** Time source for SQL; null (default) means the database's {@code now()}. */
        public Builder clock(Clock v) { this.clock = v; return this; }

        public DispatcherConfig build() {
            String id = workerId == null ? defaultWorkerId() : workerId;
            if (id.isBlank() || id.length() > 200) {
                throw new IllegalArgumentException("workerId must be 1..200 characters, got '" + id + "'");
            }
            Checks.range("batchSize", batchSize, 1, 1000);
            Checks.range("concurrency", concurrency, 1, 10_000);
            Checks.range("claimers", claimers, 1, 16);
            Checks.range("rescuePageSize", rescuePageSize, 1, 100_000);
            Checks.range("completionBatchSize", completionBatchSize, 1, 10_000);
            Checks.positive("lease", lease);
            if (lease.compareTo(Duration.ofSeconds(1)) < 0) {
                throw new IllegalArgumentException("lease must be at least 1s, got " + lease);
            }
            Duration heartbeat = heartbeatInterval == null ? lease.dividedBy(3) : heartbeatInterval;
            Checks.positive("heartbeatInterval", heartbeat);
            if (heartbeat.compareTo(lease) >= 0) {
                throw new IllegalArgumentException("heartbeatInterval (" + heartbeat + ") must be shorter than lease ("
                        + lease + "), or every lease expires between two heartbeats");
            }
            Checks.positive("pollInterval", pollInterval);
            if (!(pollJitter >= 0 && pollJitter <= 1)) {
                throw new IllegalArgumentException("pollJitter must be between 0 and 1, got " + pollJitter);
            }
            Objects.requireNonNull(backoff, "backoff must not be null");
            Checks.positive("rescueInterval", rescueInterval);
            Checks.positive("shutdownDeadline", shutdownDeadline);
            Checks.positive("controlPollInterval", controlPollInterval);
            if (statementTimeout != null) {
                Checks.positive("statementTimeout", statementTimeout);
            }
            // A dispatcher cut off from the database in the middle of a transaction (a host losing its
            // network, measured in the partition run) leaves its server session idle in that transaction,
            // holding the row locks of the claims it was completing; the rescue skips locked rows, so
            // those claims come back only when this timeout ends the session. Longer than the lease, it
            // would be what bounds the rescue, not the lease.
            Duration idle = idleInTransactionTimeout;
            if (idle != null) {
                Checks.positive("idleInTransactionTimeout", idle);
                if (idle.compareTo(lease) > 0) {
                    if (idleInTransactionTimeoutSet) {
                        throw new IllegalArgumentException("idleInTransactionTimeout (" + idle + ") must not be longer than"
                                + " lease (" + lease + "): a dispatcher cut off in the middle of a transaction keeps its row"
                                + " locks until that timeout ends its session, and its claims cannot be rescued before");
                    }
                    idle = lease;
                }
            }
            linger("claimLinger", claimLinger);
            linger("completionLinger", completionLinger);
            if (fullScanInterval == null || fullScanInterval.isNegative()
                    || fullScanInterval.compareTo(MAX_FULL_SCAN_INTERVAL) > 0) {
                throw new IllegalArgumentException("fullScanInterval must be between 0 and " + MAX_FULL_SCAN_INTERVAL
                        + " (0: every claim from the head of the claim index), got " + fullScanInterval);
            }
            if (markLookback == null || markLookback.isNegative() || markLookback.isZero()
                    || markLookback.compareTo(MAX_MARK_LOOKBACK) > 0) {
                throw new IllegalArgumentException("markLookback must be more than 0 and at most " + MAX_MARK_LOOKBACK
                        + ", got " + markLookback);
            }
            return new DispatcherConfig(id, batchSize, concurrency, claimers, lease, heartbeat, pollInterval, pollJitter, backoff,
                    rescueInterval, rescuePageSize, shutdownDeadline, listenForNotifications, recordAttempts,
                    completionBatchSize, statementTimeout, idle, controlPollInterval, orderingKeys,
                    claimLinger, completionLinger, fullScanInterval, markLookback, Objects.requireNonNull(sessionSettings, "sessionSettings must not be null"), clock);
        }

        private static void linger(String name, Duration value) {
            if (value == null || value.isNegative() || value.compareTo(MAX_LINGER) > 0) {
                throw new IllegalArgumentException(name + " must be between 0 and " + MAX_LINGER + ", got " + value);
            }
        }
    }
}
