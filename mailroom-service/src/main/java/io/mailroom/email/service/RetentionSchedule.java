package io.mailroom.email.service;

import io.mailroom.delivery.DeliveryEventRetention;
import io.mailroom.delivery.DeliveryStateRetention;
import io.mailroom.email.api.AttachmentRetention;
import io.mailroom.email.dispatch.RenderingRetention;
import io.mailroom.idempotency.RecordRetention;
import io.mailroom.outbox.maintenance.HistoryCleaner;
import io.mailroom.outbox.maintenance.RetentionStep;
import org.jooq.DSLContext;
import io.mailroom.outbox.maintenance.PartitionMaintainer;
import io.mailroom.outbox.maintenance.RetentionConfig;
import io.mailroom.outbox.maintenance.RollupConfig;
import io.mailroom.db.sql.SqlStates;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import javax.sql.DataSource;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.concurrent.Executors;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;

/**
 * Runs the outbox's retention on a dispatcher instance: daily partitions ensured at start (so the
 * default partition stays a safety net, not the queue), then every {@code interval} the partition
 * maintenance (create ahead, drop finished old partitions, freeze kept ones) and the history
 * cleaner. Every instance may run it; the maintainer and the cleaner keep out of each other's way.
 *
 * <p>A database that is away never stops the dispatcher: a failed run, the one at start included,
 * is logged with its SQLSTATE and tried again after {@code retryFirst}, then after twice as long,
 * up to {@code retryMax} (never longer than the interval), until one succeeds; then the interval
 * applies again. Nothing is lost meanwhile: a row whose day has no partition yet lands in the
 * default partition, so inserts never fail for want of maintenance.
 *
 * <p>It also starts the {@link RollupSchedule} (the counts behind the charts by topic), which runs
 * every half minute on a thread of its own and stops with this.
 */
final class RetentionSchedule implements AutoCloseable {

    private static final Logger log = LoggerFactory.getLogger(RetentionSchedule.class);

    static final Duration DEFAULT_RETRY_FIRST = Duration.ofSeconds(2);
    static final Duration DEFAULT_RETRY_MAX = Duration.ofMinutes(1);
    /** Cleaner passes per run when a pass leaves old rows behind (each pass is itself bounded). */
    private static final int MAX_CLEANER_ROUNDS = 10;

    private final PartitionMaintainer maintainer;
    private final HistoryCleaner cleaner;
    /** The charts' rollup, on its own thread and interval beside this maintenance. */
    private final RollupSchedule rollup;
    private final Duration interval;
    private final Duration retryFirst;
    private final Duration retryMax;
    private final ScheduledExecutorService timer;
    /** Runs failed in a row; touched by the timer thread (and the constructor, before the timer runs). */
    private volatile int failures;
    private volatile boolean closed;
    private ScheduledFuture<?> next;

    RetentionSchedule(DataSource dataSource, RetentionConfig config, Duration interval) {
        this(dataSource, config, interval, io.mailroom.outbox.SessionSettings.SESSION);
    }

    RetentionSchedule(DataSource dataSource, RetentionConfig config, Duration interval, io.mailroom.outbox.SessionSettings settings) {
        this(dataSource, config, interval, DEFAULT_RETRY_FIRST, DEFAULT_RETRY_MAX, settings);
    }

    RetentionSchedule(DataSource dataSource, RetentionConfig config, Duration interval, Duration retryFirst, Duration retryMax) {
        this(dataSource, config, interval, retryFirst, retryMax, io.mailroom.outbox.SessionSettings.SESSION);
    }

    RetentionSchedule(DataSource dataSource, RetentionConfig config, Duration interval, Duration retryFirst, Duration retryMax,
                      io.mailroom.outbox.SessionSettings settings) {
        this.maintainer = new PartitionMaintainer(dataSource, config, settings);
        this.cleaner = new HistoryCleaner(dataSource, config, ownerSteps());
        this.interval = interval;
        this.retryFirst = retryFirst;
        this.retryMax = retryMax.compareTo(interval) < 0 ? retryMax : interval;
        this.timer = Executors.newSingleThreadScheduledExecutor(r -> Thread.ofPlatform().daemon().name("mailroom-retention").unstarted(r));
        this.rollup = new RollupSchedule(dataSource, RollupConfig.defaults(), RollupSchedule.DEFAULT_INTERVAL);
        boolean ensured = ensureAtStart();
        // After a good start the first full run is spread over the interval, so instances started
        // together do not all run at once; after a failed one it comes within seconds.
        scheduleNext(ensured ? Duration.ofMillis(ThreadLocalRandom.current().nextLong(Math.max(1, interval.toMillis())))
                : retryDelay());
    }

    /**
     * The retention of the tables outbox-core does not own, each by its owner: renderings
     * and captured mail (email-dispatcher), delivery events and delivery states (delivery-events) leave with their effect, settled
     * idempotency records (idempotency-store) by age, attachment content no email refers to (email-api)
     * an hour after its last use.
     */
    static List<RetentionStep> ownerSteps() {
        return List.of(new RenderingRetention(), io.mailroom.email.transport.capture.CapturedMail.retention(),
                new DeliveryEventRetention(), new DeliveryStateRetention(), new AttachmentRetention(), new RetentionStep() {
            @Override
            public String table() {
                return "idempotency_record";
            }

            @Override
            public int deleteOld(DSLContext tx, Instant cutoff, int limit) {
                return RecordRetention.deleteSettledBefore(tx, cutoff, limit);
            }
        });
    }

    /** Runs failed in a row since the last good one (0 when the last run succeeded). */
    int consecutiveFailures() {
        return failures;
    }

    /** Runs the maintenance now on the schedule's thread (and reschedules from there), for tests. */
    void runNow() {
        scheduleNext(Duration.ZERO);
    }

    private boolean ensureAtStart() {
        try {
            var report = maintainer.ensurePartitions();
            if (report.complete()) {
                log.info("Outbox partitions ready: {} created, {} present", report.created().size(), report.present().size());
            } else {
                log.warn("Outbox partitions incomplete: {} (rows go to the default partition meanwhile)", report);
            }
            return true;
        } catch (RuntimeException e) {
            failures = 1;
            logFailure("Outbox partitions could not be ensured at start", e);
            return false;
        }
    }

    private void run() {
        if (closed) {
            return;
        }
        boolean ok = false;
        try {
            var report = maintainer.maintain();
            log.info("Retention: {}", report);
            HistoryCleaner.Report cleaned;
            int rounds = 0;
            do {
                cleaned = cleaner.cleanHistory();
                rounds++;
            } while (!cleaned.complete() && rounds < MAX_CLEANER_ROUNDS);
            log.info("History cleaned: {}", cleaned);
            ok = true;
        } catch (RuntimeException e) {
            failures++;
            logFailure("Retention run failed", e);
        } finally {
            if (ok) {
                if (failures > 0) {
                    log.info("Retention ran again after {} failed attempt(s)", failures);
                }
                failures = 0;
            }
            scheduleNext(ok ? interval : retryDelay());
        }
    }

    /** retryFirst, doubled for every further failure in a row, at most retryMax. */
    private Duration retryDelay() {
        Duration d = retryFirst;
        for (int i = 1; i < failures && d.compareTo(retryMax) < 0; i++) {
            d = d.multipliedBy(2);
        }
        return d.compareTo(retryMax) < 0 ? d : retryMax;
    }

    private void logFailure(String what, RuntimeException e) {
        String state = SqlStates.sqlState(e);
        String retry = Settings.format(retryDelay());
        if (SqlStates.isConnectionLoss(e) || (state == null && SqlStates.sqlException(e).isPresent())) {
            log.warn("{}: database unavailable (SQLSTATE {}): {}; new rows go to the default partition meanwhile;"
                    + " retrying in {} (attempt {})", what, state, DatabaseStartup.describe(e), retry, failures);
        } else if (SqlStates.QUERY_CANCELED.equals(state)) {
            log.warn("{}: a statement ran past the retention statement timeout (SQLSTATE {}); retrying in {} (attempt {})",
                    what, state, retry, failures);
        } else {
            log.warn("{} (SQLSTATE {}); retrying in {} (attempt {})", what, state, retry, failures, e);
        }
    }

    /** Replaces the pending run (there is only ever one) by one after {@code delay}. */
    private synchronized void scheduleNext(Duration delay) {
        if (closed) {
            return;
        }
        if (next != null) {
            next.cancel(false); // the pending one; never interrupts a run in progress
        }
        try {
            next = timer.schedule(this::run, delay.toMillis(), TimeUnit.MILLISECONDS);
        } catch (RejectedExecutionException e) {
            // closed meanwhile
        }
    }

    @Override
    public synchronized void close() {
        closed = true;
        timer.shutdownNow();
        rollup.close();
    }
}
