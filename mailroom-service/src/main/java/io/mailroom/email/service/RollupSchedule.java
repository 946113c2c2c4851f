package io.mailroom.email.service;

import io.mailroom.db.sql.SqlStates;
import io.mailroom.delivery.DeliveryEventRollup;
import io.mailroom.outbox.maintenance.RollupConfig;
import io.mailroom.outbox.maintenance.RollupStep;
import io.mailroom.outbox.maintenance.StatsRollup;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import javax.sql.DataSource;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;

/**
 * Runs the {@link StatsRollup} on a dispatcher instance every {@code interval} (half a minute by
 * default), on a thread of its own so that an hour-long retention run never holds the charts back.
 * Every instance runs it; the role itself lets one fold at a time. A failed run (a database away) is
 * logged with its SQLSTATE and simply runs again at the next interval: nothing is lost meanwhile, the
 * mark stays where the last good run left it.
 */
final class RollupSchedule implements AutoCloseable {

    private static final Logger log = LoggerFactory.getLogger(RollupSchedule.class);

    static final Duration DEFAULT_INTERVAL = Duration.ofSeconds(30);
    /** While runs keep failing, one warning in this many; the rest at debug. */
    private static final int WARN_EVERY = 20;

    private final StatsRollup rollup;
    private final ScheduledExecutorService timer;
    private volatile int failures;

    RollupSchedule(DataSource dataSource, RollupConfig config, Duration interval) {
        this.rollup = new StatsRollup(dataSource, config, ownerSteps());
        this.timer = Executors.newSingleThreadScheduledExecutor(r -> Thread.ofPlatform().daemon().name("mailroom-stats-rollup").unstarted(r));
        // instances started together do not all run at once
        long first = ThreadLocalRandom.current().nextLong(Math.max(1, interval.toMillis()));
        timer.scheduleWithFixedDelay(this::run, first, interval.toMillis(), TimeUnit.MILLISECONDS);
    }

    /** The rollups of the other owners, whose old buckets the role forgets with its own: delivery-events' bounces. */
    static List<RollupStep> ownerSteps() {
        return List.of(DeliveryEventRollup.RETENTION);
    }

    /** Runs failed in a row since the last good one. */
    int consecutiveFailures() {
        return failures;
    }

    private void run() {
        try {
            rollup.run();
            if (failures > 0) {
                log.info("Stats rollup ran again after {} failed attempt(s)", failures);
            }
            failures = 0;
        } catch (RuntimeException e) {
            int n = ++failures;
            String state = SqlStates.sqlState(e);
            if (n == 1 || n % WARN_EVERY == 0) {
                log.warn("Stats rollup failed (SQLSTATE {}, {} in a row); the charts by topic wait for the next run: {}",
                        state, n, DatabaseStartup.describe(e));
            } else {
                log.debug("Stats rollup failed (SQLSTATE {}, {} in a row)", state, n, e);
            }
        }
    }

    @Override
    public void close() {
        timer.shutdownNow();
    }
}
