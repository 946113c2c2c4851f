package io.mailroom.email.service;

import io.mailroom.outbox.HistoryCleaner;
import io.mailroom.outbox.PartitionMaintainer;
import io.mailroom.outbox.RetentionConfig;
import io.mailroom.outbox.SqlStates;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import javax.sql.DataSource;
import java.time.Duration;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;

/**
 * Runs the outbox's retention on a dispatcher instance: daily partitions ensured at start (so the
 * default partition stays a safety net, not the queue), then every {@code interval} the partition
 * maintenance (create ahead, drop finished old partitions, freeze kept ones) and the history
 * cleaner. Every instance may run it; the maintainer and the cleaner keep out of each other's way.
 */
final class RetentionSchedule implements AutoCloseable {

    private static final Logger log = LoggerFactory.getLogger(RetentionSchedule.class);

    private final PartitionMaintainer maintainer;
    private final HistoryCleaner cleaner;
    private final ScheduledExecutorService timer;

    RetentionSchedule(DataSource dataSource, RetentionConfig config, Duration interval) {
        this.maintainer = new PartitionMaintainer(dataSource, config);
        this.cleaner = new HistoryCleaner(dataSource, config);
        var report = maintainer.ensurePartitions();
        if (report.complete()) {
            log.info("Outbox partitions ready: {} created, {} present", report.created().size(), report.present().size());
        } else {
            log.warn("Outbox partitions incomplete: {} (rows go to the default partition meanwhile)", report);
        }
        this.timer = Executors.newSingleThreadScheduledExecutor(r -> Thread.ofPlatform().daemon().name("mailroom-retention").unstarted(r));
        long every = interval.toMillis();
        timer.scheduleWithFixedDelay(this::runQuietly, ThreadLocalRandom.current().nextLong(every), every, TimeUnit.MILLISECONDS);
    }

    private void runQuietly() {
        try {
            var report = maintainer.maintain();
            log.info("Retention: {}", report);
            HistoryCleaner.Report cleaned;
            int rounds = 0;
            do {
                cleaned = cleaner.cleanHistory();
                rounds++;
            } while (!cleaned.complete() && rounds < 10);
            log.info("History cleaned: {}", cleaned);
        } catch (RuntimeException e) {
            log.warn("Retention run failed (SQLSTATE {}): {}; retrying at the next interval",
                    SqlStates.sqlState(e), e.toString());
        }
    }

    @Override
    public void close() {
        timer.shutdownNow();
    }
}
