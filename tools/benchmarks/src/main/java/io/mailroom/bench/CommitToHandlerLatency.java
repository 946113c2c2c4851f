package io.mailroom.bench;

import io.mailroom.outbox.runtime.ClaimedMessage;
import io.mailroom.outbox.runtime.Dispatcher;
import io.mailroom.outbox.runtime.DispatcherConfig;
import io.mailroom.outbox.runtime.DispatcherListener;
import io.mailroom.outbox.runtime.MessageHandler;
import io.mailroom.outbox.NewMessage;
import io.mailroom.outbox.runtime.Outcome;
import io.mailroom.outbox.OutboxEnqueuer;
import org.jooq.DSLContext;
import org.jooq.SQLDialect;
import org.jooq.impl.DSL;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicLongArray;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Scenario 5, the outbox part: messages are enqueued at a steady rate (open loop: a pacer hands each
 * enqueue to a pool of sessions at its due time, whether or not the previous ones have finished),
 * and the handler records how long after the enqueuing transaction it started.
 *
 * <p>Method and its error: the enqueuing session takes {@code System.nanoTime()} as soon as its
 * COMMIT has been acknowledged; the handler, in the same JVM, takes its own when it starts; the
 * figure is the difference. The wake-up can reach the dispatcher before the acknowledgement reaches
 * the enqueuer (both leave the server at the commit): such a message counts as 0 ms, and how many
 * did is reported. The enqueue transaction's own duration is reported beside it
 * ({@code enqueue txn p50}).
 *
 * <p>Commit &rarr; provider accept, through the real dispatcher service, is {@link CommitToProviderLatency}'s
 * rows in the same section.
 */
final class CommitToHandlerLatency {

    record Plan(List<Integer> rates, Duration duration, Duration warmup, int enqueueSessions) {
    }

    static final String TOPIC = "bench.latency";
    private static final Pattern SEQ = Pattern.compile("\"seq\"\\s*:\\s*(\\d+)");

    private final Plan plan;

    CommitToHandlerLatency(Plan plan) {
        this.plan = plan;
    }

    /** Measures and adds the section; returns it, for the provider rows of {@link CommitToProviderLatency}. */
    Report.Section run(Report report) throws Exception {
        Report.Section s = report.section("latency",
                "5. Latency at a steady enqueue rate: commit -> handler start, commit -> provider accept (dispatcher defaults: batch "
                        + DispatcherConfig.DEFAULT_BATCH_SIZE + ", concurrency " + DispatcherConfig.DEFAULT_CONCURRENCY
                        + ", poll interval " + DispatcherConfig.DEFAULT_POLL_INTERVAL.toMillis() + " ms)",
                List.of(new Report.Column("measure", "measure"), new Report.Column("wakeups", "LISTEN/NOTIFY"),
                        new Report.Column("rate", "target/s"), new Report.Column("achieved_rate", "achieved/s"),
                        new Report.Column("messages", "messages"), new Report.Column("p50_ms", "p50 ms"),
                        new Report.Column("p95_ms", "p95 ms"), new Report.Column("p99_ms", "p99 ms"),
                        new Report.Column("max_ms", "max ms"), new Report.Column("enqueue_p50_ms", "enqueue txn p50 ms"),
                        new Report.Column("status", "check")));
        boolean warmed = false;
        for (boolean wakeups : new boolean[]{true, false}) {
            for (int rate : plan.rates()) {
                if (!warmed && !plan.warmup().isZero()) {
                    measure(rate, wakeups, plan.warmup()); // JIT warm-up of the enqueue and dispatch paths, discarded
                    warmed = true;
                }
                Result r = measure(rate, wakeups, plan.duration());
                Map<String, Object> row = latencyRow(s, "commit -> handler start", wakeups, rate, r.achievedRate(),
                        r.latency(), r.enqueue(), r.problem());
                row.put("handler_before_ack", r.beforeAck());
            }
        }
        s.note("commit -> handler start: from the enqueuing session's COMMIT acknowledged to the handler's start, one JVM's "
                + "System.nanoTime(); a handler that started before the acknowledgement arrived counts as 0 ms");
        s.note("without LISTEN/NOTIFY the dispatcher finds new messages by polling every "
                + DispatcherConfig.DEFAULT_POLL_INTERVAL.toMillis() + " ms (minus up to "
                + (int) (DispatcherConfig.DEFAULT_POLL_JITTER * 100) + "% jitter)");
        return s;
    }

    /** One row of this section, for both measures (handler start here, provider accept in {@link CommitToProviderLatency}). */
    static Map<String, Object> latencyRow(Report.Section s, String measure, boolean wakeups, int rate, double achievedRate,
                                          Percentiles latency, Percentiles enqueue, String problem) {
        Map<String, Object> row = s.row();
        row.put("measure", measure);
        row.put("wakeups", wakeups);
        row.put("rate", rate);
        row.put("achieved_rate", achievedRate);
        row.put("messages", latency.count());
        row.put("p50_ms", latency.p50Ms());
        row.put("p95_ms", latency.p95Ms());
        row.put("p99_ms", latency.p99Ms());
        row.put("max_ms", latency.maxMs());
        row.put("enqueue_p50_ms", enqueue.p50Ms());
        row.put("enqueue_p99_ms", enqueue.p99Ms());
        row.put("load1", LoadAverage.oneMinute());
        row.put("status", problem == null ? Report.OK : Report.FAILED);
        if (problem != null) {
            row.put("note", problem);
        }
        return row;
    }

    record Result(Percentiles latency, Percentiles enqueue, double achievedRate, int beforeAck, String problem) {
    }

    private Result measure(int rate, boolean wakeups, Duration duration) throws Exception {
        int n = (int) Math.max(1, rate * duration.toMillis() / 1000);
        AtomicLongArray started = new AtomicLongArray(n);
        AtomicLongArray committedAt = new AtomicLongArray(n);
        AtomicLongArray enqueueNanos = new AtomicLongArray(n);
        AtomicInteger handled = new AtomicInteger();
        AtomicLong duplicates = new AtomicLong();
        AtomicLong failures = new AtomicLong();
        AtomicLong lastCommit = new AtomicLong();
        CountDownLatch all = new CountDownLatch(n);
        MessageHandler handler = (m, ctx) -> {
            long now = System.nanoTime();
            int seq = (int) parse(SEQ, m.payloadJson());
            if (!started.compareAndSet(seq, 0, now)) {
                duplicates.incrementAndGet();
            }
            return Outcome.done();
        };
        DispatcherListener listener = new DispatcherListener() {
            @Override
            public void finished(ClaimedMessage message, String outcome, Duration took) {
                if ("done".equals(outcome)) {
                    handled.incrementAndGet();
                    all.countDown();
                }
            }
        };
        try (BenchDb db = BenchDb.create()) {
            DispatcherConfig config = DispatcherConfig.builder().workerId("bench-latency")
                    .listenForNotifications(wakeups).build();
            Dispatcher dispatcher = new Dispatcher(db.pool("bench-latency-dispatcher", RuntimeDrain.POOL_SIZE), config,
                    Map.of(TOPIC, handler), null, listener);
            DSLContext dsl = DSL.using(db.pool("bench-latency-enqueue", plan.enqueueSessions()), SQLDialect.POSTGRES);
            OutboxEnqueuer enqueuer = new OutboxEnqueuer(null, wakeups);
            ExecutorService sessions = Executors.newFixedThreadPool(plan.enqueueSessions());
            dispatcher.start();
            try {
                long t0 = Pacer.run(n, rate, sessions, seq -> {
                    try {
                        long stamp = System.nanoTime();
                        dsl.transaction(cfg -> enqueuer.enqueue(cfg.dsl(), NewMessage.of(TOPIC, "bench",
                                Integer.toString(seq), "latency-" + seq,
                                "{\"seq\": " + seq + "}")));
                        long committed = System.nanoTime();
                        committedAt.set(seq, committed);
                        enqueueNanos.set(seq, committed - stamp);
                        lastCommit.accumulateAndGet(committed, Math::max);
                    } catch (RuntimeException e) {
                        failures.incrementAndGet();
                    }
                });
                // everything handed to the sessions: allow the poll interval (and a margin) for the last ones to be handled
                boolean complete = all.await(DispatcherConfig.DEFAULT_POLL_INTERVAL.toMillis() * 3 + 10_000,
                        TimeUnit.MILLISECONDS);
                String problem = null;
                if (failures.get() > 0 || !complete || duplicates.get() > 0) {
                    problem = "enqueue failures " + failures.get() + ", handled " + handled.get() + "/" + n
                            + ", duplicates " + duplicates.get();
                }
                // the rate the commits really came at (sessions falling behind the pacer would lower it)
                double achieved = n * 1e9 / Math.max(1, lastCommit.get() - t0);
                long[] latency = new long[n];
                int k = 0;
                int beforeAck = 0;
                for (int i = 0; i < n; i++) {
                    if (started.get(i) != 0 && committedAt.get(i) != 0) {
                        long d = started.get(i) - committedAt.get(i);
                        beforeAck += d < 0 ? 1 : 0;
                        latency[k++] = Math.max(0, d);
                    }
                }
                return new Result(Percentiles.ofNanos(java.util.Arrays.copyOf(latency, k)),
                        Percentiles.ofNanos(values(enqueueNanos)), achieved, beforeAck, problem);
            } finally {
                sessions.shutdown();
                sessions.awaitTermination(30, TimeUnit.SECONDS);
                dispatcher.stop();
            }
        }
    }

    private static long parse(Pattern p, String json) {
        Matcher m = p.matcher(json);
        if (!m.find()) {
            throw new IllegalStateException("payload without " + p + ": " + json);
        }
        return Long.parseLong(m.group(1));
    }

    static long[] values(AtomicLongArray a) {
        long[] out = new long[a.length()];
        int k = 0;
        for (int i = 0; i < a.length(); i++) {
            long v = a.get(i);
            if (v > 0) {
                out[k++] = v;
            }
        }
        return java.util.Arrays.copyOf(out, k);
    }
}
