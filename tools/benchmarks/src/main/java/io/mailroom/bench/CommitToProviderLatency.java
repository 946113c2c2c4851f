package io.mailroom.bench;

import io.mailroom.orders.OrderService;
import io.mailroom.orders.PlacedOrder;
import org.jooq.SQLDialect;
import org.jooq.impl.DSL;

import java.nio.file.Path;
import java.sql.Connection;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicLongArray;
import java.util.concurrent.atomic.AtomicReference;

/**
 * Scenario 5, the whole path: how long after an order's commit its email is accepted by the
 * provider. Orders arrive at a steady rate (open loop, {@link Pacer}) and are written in this JVM
 * through {@link OrderService#placeOrder} (order + outbox message + pg_notify in one transaction) on
 * a pool of sessions; the dispatcher service runs as operators run it, in its own JVM at its
 * defaults (LISTEN on), with the HTTP transport; the stub provider ({@link StubProviderMain}) in a
 * third process stamps each acceptance.
 *
 * <p>Method and its error: the two ends are in different processes, so both stamps are wall-clock
 * microseconds ({@link WallClock}: the host's realtime clock, the same in every process). The
 * commit stamp is taken when the commit returns to the writer; the commit is visible to the
 * dispatcher a little earlier (before its acknowledgement has travelled back), so each figure
 * understates commit &rarr; accept by that return trip, well under a millisecond on loopback unless
 * the writer's thread waits for a core. The orders are written here rather than posted to the
 * order service so that the commit time is known, not inferred from an HTTP answer. The acceptance
 * stamp is taken when the stub has read the whole request, before it answers.
 */
final class CommitToProviderLatency {

    record Plan(List<Integer> rates, Duration duration, Duration warmup, int sessions, Duration timeout, Path workDir,
                List<String> serviceJvmOptions, Map<String, String> serviceEnv, boolean fastStart) {
    }

    static final String MEASURE = "commit -> provider accept";

    private final Plan plan;

    CommitToProviderLatency(Plan plan) {
        this.plan = plan;
    }

    record Result(Percentiles latency, Percentiles enqueue, double achievedRate, String problem) {
    }

    /** Adds one row per rate to {@code s} (the latency section). */
    void run(Report.Section s) {
        List<Long> orderIds = new ArrayList<>();
        int done = 0;
        try (BenchDb db = BenchDb.create();
             MailPipeline pipeline = MailPipeline.start(db, new MailPipeline.Settings("latency-http",
                     MailPipeline.Transport.HTTP, false, plan.serviceJvmOptions(), plan.serviceEnv(), plan.workDir(),
                     plan.fastStart()));
             Connection monitor = db.connect()) {
            OrderService orders = new OrderService(DSL.using(db.pool("bench-latency-orders", plan.sessions()),
                    SQLDialect.POSTGRES));
            if (!plan.warmup().isZero()) {
                // JIT warm-up of the writer, the dispatcher service and the stub; checked, not reported
                Result warm = measure(pipeline, monitor, orders, plan.rates().getFirst(), plan.warmup(), orderIds, "warmup");
                if (warm.problem() != null) {
                    throw new IllegalStateException("warm-up: " + warm.problem());
                }
            }
            for (int rate : plan.rates()) {
                Result r = measure(pipeline, monitor, orders, rate, plan.duration(), orderIds, Integer.toString(rate));
                CommitToHandlerLatency.latencyRow(s, MEASURE, true, rate, r.achievedRate(), r.latency(), r.enqueue(),
                        r.problem());
                done++;
            }
        } catch (Exception e) {
            for (int rate : plan.rates().subList(done, plan.rates().size())) {
                Map<String, Object> row = s.row();
                row.put("measure", MEASURE);
                row.put("rate", rate);
                row.put("status", Report.FAILED);
                row.put("note", "run aborted: " + e);
            }
        }
        s.note(MEASURE + ": orders written in this JVM by OrderService.placeOrder on " + plan.sessions() + " sessions; "
                + "dispatcher service (its own JVM, defaults, LISTEN on, HTTP transport) -> stub provider (its own JVM); "
                + "from the commit's return to the stub's acceptance, both wall-clock µs on this host; 'enqueue txn' is "
                + "the order transaction");
    }

    private Result measure(MailPipeline pipeline, Connection monitor, OrderService orders, int rate, Duration duration,
                           List<Long> allOrderIds, String label) throws Exception {
        int n = (int) Math.max(1, rate * duration.toMillis() / 1000);
        AtomicLongArray orderIds = new AtomicLongArray(n);
        AtomicLongArray commitMicros = new AtomicLongArray(n);
        AtomicLongArray txnNanos = new AtomicLongArray(n);
        AtomicLong lastCommit = new AtomicLong();
        AtomicInteger failures = new AtomicInteger();
        AtomicReference<String> firstFailure = new AtomicReference<>();
        CountDownLatch written = new CountDownLatch(n);
        ExecutorService sessions = Executors.newFixedThreadPool(plan.sessions());
        long t0;
        try {
            t0 = Pacer.run(n, rate, sessions, seq -> {
                try {
                    long start = System.nanoTime();
                    PlacedOrder placed = orders.placeOrder(EnqueueOverhead.ORDER);
                    long committed = System.nanoTime();
                    commitMicros.set(seq, WallClock.micros());
                    orderIds.set(seq, placed.orderId());
                    txnNanos.set(seq, committed - start);
                    lastCommit.accumulateAndGet(committed, Math::max);
                } catch (RuntimeException e) {
                    failures.incrementAndGet();
                    firstFailure.compareAndSet(null, e.toString());
                } finally {
                    written.countDown();
                }
            });
            written.await(plan.timeout().toMillis(), TimeUnit.MILLISECONDS);
        } finally {
            sessions.shutdown();
            sessions.awaitTermination(30, TimeUnit.SECONDS);
        }
        List<Long> ids = new ArrayList<>(n);
        for (int i = 0; i < n; i++) {
            if (orderIds.get(i) > 0) {
                ids.add(orderIds.get(i));
            }
        }
        allOrderIds.addAll(ids);
        long deadline = System.nanoTime() + plan.timeout().toNanos();
        boolean delivered = pipeline.awaitAccepted(allOrderIds.size(), deadline);
        boolean drained = delivered && EndToEnd.awaitDone(monitor, deadline);

        Acceptances.Count count = pipeline.count();
        Map<String, Acceptances.Entry> accepted = pipeline.acceptances(plan.workDir().resolve("latency-http-" + label + ".tsv"));
        long[] latency = new long[n];
        int k = 0;
        for (int i = 0; i < n; i++) {
            Acceptances.Entry e = orderIds.get(i) > 0 ? accepted.get(pipeline.providerId(orderIds.get(i))) : null;
            if (e != null) {
                latency[k++] = (e.firstMicros() - commitMicros.get(i)) * 1_000L;
            }
        }
        List<String> problems = new ArrayList<>();
        if (failures.get() > 0) {
            problems.add(failures.get() + " of " + n + " orders failed, first: " + firstFailure.get());
        }
        if (!delivered || !drained) {
            problems.add((delivered ? "emails accepted but outbox messages not all done" : "the provider accepted "
                    + count.distinct() + " of " + allOrderIds.size() + " emails") + " within " + plan.timeout().toSeconds()
                    + " s; " + pipeline.describe());
        }
        String provider = EmailChecks.providerProblem(allOrderIds, pipeline::providerId, accepted, count);
        if (provider != null) {
            problems.add(provider);
        }
        String database = EmailChecks.Database.read(monitor).problem(allOrderIds.size());
        if (database != null) {
            problems.add(database);
        }
        double achieved = ids.size() * 1e9 / Math.max(1, lastCommit.get() - t0);
        return new Result(Percentiles.ofNanos(java.util.Arrays.copyOf(latency, k)),
                Percentiles.ofNanos(CommitToHandlerLatency.values(txnNanos)), achieved,
                problems.isEmpty() ? null : String.join("; ", problems));
    }
}
