package io.mailroom.bench;

import com.zaxxer.hikari.HikariDataSource;
import io.mailroom.email.service.MailroomCli;
import io.mailroom.outbox.admin.OutboxControl;
import org.jooq.DSLContext;
import org.jooq.SQLDialect;
import org.jooq.impl.DSL;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Issue 28's memory figures: one dispatcher service (HTTP stub provider) in a heap of a set size,
 * its resident set and heap read at idle, with a paused backlog, while it drains that backlog at
 * full speed, and with emails in review. The review backlog is real: the stub leaves keys beginning
 * {@link StubProviderMain#AMBIGUOUS_PREFIX} unanswered past the request timeout, and the dispatcher
 * must put each such email in review ("maybe sent").
 *
 * <p>Figures: RSS and its high-water mark from {@code /proc/<pid>/status}; the heap's used and
 * committed sizes from {@code jcmd GC.heap_info} (once after a {@code GC.run}, which is the live
 * set, and sampled without one during the drain); GC pauses from the JVM's perf counters.
 */
final class DispatcherMemory {

    /**
     * @param heap      the dispatcher's {@code -Xmx}, e.g. {@code 256m}
     * @param backlog   emails enqueued while the topic is paused, then drained
     * @param review    emails the stub answers ambiguously, so they end in review
     * @param warmup    emails drained untimed first
     */
    record Plan(String heap, int backlog, int review, int warmup, Duration timeout, Path workDir,
                Map<String, String> serviceEnv, boolean fastStart) {
        Plan {
            if (!heap.matches("[1-9][0-9]*[mMgG]")) {
                throw new IllegalArgumentException("--memory-heap takes a size like 256m or 1g, got " + heap);
            }
            if (backlog < 1 || review < 0 || warmup < 0) {
                throw new IllegalArgumentException("--memory-backlog must be at least 1 and --memory-review at least 0, got "
                        + backlog + " and " + review);
            }
        }
    }

    static final List<Report.Column> COLUMNS = List.of(
            new Report.Column("phase", "phase"), new Report.Column("rss_mib", "RSS MiB"),
            new Report.Column("rss_peak_mib", "RSS peak MiB"), new Report.Column("heap_used_mib", "heap used MiB"),
            new Report.Column("heap_committed_mib", "heap committed MiB"), new Report.Column("emails_per_s", "emails/s"),
            new Report.Column("gc_time_share", "GC time share"), new Report.Column("load1", "load"),
            new Report.Column("status", "check"));

    private static final Pattern HEAP = Pattern.compile("(?:committed|total) (\\d+)K, used (\\d+)K");
    private static final int POLL_MILLIS = 50;

    private final Plan plan;

    DispatcherMemory(Plan plan) {
        this.plan = plan;
    }

    void run(Report report) {
        Report.Section s = report.section("memory", "28. Dispatcher memory: one dispatcher service with -Xmx" + plan.heap()
                + " (HTTP stub): idle, a paused backlog of " + plan.backlog() + ", draining it, " + plan.review()
                + " emails in review", COLUMNS);
        try {
            measure(s);
        } catch (Exception e) {
            Map<String, Object> row = s.row();
            row.put("phase", "run");
            row.put("status", Report.FAILED);
            row.put("note", "run aborted: " + e);
        }
        s.note("heap used after GC.run is the live set; during the drain it is sampled every second without a GC (live + garbage)");
        s.note("the first dispatcher runs at its defaults; the second, for the review rows, with MAILROOM_HTTP_TIMEOUT=250ms, "
                + "MAILROOM_HTTP_KEY_WINDOW=1s, 128 sends at a time, a breaker judging 10,000 calls at 100 % and a hundred answered emails after every thousand, so that the emails the stub leaves "
                + "unanswered reach review on their retry instead of opening the breaker");
        s.note("GC time share: the JVM's GC collector time over the drain's wall time; RSS from /proc/<pid>/status");
    }

    private void measure(Report.Section s) throws Exception {
        try (BenchDb db = BenchDb.create(); Connection monitor = db.connect()) {
            HikariDataSource pool = db.pool("memory-writer", 8);
            DispatchOnly.Writer writer = new DispatchOnly.Writer(DSL.using(pool, SQLDialect.POSTGRES));
            OutboxControl control = new OutboxControl(pool);
            writer.enqueue(plan.warmup(), 100);
            try (MailPipeline pipeline = MailPipeline.start(db, settings("memory", plan.serviceEnv()))) {
                long pid = pipeline.dispatcher().pid();
                long deadline = System.nanoTime() + plan.timeout().toNanos();
                if (!DispatchOnly.awaitDrained(monitor, deadline)) {
                    throw new IllegalStateException("warm-up not drained; " + pipeline.describe());
                }
                Thread.sleep(5_000);
                snapshot(s.row(), "idle (after " + plan.warmup() + " emails)", pid);

                control.pause(DispatchOnly.TOPIC, "benchmark: memory backlog", "mailroom-bench");
                Thread.sleep(3_000); // the dispatcher reads the switches every 2 s
                writer.enqueue(plan.backlog(), 100);
                Thread.sleep(5_000);
                snapshot(s.row(), "backlog of " + plan.backlog() + ", paused", pid);

                Map<String, Object> drain = s.row();
                drain.put("phase", "draining the backlog");
                Gc gc0 = gc(pid);
                long t0 = System.nanoTime();
                control.resume(DispatchOnly.TOPIC, "mailroom-bench");
                long peakUsed = 0;
                long peakCommitted = 0;
                long nextSample = 0;
                while (QueueLoader.anyLeft(monitor)) {
                    if (System.nanoTime() > deadline || !pipeline.dispatcher().isAlive()) {
                        throw new IllegalStateException("backlog not drained; " + pipeline.describe());
                    }
                    if (System.nanoTime() >= nextSample) {
                        long[] heap = heap(pid);
                        peakCommitted = Math.max(peakCommitted, heap[0]);
                        peakUsed = Math.max(peakUsed, heap[1]);
                        nextSample = System.nanoTime() + 1_000_000_000L;
                    }
                    Thread.sleep(POLL_MILLIS);
                }
                double seconds = (System.nanoTime() - t0) / 1e9;
                Gc gc1 = gc(pid);
                long[] rss = rss(pid);
                drain.put("rss_mib", mib(rss[0]));
                drain.put("rss_peak_mib", mib(rss[1]));
                drain.put("heap_used_mib", mib(peakUsed));
                drain.put("heap_committed_mib", mib(peakCommitted));
                drain.put("emails_per_s", plan.backlog() / seconds);
                drain.put("gc_time_share", (gc1.seconds() - gc0.seconds()) / seconds);
                drain.put("full_gcs", gc1.full() - gc0.full());
                drain.put("load1", LoadAverage.oneMinute());
                String problem = DispatchOnly.databaseProblem(monitor, writer.written());
                drain.put("status", problem == null ? Report.OK : Report.FAILED);
                if (problem != null) {
                    drain.put("note", problem);
                }
            }
            if (plan.review() > 0) {
                review(s, db, monitor, pool);
            }
        }
    }

    /** Keys of the emails the stub answers at once, among the review phase's ambiguous ones. */
    private static final String ANSWERED_PREFIX = "bench-review-answered-";
    private static final int REVIEW_CHUNK = 1_000;

    /**
     * A second dispatcher, on the same database, whose emails end in review: the stub leaves them
     * unanswered past a 250 ms request timeout (maybe sent); an HTTP send is repeated with the same
     * key while the provider remembers it, so with a key window of a second the email's retry parks
     * it in review. The breaker judges only a full window of 10,000 calls that all failed (a stream
     * of timeouts would otherwise open it and hold the emails back). Measured idle after a GC once
     * every one of them is in review. It sends 128 at a time (the defaults' 16). The breaker's window
     * is at most 10,000 calls, so 10,000 ambiguous emails in a row opened it and the phase crawled
     * through its half-open probes: a hundred answered emails follow every thousand ambiguous ones.
     */
    private void review(Report.Section s, BenchDb db, Connection monitor, HikariDataSource pool) throws Exception {
        Map<String, String> env = new java.util.LinkedHashMap<>(Map.of("MAILROOM_BREAKER_WINDOW", "10000",
                "MAILROOM_BREAKER_MIN_CALLS", "10000", "MAILROOM_BREAKER_FAILURE_RATE", "100",
                "MAILROOM_HTTP_KEY_WINDOW", "1s", "MAILROOM_HTTP_TIMEOUT", "250ms",
                "MAILROOM_CONCURRENCY", "128", "MAILROOM_BULKHEAD_MAX_CONCURRENT", "128"));
        env.putAll(plan.serviceEnv());
        Map<String, Object> row = s.row();
        row.put("phase", plan.review() + " in review (second dispatcher)");
        try (MailPipeline pipeline = MailPipeline.start(db, settings("memory-review", env))) {
            DSLContext dsl = DSL.using(pool, SQLDialect.POSTGRES);
            DispatchOnly.Writer ambiguous = new DispatchOnly.Writer(dsl, 0, StubProviderMain.AMBIGUOUS_PREFIX);
            DispatchOnly.Writer answered = new DispatchOnly.Writer(dsl, 0, ANSWERED_PREFIX);
            // a hundred answered emails after every thousand ambiguous ones, claimed in that order: no window of the
            // breaker's (at most 10,000 calls) is all failures, so it never opens however many are asked for
            for (int enqueued = 0; enqueued < plan.review(); enqueued += REVIEW_CHUNK) {
                int n = Math.min(REVIEW_CHUNK, plan.review() - enqueued);
                ambiguous.enqueue(n, 100);
                answered.enqueue(Math.max(1, n / 10), 100);
            }
            if (!DispatchOnly.awaitDrained(monitor, System.nanoTime() + plan.timeout().toNanos())) {
                throw new IllegalStateException("the ambiguous emails did not all reach review; " + pipeline.describe());
            }
            Thread.sleep(5_000);
            snapshot(row, plan.review() + " in review (second dispatcher)", pipeline.dispatcher().pid());
            long inReview = count(monitor, "SELECT count(*) FROM mailroom.outbox_message WHERE status = 'review'");
            row.put("in_review", inReview);
            if (inReview != plan.review()) {
                row.put("status", Report.FAILED);
                row.put("note", inReview + " messages in review, expected " + plan.review());
            }
        }
    }

    private MailPipeline.Settings settings(String name, Map<String, String> env) {
        return new MailPipeline.Settings(name, MailPipeline.Transport.HTTP, false, List.of("-Xmx" + plan.heap()), env,
                plan.workDir(), plan.fastStart()).withDispatcher(MailroomCli.class.getName(), null);
    }

    /** RSS and the heap after a full GC (the live set). */
    private void snapshot(Map<String, Object> row, String phase, long pid) throws Exception {
        row.put("phase", phase);
        DispatchOnly.jcmd(pid, "GC.run");
        long[] heap = heap(pid);
        long[] rss = rss(pid);
        row.put("rss_mib", mib(rss[0]));
        row.put("rss_peak_mib", mib(rss[1]));
        row.put("heap_used_mib", mib(heap[1]));
        row.put("heap_committed_mib", mib(heap[0]));
        row.put("load1", LoadAverage.oneMinute());
        row.put("status", Report.OK);
    }

    /** [committed, used] bytes of the heap. */
    private static long[] heap(long pid) throws IOException, InterruptedException {
        String out = DispatchOnly.jcmd(pid, "GC.heap_info");
        Matcher m = HEAP.matcher(out);
        if (!m.find()) {
            throw new IllegalStateException("GC.heap_info printed no 'committed NK, used NK': " + out);
        }
        return new long[]{Long.parseLong(m.group(1)) * 1024, Long.parseLong(m.group(2)) * 1024};
    }

    /** [VmRSS, VmHWM] bytes. */
    private static long[] rss(long pid) throws IOException {
        long rss = -1;
        long hwm = -1;
        for (String line : Files.readAllLines(Path.of("/proc", Long.toString(pid), "status"))) {
            if (line.startsWith("VmRSS:")) {
                rss = kib(line);
            } else if (line.startsWith("VmHWM:")) {
                hwm = kib(line);
            }
        }
        return new long[]{rss, hwm};
    }

    private static long kib(String statusLine) {
        return Long.parseLong(statusLine.replaceAll("[^0-9]", "")) * 1024;
    }

    private record Gc(double seconds, long full) {
    }

    /** Time in all collectors and the old generation's collections, from the JVM's perf counters. */
    private static Gc gc(long pid) throws IOException, InterruptedException {
        String out = DispatchOnly.jcmd(pid, "PerfCounter.print");
        double frequency = 1;
        long ticks = 0;
        long full = 0;
        for (String line : out.split("\n")) {
            int eq = line.indexOf('=');
            if (eq < 0) {
                continue;
            }
            String name = line.substring(0, eq).trim();
            String value = line.substring(eq + 1).trim();
            if (name.equals("sun.os.hrt.frequency")) {
                frequency = Double.parseDouble(value);
            } else if (name.matches("sun\\.gc\\.collector\\.\\d+\\.time")) {
                ticks += Long.parseLong(value);
            } else if (name.equals("sun.gc.collector.1.invocations")) {
                full = Long.parseLong(value);
            }
        }
        return new Gc(ticks / frequency, full);
    }

    private static long count(Connection c, String sql) throws SQLException {
        try (PreparedStatement ps = c.prepareStatement(sql); ResultSet rs = ps.executeQuery()) {
            rs.next();
            return rs.getLong(1);
        }
    }

    private static double mib(long bytes) {
        return bytes / (1024.0 * 1024.0);
    }
}
