package io.mailroom.bench;

import com.zaxxer.hikari.HikariDataSource;
import io.mailroom.email.api.EmailOutbox;
import io.mailroom.email.api.OutgoingEmail;
import io.mailroom.email.service.MailroomCli;
import io.mailroom.outbox.admin.OutboxControl;
import io.mailroom.outbox.maintenance.RollupConfig;
import io.mailroom.outbox.maintenance.StatsRollup;
import io.mailroom.outbox.OutboxEnqueuer;
import org.jooq.DSLContext;
import org.jooq.SQLDialect;
import org.jooq.impl.DSL;

import java.io.IOException;
import java.math.BigDecimal;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicLongArray;
import java.util.concurrent.atomic.AtomicReference;

/**
 * Issue 17: Mailroom's own cost per email, without the order service's. Emails of the built-in
 * {@code order_confirmation} template (three lines, a Vietnamese name, every third one in
 * {@code vi}) are written through the business API ({@link EmailOutbox#enqueue}, batches of
 * {@code enqueueBatch} per transaction) while the topic is paused; then one dispatcher service
 * ({@code mailroom dispatcher run}, its own JVM, defaults) is let loose on them and the drain is
 * measured: emails/s, CPU per email of the dispatcher JVM, its PostgreSQL backends and the provider
 * process. The provider is a loopback process of its own: the HTTP stub, the SMTP sink, or a real
 * SMTP server not written here (Debian's aiosmtpd, discarding). Beside: the no-op queue's
 * throughput in the same run (the runtime at batch 100, attempts on) as the ratio's reference,
 * commit &rarr; provider accept at a paced rate and at a share of the measured capacity, and an
 * untimed statement census of the dispatcher service.
 *
 * <p>Before the measured drain the service drains {@code warmup} emails untimed (its JIT); the pause
 * ({@link OutboxControl}, read by the dispatcher every 2 s) keeps it from starting on the measured
 * emails while they are written. The drain's clock runs from the first measured message seen done
 * to the last (the database polled every {@value #POLL_MILLIS} ms: the resolution); CPU from just
 * before the resume to the last.
 */
final class DispatchOnly {

    enum Provider {
        HTTP("http stub", MailPipeline.Transport.HTTP),
        SMTP("smtp sink", MailPipeline.Transport.SMTP),
        AIOSMTPD("aiosmtpd", MailPipeline.Transport.SMTP);

        final String label;
        final MailPipeline.Transport transport;

        Provider(String label, MailPipeline.Transport transport) {
            this.label = label;
            this.transport = transport;
        }
    }

    /**
     * @param emails         emails per measured drain, per provider ({@link Provider#AIOSMTPD} takes {@code aiosmtpdEmails})
     * @param pacedRate      the fixed rate of the first latency run, emails/s
     * @param capacityShare  the second latency run's rate as a share of the drain's emails/s
     * @param queueMessages  messages of the no-op queue reference (0: skip), after {@code queueWarmup}
     * @param profile        record a JFR profile of the dispatcher JVM during the HTTP drain
     * @param attachmentKib  each email carries one attachment of this many KiB of its own random bytes (0: none)
     */
    record Plan(List<Provider> providers, int emails, int aiosmtpdEmails, int warmup, int enqueueBatch, int censusEmails,
                int queueMessages, int queueWarmup, int pacedRate, double capacityShare, Duration latencyDuration,
                Duration timeout, Path workDir, List<String> serviceJvmOptions, Map<String, String> serviceEnv,
                boolean fastStart, boolean profile, String baselineClassPath, String baselineLabel, int attachmentKib) {
        Plan {
            if (attachmentKib < 0 || attachmentKib > 10 * 1024) {
                throw new IllegalArgumentException("--dispatch-attachment-kib must be between 0 and 10240, got " + attachmentKib);
            }
        }
    }

    /**
     * Whose dispatcher a pass runs: this build's, or a baseline build's class path (the commit before
     * a change), so that one run gives the before and the after figures side by side.
     */
    private record Variant(String classPath, String suffix, String tag) {
        static final Variant THIS_BUILD = new Variant(null, "", "");
    }

    static final String TEMPLATE = "order_confirmation";
    static final String TOPIC = OutgoingEmail.TOPIC_PREFIX + TEMPLATE;
    static final String KEY_PREFIX = "bench-email-";
    private static final int POLL_MILLIS = 50;
    private static final int WRITER_SESSIONS = 16;

    static final List<Report.Column> COLUMNS = List.of(
            new Report.Column("provider", "provider"), new Report.Column("emails", "emails"),
            new Report.Column("seconds", "s"), new Report.Column("emails_per_s", "emails/s"),
            new Report.Column("ratio_queue", "x no-op queue"),
            new Report.Column("dispatcher_cpu_ms", "dispatcher CPU ms/email"),
            new Report.Column("db_cpu_ms", "PG CPU ms/email"),
            new Report.Column("provider_cpu_ms", "provider CPU ms/email"),
            new Report.Column("total_cpu_ms", "total ms/email"),
            new Report.Column("load1", "load"), new Report.Column("status", "check"));

    static final List<Report.Column> LATENCY_COLUMNS = List.of(
            new Report.Column("provider", "provider"), new Report.Column("rate", "target/s"),
            new Report.Column("share", "x capacity"), new Report.Column("achieved", "achieved/s"),
            new Report.Column("messages", "emails"), new Report.Column("p50_ms", "p50 ms"),
            new Report.Column("p95_ms", "p95 ms"), new Report.Column("p99_ms", "p99 ms"),
            new Report.Column("max_ms", "max ms"), new Report.Column("load1", "load"),
            new Report.Column("status", "check"));

    static final List<Report.Column> CENSUS_COLUMNS = List.of(
            new Report.Column("provider", "provider"), new Report.Column("emails", "emails"),
            new Report.Column("statements_per_email", "statements/email"),
            new Report.Column("commits_per_email", "commits/email"), new Report.Column("status", "check"));

    private final Plan plan;
    private Variant variant = Variant.THIS_BUILD;

    DispatchOnly(Plan plan) {
        this.plan = plan;
    }

    private List<Variant> variants() {
        if (plan.baselineClassPath() == null) {
            return List.of(Variant.THIS_BUILD);
        }
        String label = plan.baselineLabel() == null ? "baseline" : plan.baselineLabel();
        return List.of(new Variant(plan.baselineClassPath(), " [before: " + label + "]", "-before"),
                new Variant(null, " [after]", ""));
    }

    private String label(Provider provider) {
        return provider.label + (plan.attachmentKib() > 0 ? " +1 attachment of " + plan.attachmentKib() + " KiB" : "")
                + variant.suffix();
    }

    void run(Report report) {
        Report.Section s = report.section("dispatch", "17. Dispatcher only: pre-enqueued " + TEMPLATE + " emails drained by one "
                + "dispatcher service (defaults" + (plan.serviceEnv().isEmpty() ? "" : ", " + plan.serviceEnv()) + ") -> loopback provider", COLUMNS);
        Report.Section latency = report.section("dispatch_latency",
                "17. Dispatcher only: commit -> provider accept, emails enqueued one per transaction at a paced rate", LATENCY_COLUMNS);
        Report.Section census = report.section("dispatch_census",
                "17. Dispatcher only: statement census of the dispatcher service (untimed, JDBC proxy in its JVM)", CENSUS_COLUMNS);
        Double queueRate = queueReference(s);
        for (Provider provider : plan.providers()) {
            for (Variant v : variants()) {
                variant = v;
                Map<String, Object> row = s.row();
                row.put("provider", label(provider));
                String problem;
                try {
                    problem = drain(provider, row, latency, queueRate);
                } catch (Exception e) {
                    problem = "run aborted: " + e;
                }
                row.putIfAbsent("load1", LoadAverage.oneMinute());
                if (!Report.SKIPPED.equals(row.get("status"))) {
                    row.put("status", problem == null ? Report.OK : Report.FAILED);
                    if (problem != null) {
                        row.put("note", problem);
                    }
                }
            }
        }
        if (plan.censusEmails() > 0) {
            for (Variant v : variants()) {
                variant = v;
                Map<String, Object> row = census.row();
                row.put("provider", label(Provider.HTTP));
                String problem;
                try {
                    problem = census(row);
                } catch (Exception e) {
                    problem = "run aborted: " + e;
                }
                row.put("status", problem == null ? Report.OK : Report.FAILED);
                if (problem != null) {
                    row.put("note", problem);
                }
            }
        }
        variant = Variant.THIS_BUILD;
        s.note("emails written through EmailOutbox.enqueue (" + plan.enqueueBatch() + " per transaction) while the topic was "
                + "paused; " + plan.warmup() + " emails drained untimed first; clock from the first measured message done to the last "
                + "(database polled every " + POLL_MILLIS + " ms)");
        s.note("CPU from /proc: dispatcher = the service's JVM, PG = the run database's client backends, provider = its process; "
                + "x no-op queue = emails/s / the no-op runtime's msg/s (batch 100, attempts on, this run, same server)");
        latency.note("one email per transaction through EmailOutbox.enqueue on " + WRITER_SESSIONS + " sessions (open loop); "
                + "from the commit's return to the provider's acceptance stamp, wall-clock µs; x capacity = target / the drain's emails/s");
        census.note("executions and Connection.commit() calls of every session the service opened, between the resume and the "
                + "last email done; statements by text in the JSON");
    }

    // ------------------------------------------------------------------------------- the reference

    private Double queueReference(Report.Section s) {
        if (plan.queueMessages() <= 0) {
            return null;
        }
        Map<String, Object> row = s.row();
        row.put("provider", "no-op queue (runtime, batch 100, attempts on)");
        try {
            if (plan.queueWarmup() > 0) {
                try (BenchDb db = BenchDb.create()) {
                    QueueLoader.Loaded l = QueueThroughput.load(db, plan.queueWarmup());
                    RuntimeDrain.run(db, l, RuntimeDrain.config(100, QueueThroughput.autoConcurrency(100), true), plan.timeout(), null);
                }
            }
            DrainResult r;
            try (BenchDb db = BenchDb.create()) {
                QueueLoader.Loaded l = QueueThroughput.load(db, plan.queueMessages());
                r = RuntimeDrain.run(db, l, RuntimeDrain.config(100, QueueThroughput.autoConcurrency(100), true), plan.timeout(), null);
            }
            row.put("emails", r.handled());
            row.put("seconds", r.nanos() / 1e9);
            row.put("emails_per_s", r.perSecond());
            row.put("dispatcher_cpu_ms", perEmail(r.cpu().jvmNanos(), r.handled()));
            row.put("db_cpu_ms", r.cpu().databaseVisible() ? perEmail(r.cpu().backendNanos(), r.handled()) : null);
            row.put("total_cpu_ms", r.cpu().databaseVisible()
                    ? perEmail(r.cpu().jvmNanos() + r.cpu().backendNanos(), r.handled()) : null);
            row.put("load1", LoadAverage.oneMinute());
            String problem = r.problem(true);
            row.put("status", problem == null ? Report.OK : Report.FAILED);
            if (problem != null) {
                row.put("note", problem);
                return null;
            }
            return r.perSecond();
        } catch (Exception e) {
            row.put("status", Report.FAILED);
            row.put("note", "run aborted: " + e);
            return null;
        }
    }

    // ------------------------------------------------------------------------------- one provider

    /** One provider, one fresh database; fills {@code row} (and latency rows) and returns null, or what went wrong. */
    private String drain(Provider provider, Map<String, Object> row, Report.Section latency, Double queueRate) throws Exception {
        List<String> external = null;
        if (provider == Provider.AIOSMTPD) {
            Optional<List<String>> command = aiosmtpd();
            if (command.isEmpty()) {
                row.put("status", Report.SKIPPED);
                row.put("note", "python3 -m aiosmtpd is not available (apt-get install -y python3-aiosmtpd): no run against a "
                        + "third-party SMTP server");
                return null;
            }
            external = command.get();
        }
        int n = provider == Provider.AIOSMTPD ? plan.aiosmtpdEmails() : plan.emails();
        String name = "dispatch-" + provider.name().toLowerCase(Locale.ROOT) + variant.tag();
        MailPipeline.Settings settings = new MailPipeline.Settings(name, provider.transport, false, plan.serviceJvmOptions(),
                plan.serviceEnv(), plan.workDir(), plan.fastStart()).withDispatcher(MailroomCli.class.getName(), external)
                .withDispatcherClassPath(variant.classPath());
        try (BenchDb db = BenchDb.create(); Connection monitor = db.connect()) {
            HikariDataSource pool = db.pool(name + "-writer", WRITER_SESSIONS);
            Writer writer = new Writer(DSL.using(pool, SQLDialect.POSTGRES), plan.attachmentKib());
            OutboxControl control = new OutboxControl(pool);
            writer.enqueue(plan.warmup(), plan.enqueueBatch());
            try (MailPipeline pipeline = MailPipeline.start(db, settings)) {
                long deadline = System.nanoTime() + plan.timeout().toNanos();
                if (!awaitDrained(monitor, deadline)) {
                    return "warm-up of " + plan.warmup() + " emails not done within " + plan.timeout().toSeconds() + " s; "
                            + pipeline.describe();
                }
                control.pause(TOPIC, "benchmark: enqueueing the measured emails", "mailroom-bench");
                // the dispatcher reads the switches every 2 s (DispatcherConfig.DEFAULT_CONTROL_POLL_INTERVAL)
                Thread.sleep(3_000);
                long e0 = System.nanoTime();
                long first = writer.enqueue(n, plan.enqueueBatch());
                row.put("enqueue_per_s", n * 1e9 / (System.nanoTime() - e0));
                settle(monitor);
                EndToEnd.awaitSessionsSettled(monitor);
                long waiting = QueueLoader.remaining(monitor);
                if (waiting != n) {
                    return "the dispatcher took " + (n - waiting) + " of the measured emails while paused";
                }

                CpuMeter meter = new CpuMeter(monitor, false);
                long dispatcherPid = pipeline.dispatcher().pid();
                long providerPid = pipeline.providerPid();
                Path jfr = plan.profile() && provider == Provider.HTTP ? plan.workDir().resolve(name + ".jfr").toAbsolutePath() : null;
                if (jfr != null) {
                    jcmd(dispatcherPid, "JFR.start", "name=dispatch-only", "settings=profile", "filename=" + jfr);
                }
                CpuMeter.Sample before = meter.sample(List.of(dispatcherPid, providerPid));
                control.resume(TOPIC, "mailroom-bench");
                long firstDone = 0;
                long lastDone = 0;
                while (System.nanoTime() < deadline) {
                    // until the first is done, one count; after it, only a look at the indexes' heads
                    if (firstDone == 0 && QueueLoader.remaining(monitor) < n) {
                        firstDone = System.nanoTime();
                    }
                    if (firstDone != 0 && !QueueLoader.anyLeft(monitor)) {
                        lastDone = System.nanoTime();
                        break;
                    }
                    if (!pipeline.dispatcher().isAlive()) {
                        break;
                    }
                    Thread.sleep(POLL_MILLIS);
                }
                CpuMeter.Sample after = meter.sample(List.of(dispatcherPid, providerPid));
                if (jfr != null) {
                    jcmd(dispatcherPid, "JFR.stop", "name=dispatch-only");
                    row.put("jfr", jfr.toString());
                }
                if (lastDone == 0) {
                    return "the dispatcher did not finish " + n + " emails within " + plan.timeout().toSeconds() + " s ("
                            + QueueLoader.remaining(monitor) + " left); " + pipeline.describe();
                }
                CpuMeter.Used cpu = meter.between(before, after);
                long dispatcherNanos = delta(before, after, dispatcherPid);
                long providerNanos = delta(before, after, providerPid);
                double seconds = (lastDone - firstDone) / 1e9;
                double perSecond = seconds > 0 ? n / seconds : Double.NaN;
                row.put("emails", (long) n);
                row.put("warmup_emails", plan.warmup());
                row.put("seconds", seconds);
                row.put("emails_per_s", perSecond);
                row.put("ratio_queue", queueRate == null ? null : perSecond / queueRate);
                row.put("dispatcher_cpu_ms", perEmail(dispatcherNanos, n));
                row.put("db_cpu_ms", cpu.databaseVisible() ? perEmail(cpu.backendNanos(), n) : null);
                row.put("provider_cpu_ms", perEmail(providerNanos, n));
                row.put("total_cpu_ms", cpu.databaseVisible()
                        ? perEmail(dispatcherNanos + cpu.backendNanos() + providerNanos, n) : null);
                row.put("pg_background_cpu_ms", cpu.databaseVisible() ? cpu.backgroundNanos() / 1e6 : null);
                row.put("db_backends", cpu.backends());
                row.put("load1", LoadAverage.oneMinute());

                List<String> problems = new ArrayList<>();
                String database = databaseProblem(monitor, writer.written());
                if (database != null) {
                    problems.add(database);
                }
                if (pipeline.providerCounts()) {
                    String accepted = providerProblem(pipeline, writer, name + "-drain");
                    if (accepted != null) {
                        problems.add(accepted);
                    }
                    if (problems.isEmpty() && plan.latencyDuration().toMillis() > 0) {
                        latencyRuns(provider, pipeline, writer, monitor, perSecond, latency);
                    }
                } else {
                    row.put("provider_check", "database only: " + provider.label + " keeps no record of what it accepted");
                }
                row.put("first_key", KEY_PREFIX + first);
                return problems.isEmpty() ? null : String.join("; ", problems);
            }
        }
    }

    private void latencyRuns(Provider provider, MailPipeline pipeline, Writer writer, Connection monitor, double capacity,
                             Report.Section s) {
        List<Integer> rates = new ArrayList<>(List.of(plan.pacedRate()));
        if (Double.isFinite(capacity) && capacity > 0) {
            rates.add((int) Math.max(1, Math.round(capacity * plan.capacityShare())));
        }
        for (int rate : rates) {
            Map<String, Object> row = s.row();
            row.put("provider", label(provider));
            row.put("rate", rate);
            row.put("share", Double.isFinite(capacity) && capacity > 0 ? rate / capacity : null);
            String problem;
            try {
                problem = paced(pipeline, writer, monitor, rate, row, provider);
            } catch (Exception e) {
                problem = "run aborted: " + e;
            }
            row.put("load1", LoadAverage.oneMinute());
            row.put("status", problem == null ? Report.OK : Report.FAILED);
            if (problem != null) {
                row.put("note", problem);
            }
        }
    }

    /** One paced run: each email its own transaction, handed out every 1/rate s on the writer's sessions. */
    private String paced(MailPipeline pipeline, Writer writer, Connection monitor, int rate, Map<String, Object> row,
                         Provider provider) throws Exception {
        int n = (int) Math.max(1, rate * plan.latencyDuration().toMillis() / 1000);
        long base = writer.reserve(n);
        AtomicLongArray commitMicros = new AtomicLongArray(n);
        AtomicLong lastCommit = new AtomicLong();
        AtomicInteger failures = new AtomicInteger();
        AtomicReference<String> firstFailure = new AtomicReference<>();
        CountDownLatch written = new CountDownLatch(n);
        ExecutorService sessions = Executors.newFixedThreadPool(WRITER_SESSIONS);
        long t0;
        try {
            t0 = Pacer.run(n, rate, sessions, i -> {
                try {
                    writer.one(base + i);
                    commitMicros.set(i, WallClock.micros());
                    lastCommit.accumulateAndGet(System.nanoTime(), Math::max);
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
        long deadline = System.nanoTime() + plan.timeout().toNanos();
        boolean drained = awaitDrained(monitor, deadline);
        Map<String, Acceptances.Entry> accepted = pipeline.acceptances(plan.workDir().resolve(
                "dispatch-" + provider.name().toLowerCase(Locale.ROOT) + "-paced-" + rate + ".tsv"));
        long[] latency = new long[n];
        int k = 0;
        for (int i = 0; i < n; i++) {
            Acceptances.Entry e = commitMicros.get(i) > 0 ? accepted.get(pipeline.providerIdForKey(KEY_PREFIX + (base + i))) : null;
            if (e != null) {
                latency[k++] = (e.firstMicros() - commitMicros.get(i)) * 1_000L;
            }
        }
        Percentiles p = Percentiles.ofNanos(java.util.Arrays.copyOf(latency, k));
        row.put("achieved", (n - failures.get()) * 1e9 / Math.max(1, lastCommit.get() - t0));
        row.put("messages", p.count());
        row.put("p50_ms", p.p50Ms());
        row.put("p95_ms", p.p95Ms());
        row.put("p99_ms", p.p99Ms());
        row.put("max_ms", p.maxMs());
        row.put("mean_ms", p.meanMs());
        List<String> problems = new ArrayList<>();
        if (failures.get() > 0) {
            problems.add(failures.get() + " of " + n + " enqueues failed, first: " + firstFailure.get());
        }
        if (!drained) {
            problems.add("not every email done within " + plan.timeout().toSeconds() + " s; " + pipeline.describe());
        }
        String database = databaseProblem(monitor, writer.written());
        if (database != null) {
            problems.add(database);
        }
        String provided = providerProblem(pipeline, writer, "dispatch-" + provider.name().toLowerCase(Locale.ROOT) + "-after-" + rate);
        if (provided != null) {
            problems.add(provided);
        }
        return problems.isEmpty() ? null : String.join("; ", problems);
    }

    // ------------------------------------------------------------------------------- census

    private String census(Map<String, Object> row) throws Exception {
        int n = plan.censusEmails();
        MailPipeline.Settings settings = new MailPipeline.Settings("dispatch-census" + variant.tag(), MailPipeline.Transport.HTTP,
                false, plan.serviceJvmOptions(), plan.serviceEnv(), plan.workDir(), plan.fastStart())
                .withDispatcher(CensusDispatcherMain.class.getName(), null).withDispatcherClassPath(variant.classPath());
        try (BenchDb db = BenchDb.create(); Connection monitor = db.connect()) {
            HikariDataSource pool = db.pool("dispatch-census-writer", 2);
            Writer writer = new Writer(DSL.using(pool, SQLDialect.POSTGRES), plan.attachmentKib());
            OutboxControl control = new OutboxControl(pool);
            control.pause(TOPIC, "benchmark: census", "mailroom-bench");
            writer.enqueue(n, plan.enqueueBatch());
            catchUpRollup(pool);
            try (MailPipeline pipeline = MailPipeline.start(db, settings)) {
                long deadline = System.nanoTime() + plan.timeout().toNanos();
                Census before = census(pipeline, plan.workDir().resolve("dispatch-census-before.tsv"));
                long waiting = QueueLoader.remaining(monitor);
                if (waiting != n) {
                    return "the dispatcher took " + (n - waiting) + " emails while paused";
                }
                control.resume(TOPIC, "mailroom-bench");
                if (!awaitDrained(monitor, deadline)) {
                    return "not every email done within " + plan.timeout().toSeconds() + " s; " + pipeline.describe();
                }
                Census after = census(pipeline, plan.workDir().resolve("dispatch-census-after.tsv"));
                Map<String, Double> perEmail = new LinkedHashMap<>();
                after.byText().forEach((sql, count) -> {
                    long d = count - before.byText().getOrDefault(sql, 0L);
                    if (d > 0) {
                        perEmail.put(sql, (double) d / n);
                    }
                });
                row.put("emails", (long) n);
                row.put("statements_per_email", (double) (after.executions() - before.executions()) / n);
                row.put("commits_per_email", (double) (after.commits() - before.commits()) / n);
                row.put("statements_by_text_per_email", perEmail);
                List<String> problems = new ArrayList<>();
                String database = databaseProblem(monitor, writer.written());
                if (database != null) {
                    problems.add(database);
                }
                String provided = providerProblem(pipeline, writer, "dispatch-census");
                if (provided != null) {
                    problems.add(provided);
                }
                return problems.isEmpty() ? null : String.join("; ", problems);
            }
        }
    }

    private record Census(long executions, long commits, Map<String, Long> byText) {
    }

    /**
     * Folds the statistics rollup up to now before the census's service starts. On a new database
     * its first run backfills a day in some 150 transactions, at a moment drawn within its first 30
     * seconds: when that fell between the census's two readings it was counted as the emails'
     * (15.7 statements per email instead of 1.4, once in CI). A service running for more than a
     * minute has long caught up; the census counts what it does per email from then on.
     */
    private static void catchUpRollup(HikariDataSource pool) {
        StatsRollup rollup = new StatsRollup(pool, RollupConfig.defaults());
        for (int run = 0; run < 100; run++) {
            if (rollup.run().caughtUp()) {
                return;
            }
        }
        throw new IllegalStateException("the statistics rollup did not catch up in 100 runs");
    }

    private static Census census(MailPipeline pipeline, Path file) throws IOException {
        pipeline.dispatcher().send("CENSUS " + file.toAbsolutePath());
        String[] f = pipeline.dispatcher().expect("CENSUS ").split(" ");
        Map<String, Long> byText = new HashMap<>();
        for (String line : Files.readAllLines(file, StandardCharsets.UTF_8)) {
            int tab = line.indexOf('\t');
            byText.put(line.substring(tab + 1), Long.parseLong(line.substring(0, tab)));
        }
        return new Census(Long.parseLong(f[1]), Long.parseLong(f[2]), byText);
    }

    // ------------------------------------------------------------------------------- helpers

    /**
     * Writes the emails through the business API. Keys are {@value #KEY_PREFIX}{@code <seq>}, seq
     * counting from 1 over the whole run on one database, so every email's provider id is known.
     */
    static final class Writer {
        private static final String[] NAMES = {"Nguyễn Thị Ánh", "Trần Văn Đức", "Lê Hoàng Yến", "Phạm Quốc Bảo"};
        private final DSLContext dsl;
        private final EmailOutbox outbox = new EmailOutbox(new OutboxEnqueuer());
        private final AtomicLong next = new AtomicLong(1);
        private final int attachmentBytes;
        private final String keyPrefix;

        Writer(DSLContext dsl) {
            this(dsl, 0);
        }

        Writer(DSLContext dsl, int attachmentKib) {
            this(dsl, attachmentKib, KEY_PREFIX);
        }

        /** A writer whose keys are {@code keyPrefix<seq>} (e.g. {@link StubProviderMain#AMBIGUOUS_PREFIX}). */
        Writer(DSLContext dsl, int attachmentKib, String keyPrefix) {
            this.dsl = dsl;
            this.attachmentBytes = attachmentKib * 1024;
            this.keyPrefix = keyPrefix;
        }

        private OutgoingEmail emailWithAttachment(long seq) {
            OutgoingEmail email = email(seq, keyPrefix);
            return attachmentBytes == 0 ? email : BenchAttachments.withInvoice(email, seq, attachmentBytes);
        }

        /** Emails written or reserved so far: keys 1 .. this. */
        long written() {
            return next.get() - 1;
        }

        long reserve(int n) {
            return next.getAndAdd(n);
        }

        /** {@code n} emails in transactions of {@code batch}; returns the first seq. */
        long enqueue(int n, int batch) {
            long first = reserve(n);
            for (int done = 0; done < n; done += batch) {
                int from = done;
                int size = Math.min(batch, n - done);
                dsl.transaction(cfg -> {
                    for (int i = 0; i < size; i++) {
                        outbox.enqueue(cfg.dsl(), emailWithAttachment(first + from + i));
                    }
                });
            }
            return first;
        }

        void one(long seq) {
            dsl.transaction(cfg -> {
                outbox.enqueue(cfg.dsl(), emailWithAttachment(seq));
            });
        }

        static OutgoingEmail email(long seq) {
            return email(seq, KEY_PREFIX);
        }

        static OutgoingEmail email(long seq, String keyPrefix) {
            boolean vi = seq % 3 == 0;
            String id = Long.toString(100_000 + seq);
            List<Map<String, Object>> lines;
            Object total;
            if (vi) {
                lines = List.of(line("CF-1", "Cà phê sữa đá", 2, 90_000), line("BM-7", "Bánh mì <đặc biệt> & pa-tê", 5, 445_000),
                        line("TR-2", "Trà sen Tây Hồ", 1, 120_000));
                total = 655_000;
            } else {
                lines = List.of(line("CF-1", "Iced milk coffee", 2, new BigDecimal("7.50")),
                        line("BM-7", "Banh mi \"special\" & pate", 5, new BigDecimal("22.25")),
                        line("TR-2", "West Lake lotus tea", 1, new BigDecimal("9.90")));
                total = new BigDecimal("39.65");
            }
            Map<String, Object> order = new LinkedHashMap<>();
            order.put("id", id);
            order.put("currency", vi ? "VND" : "EUR");
            order.put("total", total);
            order.put("createdAt", "2026-12-03T09:15:00Z");
            order.put("lines", lines);
            return OutgoingEmail.template(TEMPLATE)
                    .to("khach" + seq + "@example.com", NAMES[(int) (seq % NAMES.length)])
                    .locale(vi ? "vi" : "en")
                    .about("order", id)
                    .idempotencyKey(keyPrefix + seq)
                    .data(Map.of("customer", Map.of("name", NAMES[(int) (seq % NAMES.length)]), "order", order))
                    .build();
        }

        private static Map<String, Object> line(String sku, String name, int quantity, Object amount) {
            return Map.of("sku", sku, "name", name, "quantity", quantity, "amount", amount);
        }
    }

    /** Waits until no outbox message is pending or running. */
    static boolean awaitDrained(Connection monitor, long deadline) throws Exception {
        while (QueueLoader.anyLeft(monitor)) {
            if (System.nanoTime() > deadline) {
                return false;
            }
            Thread.sleep(POLL_MILLIS);
        }
        return true;
    }

    /** VACUUM ANALYZE (and CHECKPOINT on full runs) so the drain does not pay for the load, as the throughput runs do. */
    private void settle(Connection monitor) throws SQLException {
        boolean autoCommit = monitor.getAutoCommit();
        monitor.setAutoCommit(true);
        try (Statement st = monitor.createStatement()) {
            st.execute("VACUUM ANALYZE mailroom.outbox_message, mailroom.outbox_effect, mailroom.idempotency_record");
            if (!plan.fastStart()) {
                try {
                    st.execute("CHECKPOINT");
                } catch (SQLException notAllowed) {
                    // needs superuser or pg_checkpoint; the run stays valid, only noisier
                }
            }
        } finally {
            monitor.setAutoCommit(autoCommit);
        }
    }

    /** Null when all {@code expected} emails are done once each in the database, else what is wrong. */
    static String databaseProblem(Connection c, long expected) throws SQLException {
        try (PreparedStatement ps = c.prepareStatement("""
                SELECT (SELECT count(*) FROM mailroom.outbox_message WHERE topic = ? AND status = 'done'),
                       (SELECT count(*) FROM mailroom.outbox_message WHERE status <> 'done'),
                       (SELECT count(*) FROM mailroom.outbox_effect WHERE topic = ? AND status = 'done'),
                       (SELECT count(*) FROM mailroom.outbox_effect WHERE status <> 'done'),
                       (SELECT count(*) FROM mailroom.idempotency_record WHERE state = 'succeeded'),
                       (SELECT count(*) FROM mailroom.idempotency_record WHERE state <> 'succeeded'),
                       (SELECT coalesce(sum(reservations), 0) FROM mailroom.idempotency_record)
                """)) {
            ps.setString(1, TOPIC);
            ps.setString(2, TOPIC);
            try (ResultSet rs = ps.executeQuery()) {
                rs.next();
                long[] v = new long[7];
                for (int i = 0; i < 7; i++) {
                    v[i] = rs.getLong(i + 1);
                }
                boolean ok = v[0] == expected && v[1] == 0 && v[2] == expected && v[3] == 0 && v[4] == expected && v[5] == 0
                        && v[6] == expected;
                return ok ? null : "database after " + expected + " emails: messages done " + v[0] + ", not done " + v[1]
                        + ", effects done " + v[2] + ", not done " + v[3] + ", idempotency records succeeded " + v[4]
                        + ", other " + v[5] + ", reservations " + v[6];
            }
        }
    }

    /** Null when the provider accepted every email written so far exactly once and nothing else. */
    private static String providerProblem(MailPipeline pipeline, Writer writer, String label) throws IOException {
        Acceptances.Count count = pipeline.count();
        Map<String, Acceptances.Entry> accepted = pipeline.acceptances(
                pipeline.dispatcher().log().resolveSibling(label + "-accepted.tsv"));
        List<Long> seqs = new ArrayList<>();
        for (long i = 1; i <= writer.written(); i++) {
            seqs.add(i);
        }
        return EmailChecks.providerProblem(seqs, seq -> pipeline.providerIdForKey(KEY_PREFIX + seq), accepted, count);
    }

    private static long delta(CpuMeter.Sample before, CpuMeter.Sample after, long pid) {
        return after.children().getOrDefault(pid, 0L) - before.children().getOrDefault(pid, 0L);
    }

    private static Double perEmail(long nanos, long emails) {
        return emails == 0 ? null : nanos / 1e6 / emails;
    }

    /** The aiosmtpd command (discarding handler), if some python3 on this host has the module. */
    static Optional<List<String>> aiosmtpd() {
        for (String python : List.of("python3", "/usr/bin/python3")) {
            try {
                Process p = new ProcessBuilder(python, "-m", "aiosmtpd", "--help").redirectErrorStream(true)
                        .redirectOutput(ProcessBuilder.Redirect.DISCARD).start();
                if (p.waitFor(20, TimeUnit.SECONDS) && p.exitValue() == 0) {
                    return Optional.of(List.of(python, "-m", "aiosmtpd", "-n", "-c", "aiosmtpd.handlers.Sink", "-l"));
                }
                p.destroyForcibly();
            } catch (IOException e) {
                // not this one
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return Optional.empty();
            }
        }
        return Optional.empty();
    }

    /** Runs {@code jcmd pid args...} with this JVM's jcmd and returns what it printed. */
    static String jcmd(long pid, String... args) throws IOException, InterruptedException {
        String java = ProcessHandle.current().info().command().orElse("java");
        Path jcmd = Path.of(java).resolveSibling("jcmd");
        List<String> command = new ArrayList<>(List.of(jcmd.toString(), Long.toString(pid)));
        command.addAll(List.of(args));
        Process p = new ProcessBuilder(command).redirectErrorStream(true).start();
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        if (!p.waitFor(60, TimeUnit.SECONDS) || p.exitValue() != 0) {
            throw new IllegalStateException(String.join(" ", command) + " failed: " + out);
        }
        return out;
    }
}
