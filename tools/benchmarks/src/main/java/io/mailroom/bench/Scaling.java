package io.mailroom.bench;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.io.OutputStreamWriter;
import java.io.Writer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * Scenario 7: 1, 2, 4... dispatcher processes ({@link DispatcherWorkerMain}, child JVMs on this
 * module's class path) drain one preloaded queue together. All children open their pools first and
 * start on one {@code GO}; the clock stops when no message is pending or running any more (polled
 * every {@value #POLL_MILLIS} ms, which bounds the timing error). CPU counts the child JVMs and the
 * database backends, not this parent.
 */
final class Scaling {

    static final long POLL_MILLIS = 50;

    record Plan(List<Integer> processes, int messages, int batch, int concurrency, int warmupPerProcess,
                Duration timeout, Path logDir) {
    }

    private final Plan plan;

    Scaling(Plan plan) {
        this.plan = plan;
    }

    void run(Report report) throws Exception {
        Report.Section s = report.section("scaling",
                "7. Scaling: dispatcher processes on one database (batch " + plan.batch() + ", concurrency "
                        + plan.concurrency() + ", attempts on)",
                List.of(new Report.Column("processes", "processes"), new Report.Column("messages", "messages"),
                        new Report.Column("seconds", "s"), new Report.Column("msg_per_s", "msg/s"),
                        new Report.Column("speedup", "x 1 process"),
                        new Report.Column("client_cpu_ms_per_1k", "client CPU ms/1k"),
                        new Report.Column("db_cpu_ms_per_1k", "PG CPU ms/1k"),
                        new Report.Column("total_cpu_ms_per_1k", "total ms/1k"),
                        new Report.Column("load1", "load"), new Report.Column("status", "check")));
        Double single = null;
        for (int processes : plan.processes()) {
            Map<String, Object> row = s.row();
            row.put("processes", processes);
            DrainResult r = runOnce(processes);
            QueueThroughput.putDrain(row, r);
            if (processes == 1) {
                single = r.perSecond();
            }
            row.put("speedup", single == null ? null : r.perSecond() / single);
            String problem = r.problem(true);
            row.put("status", problem == null ? Report.OK : Report.FAILED);
            if (problem != null) {
                row.put("note", problem);
            }
        }
        s.note("all processes share this machine's cores with PostgreSQL; timing resolution " + POLL_MILLIS + " ms");
    }

    private DrainResult runOnce(int processes) throws Exception {
        try (BenchDb db = BenchDb.create()) {
            List<Process> children = new ArrayList<>();
            List<Writer> stdins = new ArrayList<>();
            List<BufferedReader> stdouts = new ArrayList<>();
            String javaBin = ProcessHandle.current().info().command().orElse("java");
            try (Connection monitor = db.connect()) {
                for (int i = 1; i <= processes; i++) {
                    ProcessBuilder pb = new ProcessBuilder(javaBin, "-Xmx512m", "-cp", System.getProperty("java.class.path"),
                            DispatcherWorkerMain.class.getName(), db.url(), "bench-proc-" + i,
                            Integer.toString(plan.batch()), Integer.toString(plan.concurrency()), "true");
                    Files.createDirectories(plan.logDir());
                    pb.redirectError(plan.logDir().resolve("scaling-" + processes + "-proc-" + i + ".log").toFile());
                    Process p = pb.start();
                    children.add(p);
                    stdins.add(new OutputStreamWriter(p.getOutputStream(), StandardCharsets.UTF_8));
                    stdouts.add(new BufferedReader(new InputStreamReader(p.getInputStream(), StandardCharsets.UTF_8)));
                }
                expect(stdouts, "READY");
                if (plan.warmupPerProcess() > 0) {
                    // untimed: every process compiles its hot paths on a topic of its own
                    try (Connection c = db.connect()) {
                        QueueLoader.load(c, plan.warmupPerProcess() * processes, DispatcherWorkerMain.WARMUP_TOPIC);
                    }
                    send(stdins, "WARM");
                    long until = System.nanoTime() + plan.timeout().toNanos();
                    while (anyLeft(monitor) && System.nanoTime() < until) {
                        Thread.sleep(POLL_MILLIS);
                    }
                    send(stdins, "WARMED");
                    expect(stdouts, "WARM-DONE");
                }
                QueueLoader.Loaded loaded = QueueThroughput.load(db, plan.messages());
                CpuMeter meter = new CpuMeter(monitor, false);
                List<Long> pids = children.stream().map(Process::pid).toList();
                CpuMeter.Sample before = meter.sample(pids);
                long t0 = System.nanoTime();
                send(stdins, "GO");
                long deadline = t0 + plan.timeout().toNanos();
                boolean drained = false;
                while (System.nanoTime() < deadline) {
                    if (!anyLeft(monitor)) {
                        drained = true;
                        break;
                    }
                    Thread.sleep(POLL_MILLIS);
                }
                long t1 = System.nanoTime();
                CpuMeter.Sample after = meter.sample(pids);
                long handled = 0;
                long errors = 0;
                for (int i = 0; i < processes; i++) {
                    stdins.get(i).write("STOP\n");
                    stdins.get(i).flush();
                    String line;
                    while ((line = stdouts.get(i).readLine()) != null) {
                        if (line.startsWith("HANDLED ")) {
                            String[] f = line.split(" ");
                            handled += Long.parseLong(f[1]);
                            errors += Long.parseLong(f[3]);
                        }
                    }
                }
                String error = drained ? null : "timed out after " + plan.timeout().toSeconds() + " s";
                if (errors > 0) {
                    error = (error == null ? "" : error + "; ") + errors + " errors reported by the dispatchers";
                }
                return new DrainResult(loaded.count(), handled, PgbenchReference.duplicateClaims(monitor), t1 - t0,
                        meter.between(before, after), QueueLoader.counts(monitor), error);
            } finally {
                for (Process p : children) {
                    if (!p.waitFor(20, TimeUnit.SECONDS)) {
                        p.destroyForcibly();
                    }
                }
            }
        }
    }

    private static void send(List<Writer> stdins, String line) throws java.io.IOException {
        for (Writer w : stdins) {
            w.write(line + "\n");
            w.flush();
        }
    }

    private void expect(List<BufferedReader> stdouts, String prefix) throws java.io.IOException {
        for (int i = 0; i < stdouts.size(); i++) {
            String line;
            do {
                line = stdouts.get(i).readLine(); // anything else a library prints on stdout is skipped
            } while (line != null && !line.startsWith(prefix));
            if (line == null) {
                throw new IllegalStateException("dispatcher process " + (i + 1) + " ended before answering " + prefix
                        + " (see its log in " + plan.logDir() + ")");
            }
        }
    }

    /** Whether any message is still pending or running (two index probes, cheap enough to poll). */
    static boolean anyLeft(Connection c) throws Exception {
        try (Statement st = c.createStatement(); ResultSet rs = st.executeQuery(
                "SELECT EXISTS (SELECT 1 FROM mailroom.outbox_message WHERE status = 'pending')"
                        + " OR EXISTS (SELECT 1 FROM mailroom.outbox_message WHERE status = 'running')")) {
            rs.next();
            return rs.getBoolean(1);
        }
    }
}
