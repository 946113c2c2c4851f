package io.mailroom.bench;

import io.mailroom.outbox.runtime.ClaimedMessage;
import io.mailroom.outbox.runtime.Dispatcher;
import io.mailroom.outbox.runtime.DispatcherConfig;
import io.mailroom.outbox.runtime.DispatcherListener;
import io.mailroom.outbox.runtime.MessageHandler;
import io.mailroom.outbox.runtime.Outcome;

import javax.sql.DataSource;
import java.sql.Connection;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicIntegerArray;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Scenario 1, one cell: the {@link Dispatcher} runtime drains a preloaded queue with a no-op handler.
 * The clock stops when the listener has seen the last completion committed (no polling, no sleep).
 */
final class RuntimeDrain {

    /** Sessions the dispatcher may use: producer, completer, LISTEN, two maintenance tasks, one spare. */
    static final int POOL_SIZE = 6;

    private RuntimeDrain() {
    }

    static DispatcherConfig config(int batch, int concurrency, boolean recordAttempts) {
        return DispatcherConfig.builder()
                .workerId("bench-runtime")
                .batchSize(batch)
                .concurrency(concurrency)
                .recordAttempts(recordAttempts)
                .build();
    }

    /**
     * @param census if not null, wraps the pool to count statements (untimed runs only)
     */
    static DrainResult run(BenchDb db, QueueLoader.Loaded loaded, DispatcherConfig config, Duration timeout,
                           java.util.function.UnaryOperator<DataSource> census) throws Exception {
        int n = loaded.count();
        DataSource pool = db.pool("bench-dispatcher", POOL_SIZE);
        DataSource ds = census == null ? pool : census.apply(pool);
        AtomicIntegerArray seen = new AtomicIntegerArray(n);
        AtomicLong duplicates = new AtomicLong();
        AtomicLong done = new AtomicLong();
        AtomicLong errors = new AtomicLong();
        AtomicLong claimStatements = new AtomicLong();
        AtomicLong claimedRows = new AtomicLong();
        AtomicLong claimNanos = new AtomicLong();
        CountDownLatch drained = new CountDownLatch(1);
        long firstId = loaded.firstId();

        Outcome ok = Outcome.done();
        MessageHandler noop = (m, ctx) -> {
            if (seen.getAndIncrement((int) (m.id() - firstId)) > 0) {
                duplicates.incrementAndGet();
            }
            return ok;
        };
        DispatcherListener listener = new DispatcherListener() {
            @Override
            public void claimed(int requested, int claimed, Duration took) {
                claimStatements.incrementAndGet();
                claimedRows.addAndGet(claimed);
                claimNanos.addAndGet(took.toNanos());
            }

            @Override
            public void finished(ClaimedMessage message, String outcome, Duration took) {
                if ("done".equals(outcome) && done.incrementAndGet() == n) {
                    drained.countDown();
                }
            }

            @Override
            public void error(String where, Throwable error) {
                errors.incrementAndGet();
            }
        };

        try (Connection monitor = db.connect()) {
            CpuMeter meter = new CpuMeter(monitor, true);
            Dispatcher dispatcher = new Dispatcher(ds, config, Map.of(QueueLoader.TOPIC, noop), null, listener);
            CpuMeter.Sample before = meter.sample(List.of());
            long t0 = System.nanoTime();
            dispatcher.start();
            boolean finished;
            long t1;
            CpuMeter.Sample after;
            try {
                finished = drained.await(timeout.toMillis(), TimeUnit.MILLISECONDS);
                t1 = System.nanoTime();
                after = meter.sample(List.of());
            } finally {
                dispatcher.stop();
            }
            String error = finished ? null : "timed out after " + timeout.toSeconds() + " s";
            if (errors.get() > 0) {
                error = (error == null ? "" : error + "; ") + errors.get() + " errors reported by the dispatcher";
            }
            return new DrainResult(n, done.get(), duplicates.get(), t1 - t0, meter.between(before, after),
                    QueueLoader.counts(monitor), error,
                    new DrainResult.Claims(claimStatements.get(), claimedRows.get(), claimNanos.get(), t1 - t0));
        }
    }
}
