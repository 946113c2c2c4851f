package io.mailroom.bench;

import io.mailroom.outbox.runtime.DispatcherConfig;

import java.nio.file.Path;
import java.sql.Connection;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * Scenarios 1 and 2 in one pass, so that each runtime figure has its reference measured minutes
 * apart on the same machine: for every batch size and both settings of {@code recordAttempts}, the
 * {@link io.mailroom.outbox.runtime.Dispatcher} runtime, the plain JDBC loop ({@link JdbcReference}) and
 * pgbench ({@link PgbenchReference}) each drain a freshly loaded, identical queue. Then a concurrency
 * sweep of the runtime, a statement census (what the runtime sends per message) and the claim's
 * planning/execution split.
 */
final class QueueThroughput {

    /** What to run; see {@link BenchCommand} for the meaning and defaults. */
    record Plan(List<Integer> batches, int messages, int maxClaimsPerRun, List<List<Integer>> sweep, int refSessions,
                Optional<Path> pgbench, int repeat, int warmupMessages, int censusMessages, Duration timeout,
                Path workDir, boolean diagnostics) {
    }

    static final List<Report.Column> COLUMNS = List.of(
            new Report.Column("driver", "driver"),
            new Report.Column("batch", "batch"),
            new Report.Column("concurrency", "conc/sessions"),
            new Report.Column("attempts", "attempts"),
            new Report.Column("messages", "messages"),
            new Report.Column("seconds", "s"),
            new Report.Column("msg_per_s", "msg/s"),
            new Report.Column("ratio_jdbc", "x jdbc-ref"),
            new Report.Column("ratio_pgbench", "x pgbench"),
            new Report.Column("client_cpu_ms_per_1k", "client CPU ms/1k"),
            new Report.Column("jit_cpu_ms_per_1k", "of which JIT"),
            new Report.Column("db_cpu_ms_per_1k", "PG CPU ms/1k"),
            new Report.Column("total_cpu_ms_per_1k", "total ms/1k"),
            new Report.Column("rows_per_claim", "rows/claim"),
            new Report.Column("claimer_busy", "claimers busy"),
            new Report.Column("load1", "load"),
            new Report.Column("status", "check"));

    private final Plan plan;

    QueueThroughput(Plan plan) {
        this.plan = plan;
    }

    static int autoConcurrency(int batch) {
        // enough free slots for the producers to claim full batches while earlier ones are being completed
        // (slots are freed when a completion is written, not when the handler returns)
        return Math.max(DispatcherConfig.DEFAULT_CONCURRENCY, 4 * batch);
    }

    int messagesFor(int batch) {
        long cap = (long) batch * plan.maxClaimsPerRun();
        return (int) Math.min(plan.messages(), cap);
    }

    void run(Report report) throws Exception {
        Report.Section main = report.section("throughput",
                "1+2. Queue throughput: runtime vs the reference limit (same SQL, same batch, same database state)", COLUMNS);
        main.note("runtime = io.mailroom.outbox.runtime.Dispatcher, no-op handler; jdbc-ref = the runtime's SQL in a bare JDBC loop with "
                + plan.refSessions() + " sessions; pgbench = benchmarks/pgbench/claim_complete.sql with the same sessions");
        main.note("rows/claim and claimers busy (time the runtime's " + DispatcherConfig.DEFAULT_CLAIMERS + " claimer threads spent in"
                + " claim transactions / wall time; " + DispatcherConfig.DEFAULT_CLAIMERS + ".0 = always claiming) say whether"
                + " claiming or completing bounded the runtime");
        main.note("client CPU = the JVM (or pgbench) process; PG CPU = the database's client backends for this run; both from "
                + "/proc/<pid>/stat utime+stime sampled before and after the drain; of which JIT = the CPU of the JVM's"
                + " C1/C2 compiler threads in that window, charged to whichever driver runs meanwhile: a warm-up too short"
                + " for the code under test shows here (--warmup)");
        if (plan.pgbench().isEmpty()) {
            main.note("pgbench not found: pgbench reference rows skipped (install postgresql-client or pass --pgbench)");
        }

        warmUp();
        Map<String, DrainResult> jdbcRef = new HashMap<>();
        for (boolean attempts : new boolean[]{true, false}) {
            for (int batch : plan.batches()) {
                int n = messagesFor(batch);
                int concurrency = autoConcurrency(batch);
                // pgbench once per batch size (attempts on): a second, Java-free reading of the same limit
                boolean withPgbench = plan.pgbench().isPresent() && attempts;
                List<DrainResult> runtimes = new ArrayList<>();
                List<DrainResult> jdbcs = new ArrayList<>();
                List<DrainResult> pgbenches = new ArrayList<>();
                for (int rep = 0; rep < plan.repeat(); rep++) {
                    // alternate the order (A B C, C B A, ...) so that a drift in the machine's load
                    // falls on every driver alike
                    List<Runnable> order = new ArrayList<>();
                    order.add(() -> runtimes.add(unchecked(() -> runtime(n, batch, concurrency, attempts))));
                    order.add(() -> jdbcs.add(unchecked(() -> jdbc(n, batch, attempts))));
                    if (withPgbench) {
                        order.add(() -> pgbenches.add(unchecked(() -> pgbench(n, batch, attempts))));
                    }
                    if (rep % 2 == 1) {
                        java.util.Collections.reverse(order);
                    }
                    order.forEach(Runnable::run);
                }
                DrainResult runtime = best(runtimes);
                DrainResult jdbc = best(jdbcs);
                DrainResult pgb = pgbenches.isEmpty() ? null : best(pgbenches);
                jdbcRef.put(batch + "/" + attempts, jdbc);
                row(main, "runtime", batch, concurrency, attempts, runtime, jdbc, pgb).put("runs_msg_per_s", rates(runtimes));
                row(main, "jdbc-ref", batch, plan.refSessions(), attempts, jdbc, null, null).put("runs_msg_per_s", rates(jdbcs));
                if (pgb != null) {
                    row(main, "pgbench", batch, plan.refSessions(), attempts, pgb, null, null)
                            .put("runs_msg_per_s", rates(pgbenches));
                }
            }
        }
        if (plan.repeat() > 1) {
            main.note("each driver ran " + plan.repeat() + " times per cell in alternating order; the table shows each "
                    + "driver's fastest run (all runs are in the JSON)");
        }

        if (!plan.sweep().isEmpty()) {
            Report.Section sweep = report.section("concurrency",
                    "1. Runtime concurrency sweep (attempts on; ratio to the jdbc-ref of the same batch above)", COLUMNS);
            for (List<Integer> bc : plan.sweep()) {
                int batch = bc.get(0);
                int concurrency = bc.get(1);
                DrainResult r = runtime(messagesFor(batch), batch, concurrency, true);
                row(sweep, "runtime", batch, concurrency, true, r, jdbcRef.get(batch + "/true"), null);
            }
            sweep.note("the producer claims min(free slots, batch): with concurrency below the batch size, claims are smaller than the batch");
        }

        census(report);
        if (plan.diagnostics()) {
            Report.Section diag = report.section("diagnostics",
                    "Where PostgreSQL's time per batch goes (EXPLAIN ANALYZE of the runtime's statements, plan cache settled)",
                    List.of(new Report.Column("statement", "statement"), new Report.Column("batch", "batch"),
                            new Report.Column("planning_ms", "planning ms"), new Report.Column("execution_ms", "execution ms"),
                            new Report.Column("planning_share", "planning share"),
                            new Report.Column("generic_plans", "generic plans"), new Report.Column("custom_plans", "custom plans"),
                            new Report.Column("status", "check")));
            // batch 1 shows the planning share at its worst; quick runs (small batches only) take the smallest
            for (int batch : plan.batches().contains(1) ? List.of(1, 100) : List.of(plan.batches().getFirst())) {
                try (BenchDb db = BenchDb.create()) {
                    load(db, Math.max(2000, batch * 40));
                    ClaimDiagnostics.run(db, batch, diag);
                }
            }
            diag.note("custom plans > 0 with generic plans = 0 means PostgreSQL plans the statement again at every execution");
        }
    }

    @FunctionalInterface
    private interface Run {
        DrainResult run() throws Exception;
    }

    private static DrainResult unchecked(Run run) {
        try {
            return run.run();
        } catch (RuntimeException e) {
            throw e;
        } catch (Exception e) {
            throw new IllegalStateException(e);
        }
    }

    /** The fastest complete run; a run that failed its checks wins, so that a failure is never hidden. */
    static DrainResult best(List<DrainResult> runs) {
        return runs.stream().filter(r -> r.error() != null || r.duplicates() > 0 || r.handled() != r.messages())
                .findFirst()
                .orElseGet(() -> runs.stream().max(java.util.Comparator.comparingDouble(DrainResult::perSecond)).orElseThrow());
    }

    private static List<Double> rates(List<DrainResult> runs) {
        return runs.stream().map(DrainResult::perSecond).toList();
    }

    private void warmUp() throws Exception {
        if (plan.warmupMessages() <= 0) {
            return;
        }
        // JIT and connection warm-up for both Java drivers; measured figures start after this
        try (BenchDb db = BenchDb.create()) {
            QueueLoader.Loaded l = load(db, plan.warmupMessages());
            RuntimeDrain.run(db, l, RuntimeDrain.config(100, 200, true), plan.timeout(), null);
        }
        try (BenchDb db = BenchDb.create()) {
            QueueLoader.Loaded l = load(db, plan.warmupMessages());
            JdbcReference.run(db, l, 100, plan.refSessions(), true);
        }
    }

    private DrainResult runtime(int n, int batch, int concurrency, boolean attempts) throws Exception {
        try (BenchDb db = BenchDb.create()) {
            QueueLoader.Loaded l = load(db, n);
            return RuntimeDrain.run(db, l, RuntimeDrain.config(batch, concurrency, attempts), plan.timeout(), null);
        }
    }

    private DrainResult jdbc(int n, int batch, boolean attempts) throws Exception {
        try (BenchDb db = BenchDb.create()) {
            QueueLoader.Loaded l = load(db, n);
            return JdbcReference.run(db, l, batch, plan.refSessions(), attempts);
        }
    }

    private DrainResult pgbench(int n, int batch, boolean attempts) throws Exception {
        try (BenchDb db = BenchDb.create()) {
            QueueLoader.Loaded l = load(db, n);
            return PgbenchReference.run(plan.pgbench().orElseThrow(), db, l, batch, plan.refSessions(), attempts,
                    plan.workDir());
        }
    }

    static QueueLoader.Loaded load(BenchDb db, int n) throws Exception {
        try (Connection c = db.connect()) {
            return QueueLoader.load(c, n);
        }
    }

    private static Map<String, Object> row(Report.Section s, String driver, int batch, int concurrency, boolean attempts,
                                           DrainResult r, DrainResult jdbc, DrainResult pgbench) {
        Map<String, Object> row = s.row();
        row.put("driver", driver);
        row.put("batch", batch);
        row.put("concurrency", concurrency);
        row.put("attempts", attempts);
        putDrain(row, r);
        row.put("ratio_jdbc", ratio(r, jdbc));
        row.put("ratio_pgbench", ratio(r, pgbench));
        String problem = r.problem(attempts);
        row.put("status", problem == null ? Report.OK : Report.FAILED);
        if (problem != null) {
            row.put("note", problem);
        }
        return row;
    }

    static void putDrain(Map<String, Object> row, DrainResult r) {
        row.put("messages", r.handled());
        row.put("seconds", r.nanos() / 1e9);
        row.put("msg_per_s", r.perSecond());
        row.put("client_cpu_ms_per_1k", r.cpu().clientMsPer1000(r.handled()));
        row.put("jit_cpu_ms_per_1k", r.cpu().jitMsPer1000(r.handled()));
        row.put("db_cpu_ms_per_1k", r.cpu().databaseMsPer1000(r.handled()));
        row.put("total_cpu_ms_per_1k", r.cpu().totalMsPer1000(r.handled()));
        row.put("pg_background_cpu_ms", r.cpu().databaseVisible() ? r.cpu().backgroundNanos() / 1e6 : null);
        row.put("db_backends", r.cpu().backends());
        row.put("load1", LoadAverage.oneMinute());
        if (r.claims() != null) {
            row.put("rows_per_claim", r.claims().rowsPerClaim());
            row.put("claimer_busy", r.claims().busyShare());
            row.put("claims", r.claims().statements());
        }
    }

    private static Double ratio(DrainResult r, DrainResult ref) {
        if (ref == null || ref.perSecond() <= 0 || r.perSecond() <= 0) {
            return null;
        }
        return r.perSecond() / ref.perSecond();
    }

    /** Untimed: what the runtime sends per 1,000 messages, and whether it is still the reference's SQL. */
    private void census(Report report) throws Exception {
        Report.Section s = report.section("census",
                "Statement census of the runtime (untimed, counted through a JDBC proxy), per 1,000 messages",
                List.of(new Report.Column("batch", "batch"), new Report.Column("messages", "messages"),
                        new Report.Column("claims_per_1k", "claims"), new Report.Column("completions_per_1k", "completion txns"),
                        new Report.Column("statements_per_1k", "statements"), new Report.Column("commits_per_1k", "commits"),
                        new Report.Column("reference_commits_per_1k", "jdbc-ref commits"),
                        new Report.Column("same_sql", "same SQL as reference"), new Report.Column("status", "check")));
        for (int batch : plan.batches()) {
            int n = Math.min(plan.censusMessages(), Math.max(200, batch * 200));
            try (BenchDb db = BenchDb.create()) {
                QueueLoader.Loaded l = load(db, n);
                StatementCensus[] holder = new StatementCensus[1];
                DrainResult r = RuntimeDrain.run(db, l, RuntimeDrain.config(batch, autoConcurrency(batch), true),
                        plan.timeout(), ds -> holder[0] = new StatementCensus(ds));
                StatementCensus census = holder[0];
                Map<String, Long> byKind = new LinkedHashMap<>();
                List<String> differing = new ArrayList<>();
                census.executions().forEach((sql, count) -> {
                    String kind = ReferenceSql.kindOf(sql);
                    if (kind != null) {
                        byKind.merge(kind, count, Long::sum);
                        if (!ReferenceSql.sameAs(ReferenceSql.of(kind), sql)) {
                            differing.add(kind + ": " + sql);
                        }
                    }
                });
                double per1k = 1000.0 / r.handled();
                Map<String, Object> row = s.row();
                row.put("batch", batch);
                row.put("messages", r.handled());
                row.put("claims_per_1k", (byKind.getOrDefault("claim", 0L) + byKind.getOrDefault("claim_from_mark", 0L)) * per1k);
                row.put("completions_per_1k", byKind.getOrDefault("finish", 0L) * per1k);
                row.put("statements_per_1k", census.totalExecutions() * per1k);
                row.put("commits_per_1k", census.commits() * per1k);
                // the reference commits once per claim and once per completion, one completion per claim
                row.put("reference_commits_per_1k", 2000.0 / batch);
                row.put("same_sql", differing.isEmpty() ? "yes" : "NO");
                String problem = r.problem(true);
                if (!differing.isEmpty()) {
                    problem = (problem == null ? "" : problem + "; ") + "runtime SQL differs from ReferenceSql: " + differing;
                }
                row.put("status", problem == null ? Report.OK : Report.FAILED);
                if (problem != null) {
                    row.put("note", problem);
                }
                row.put("runtime_statements", census.executions());
            }
        }
        s.note("statements include the dispatcher's session setup, pause-switch reads, LISTEN and lease maintenance");
    }
}
