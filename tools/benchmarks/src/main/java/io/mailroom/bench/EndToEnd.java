package io.mailroom.bench;

import io.mailroom.email.service.ServiceConfig;
import io.mailroom.outbox.runtime.DispatcherConfig;
import io.mailroom.testing.ChildJvm;

import java.nio.file.Path;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.OptionalLong;

/**
 * Scenarios 3 and 4: the whole path as it runs in production, each part a process of its own
 * ({@link MailPipeline}): HTTP clients in this JVM post orders to the order service
 * ({@code POST /orders}: order + outbox message in one transaction), the dispatcher service claims
 * them, renders, reserves the effect in the idempotency store, sends through the HTTP transport to
 * the loopback stub provider (3) or the SMTP transport to the loopback SMTP sink (4), and finishes
 * the message.
 *
 * <p>Per transport: a fresh database, the processes started, {@code warmup} orders posted and
 * delivered untimed (the services' JIT, their pools filled), then {@code orders} orders posted by
 * {@code clients} closed-loop clients. The clock runs from just before the first post to the
 * provider's acceptance of the last of those orders' emails (its own wall-clock stamp,
 * {@link WallClock}); emails/s is orders ÷ that time. CPU is sampled before the first post and after
 * every message is {@code done} in the database: client CPU is the two service JVMs, PG CPU their
 * backends, harness CPU this JVM (the posting clients) and the provider process, which on a machine
 * of 2 cores take their share from the services. The row is {@code ok} only if every order produced
 * exactly one accepted email and the database agrees ({@link EmailChecks}).
 */
final class EndToEnd {

    /**
     * @param transports        which of scenarios 3 (http) and 4 (smtp) to run
     * @param serviceJvmOptions extra JVM options of the order and dispatcher services (a JFR recording, say)
     * @param serviceEnv        extra MAILROOM_* settings of the dispatcher service
     * @param fastStart         start the processes for a short life ({@code --quick}; see {@link MailPipeline.Settings})
     */
    record Plan(List<MailPipeline.Transport> transports, int orders, int warmup, int clients, Duration timeout,
                Path workDir, List<String> serviceJvmOptions, Map<String, String> serviceEnv, boolean fastStart) {
    }

    static final List<Report.Column> COLUMNS = List.of(
            new Report.Column("scenario", "scenario"), new Report.Column("orders", "orders"),
            new Report.Column("seconds", "s"), new Report.Column("emails_per_s", "emails/s"),
            new Report.Column("posted_per_s", "orders posted/s"),
            new Report.Column("client_cpu_ms_per_1k", "client CPU ms/1k"),
            new Report.Column("db_cpu_ms_per_1k", "PG CPU ms/1k"),
            new Report.Column("harness_cpu_ms_per_1k", "harness CPU ms/1k"),
            new Report.Column("load1", "load"), new Report.Column("status", "check"));

    private static final Map<MailPipeline.Transport, String> NAMES = Map.of(
            MailPipeline.Transport.HTTP, "3. HTTP transport -> stub provider",
            MailPipeline.Transport.SMTP, "4. SMTP transport -> SMTP sink");

    private final Plan plan;

    EndToEnd(Plan plan) {
        this.plan = plan;
    }

    void run(Report report) {
        Report.Section s = report.section("e2e", "3+4. End to end: POST /orders -> order service -> outbox -> dispatcher "
                + "service -> transport -> loopback provider (" + plan.clients() + " posting clients, dispatcher defaults: batch "
                + DispatcherConfig.DEFAULT_BATCH_SIZE + ", concurrency " + ServiceConfig.DEFAULT_CONCURRENCY
                + (plan.serviceEnv().isEmpty() ? "" : ", overridden by " + plan.serviceEnv()) + ")", COLUMNS);
        for (MailPipeline.Transport transport : plan.transports()) {
            Map<String, Object> row = s.row();
            row.put("scenario", NAMES.get(transport));
            row.put("transport", transport.label());
            row.put("warmup_orders", plan.warmup());
            row.put("clients", plan.clients());
            String problem;
            try {
                problem = runOnce(transport, row);
            } catch (Exception e) {
                problem = "run aborted: " + e;
            }
            row.put("load1", LoadAverage.oneMinute());
            row.put("status", problem == null ? Report.OK : Report.FAILED);
            if (problem != null) {
                row.put("note", problem);
            }
        }
        s.note("clock: first POST /orders -> the provider's acceptance of the last email (wall clock, both processes on this host)");
        s.note("client CPU = order service + dispatcher service JVMs; PG CPU = their backends; harness CPU = the posting "
                + "clients' JVM + the provider process (all share the same CPUs); per-process figures in the JSON");
        s.note("each check: every order's email accepted exactly once by the provider, nothing refused or extra, every "
                + "outbox message and effect done, every idempotency record succeeded after one reservation");
    }

    /** One transport, one fresh database; fills {@code row} and returns null, or what went wrong. */
    private String runOnce(MailPipeline.Transport transport, Map<String, Object> row) throws Exception {
        String name = "e2e-" + transport.label();
        try (BenchDb db = BenchDb.create();
             MailPipeline pipeline = MailPipeline.start(db, new MailPipeline.Settings(name, transport, true,
                     plan.serviceJvmOptions(), plan.serviceEnv(), plan.workDir(), plan.fastStart()));
             Connection monitor = db.connect();
             OrderPoster poster = new OrderPoster(pipeline.ordersUri(), plan.clients())) {
            long deadline = System.nanoTime() + plan.timeout().toNanos();

            // untimed: the services compile their hot paths and open their pools
            OrderPoster.Posted warm = poster.post(0, plan.warmup());
            if (warm.failures() > 0) {
                return "warm-up: " + warm.failures() + " orders refused, first: " + warm.firstFailure();
            }
            if (!pipeline.awaitAccepted(plan.warmup(), deadline) || !awaitDone(monitor, deadline)) {
                return "warm-up of " + plan.warmup() + " orders not delivered within " + plan.timeout().toSeconds() + " s; "
                        + pipeline.describe();
            }
            awaitSessionsSettled(monitor);

            List<Long> servicePids = pipeline.services().stream().map(ChildJvm::pid).toList();
            CpuMeter meter = new CpuMeter(monitor, false);
            CpuMeter.Sample before = meter.sample(servicePids);
            long harnessBefore = ProcCpu.selfNanos() + ProcCpu.nanos(pipeline.provider().pid()).orElse(0);
            long t0 = WallClock.micros();
            OrderPoster.Posted posted = poster.post(plan.warmup(), plan.orders());
            boolean delivered = pipeline.awaitAccepted(plan.warmup() + posted.orderIds().size(), deadline);
            boolean done = delivered && awaitDone(monitor, deadline);
            CpuMeter.Sample after = meter.sample(servicePids);
            long harnessNanos = ProcCpu.selfNanos() + ProcCpu.nanos(pipeline.provider().pid()).orElse(0) - harnessBefore;

            Acceptances.Count count = pipeline.count();
            Map<String, Acceptances.Entry> accepted = pipeline.acceptances(plan.workDir().resolve(name + "-accepted.tsv"));
            long n = posted.orderIds().size();
            OptionalLong last = posted.orderIds().stream()
                    .map(id -> accepted.get(pipeline.providerId(id)))
                    .filter(Objects::nonNull)
                    .mapToLong(Acceptances.Entry::firstMicros).max();
            double seconds = last.isPresent() ? (last.getAsLong() - t0) / 1e6 : Double.NaN;
            CpuMeter.Used cpu = meter.between(before, after);
            row.put("orders", n);
            row.put("seconds", seconds);
            row.put("emails_per_s", n / seconds);
            row.put("posted_per_s", n / ((posted.lastAnswerMicros() - t0) / 1e6));
            row.put("client_cpu_ms_per_1k", cpu.clientMsPer1000(n));
            row.put("db_cpu_ms_per_1k", cpu.databaseMsPer1000(n));
            row.put("harness_cpu_ms_per_1k", n == 0 ? null : harnessNanos / 1e6 * 1000.0 / n);
            Map<String, Object> perProcess = new HashMap<>();
            for (ChildJvm c : pipeline.services()) {
                long used = after.children().getOrDefault(c.pid(), 0L) - before.children().getOrDefault(c.pid(), 0L);
                perProcess.put(c.name(), n == 0 ? null : used / 1e6 * 1000.0 / n);
            }
            row.put("service_cpu_ms_per_1k", perProcess);
            row.put("pg_background_cpu_ms", cpu.databaseVisible() ? cpu.backgroundNanos() / 1e6 : null);
            row.put("db_backends", cpu.backends());

            List<String> problems = new ArrayList<>();
            if (posted.failures() > 0) {
                problems.add(posted.failures() + " of " + plan.orders() + " orders refused, first: " + posted.firstFailure());
            }
            if (!delivered || !done) {
                problems.add((delivered ? "emails accepted but outbox messages not all done" : "the provider accepted "
                        + count.distinct() + " of " + (plan.warmup() + n) + " emails") + " within "
                        + plan.timeout().toSeconds() + " s; " + pipeline.describe());
            }
            List<Long> all = new ArrayList<>(warm.orderIds());
            all.addAll(posted.orderIds());
            String provider = EmailChecks.providerProblem(all, pipeline::providerId, accepted, count);
            if (provider != null) {
                problems.add(provider);
            }
            String database = EmailChecks.Database.read(monitor).problem(plan.warmup() + plan.orders());
            if (database != null) {
                problems.add(database);
            }
            return problems.isEmpty() ? null : String.join("; ", problems);
        }
    }

    /** Waits until no outbox message is pending or running; false at the deadline. */
    static boolean awaitDone(Connection monitor, long deadlineNanos) throws Exception {
        while (Scaling.anyLeft(monitor)) {
            if (System.nanoTime() > deadlineNanos) {
                return false;
            }
            Thread.sleep(20);
        }
        return true;
    }

    /**
     * Waits (at most 10 s) until the services' pools have stopped opening sessions, so that the CPU
     * meter's first sample sees every backend; one opened later would count from zero, its
     * start-up included.
     */
    static void awaitSessionsSettled(Connection monitor) throws Exception {
        long deadline = System.nanoTime() + Duration.ofSeconds(10).toNanos();
        long last = -1;
        int stableFor = 0;
        while (stableFor < 5 && System.nanoTime() < deadline) {
            long now = sessions(monitor);
            stableFor = now == last ? stableFor + 1 : 0;
            last = now;
            Thread.sleep(100);
        }
    }

    private static long sessions(Connection monitor) throws Exception {
        try (PreparedStatement ps = monitor.prepareStatement(
                "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() AND backend_type = 'client backend'");
             ResultSet rs = ps.executeQuery()) {
            rs.next();
            return rs.getLong(1);
        }
    }
}
