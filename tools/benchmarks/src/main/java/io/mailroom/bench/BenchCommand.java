package io.mailroom.bench;

import io.mailroom.testing.PostgresServer;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.Callable;
import java.util.stream.Collectors;

/**
 * The benchmark tool: runs the scenarios of issue 9 against a real PostgreSQL (the server of
 * {@code $MAILROOM_TEST_DB_URL}, else Testcontainers, else embedded; every run gets a fresh migrated
 * database that is dropped afterwards), prints one table per scenario and writes the same figures
 * as JSON. {@code --quick} runs every scenario on tiny sizes, for CI: it proves the tool works,
 * its figures mean nothing.
 *
 * <p>Exit code 0 when every row checked out (or is reported as not yet available), 2 when a run
 * lost, duplicated or failed messages (or an end-to-end run could not complete), 1 on a usage or
 * setup error.
 */
@Command(name = "mailroom-bench", mixinStandardHelpOptions = true, sortOptions = false,
        description = "Mailroom benchmarks: queue throughput vs the database's own limit, end to end through the services, "
                + "latency, enqueue overhead, scaling.")
public final class BenchCommand implements Callable<Integer> {

    static final List<String> ALL_SCENARIOS = List.of("throughput", "enqueue", "scaling", "latency", "e2e",
            "dispatch-only", "memory");

    @Option(names = "--quick", description = "Tiny sizes, every scenario, seconds in all (CI smoke run).")
    boolean quick;

    @Option(names = "--scenarios", split = ",", description = "Which to run (default: all): ${COMPLETION-CANDIDATES}",
            completionCandidates = ScenarioNames.class)
    List<String> scenarios = ALL_SCENARIOS;

    @Option(names = "--output", description = "JSON results file (default: benchmarks/target/bench-results.json from the "
            + "repository root, else target/bench-results.json).")
    Path output;

    @Option(names = "--messages", description = "Messages preloaded per throughput run (default 100000; quick 1000).")
    Integer messages;

    @Option(names = "--max-claims", description = "Cap a run at batch x this many messages, so small batches stay short "
            + "(default 1000; quick 100).")
    Integer maxClaims;

    @Option(names = "--batches", split = ",", description = "Batch sizes (default 1,10,100,1000; quick 10,100).")
    List<Integer> batches;

    @Option(names = "--sweep", split = ",", description = "Extra runtime runs as batch:concurrency (default "
            + "100:100,100:200,100:800; quick none).")
    List<String> sweep;

    @Option(names = "--repeat", description = "Runs of each driver per throughput cell, in alternating order; the "
            + "fastest counts (default 2; quick 1).")
    Integer repeat;

    @Option(names = "--ref-sessions", description = "Sessions of the reference drivers (default: the runtime's busy "
            + "sessions, its claimers and its completer, i.e. DispatcherConfig.DEFAULT_CLAIMERS + 1).")
    int refSessions = io.mailroom.outbox.runtime.DispatcherConfig.DEFAULT_CLAIMERS + 1;

    @Option(names = "--pgbench", description = "pgbench binary, 'auto' (PATH, /usr/lib/postgresql/*/bin) or 'none'.")
    String pgbench = "auto";

    @Option(names = "--warmup", description = "Messages drained untimed by each Java driver before measuring "
            + "(default 20000; quick 0).")
    Integer warmup;

    @Option(names = "--processes", split = ",", description = "Dispatcher process counts for scaling (default 1,2,4; quick 1,2).")
    List<Integer> processes;

    @Option(names = "--scaling-messages", description = "Messages for each scaling run (default 50000; quick 1000).")
    Integer scalingMessages;

    @Option(names = "--rates", split = ",", description = "Enqueue rates per second for latency (default 200,1000; quick 200).")
    List<Integer> rates;

    @Option(names = "--latency-seconds", description = "Seconds of steady enqueueing per latency run (default 8; quick 1).")
    Integer latencySeconds;

    @Option(names = "--enqueue-threads", description = "Threads for the enqueue-overhead load (default 4; quick 2).")
    Integer enqueueThreads;

    @Option(names = "--enqueue-orders", description = "Orders per thread per round and variant (default 500; quick 50).")
    Integer enqueueOrders;

    @Option(names = "--e2e-orders", description = "Orders posted per end-to-end run, after the warm-up (default 10000; quick 40).")
    Integer e2eOrders;

    @Option(names = "--e2e-warmup", description = "Orders posted and delivered untimed before each end-to-end run "
            + "(default 3000: the services' JIT is still compiling after 1000; quick 10).")
    Integer e2eWarmup;

    @Option(names = "--e2e-clients", description = "Closed-loop HTTP clients posting orders (default 8; quick 4).")
    Integer e2eClients;

    @Option(names = "--e2e-transports", split = ",", description = "Transports end to end: http (scenario 3), smtp (4) "
            + "(default both).")
    List<String> e2eTransports = List.of("http", "smtp");

    @Option(names = "--service-jvm-opts", description = "Extra JVM options of the service processes of scenarios 3-5 (order "
            + "service, dispatcher service), space-separated, e.g. a JFR recording.")
    String serviceJvmOpts;

    @Option(names = "--service-env", description = "Extra setting of the dispatcher service of scenarios 3-5, NAME=VALUE "
            + "(repeatable), e.g. MAILROOM_CONCURRENCY=64.")
    Map<String, String> serviceEnv = new java.util.LinkedHashMap<>();

    @Option(names = "--dispatch-emails", description = "Emails per dispatcher-only drain (issue 17; default 20000; quick 300).")
    Integer dispatchEmails;

    @Option(names = "--dispatch-aiosmtpd-emails", description = "Emails of the dispatcher-only drain against aiosmtpd "
            + "(default 5000).")
    Integer dispatchAiosmtpdEmails;

    @Option(names = "--dispatch-providers", split = ",", description = "Providers of the dispatcher-only scenario: http, smtp, "
            + "aiosmtpd (default all three; quick http).")
    List<String> dispatchProviders;

    @Option(names = "--dispatch-warmup", description = "Emails drained untimed before each dispatcher-only drain (default "
            + "30000; quick 20). Fewer measure the JIT: after 3,000 the C2 compiler still took more CPU than the handlers.")
    Integer dispatchWarmup;

    @Option(names = "--dispatch-attachment-kib", description = "Give every email of the dispatcher-only scenario one "
            + "attachment of this many KiB (its own random bytes, a PDF's content type; issue 27). Default 0: none.")
    int dispatchAttachmentKib;

    @Option(names = "--dispatch-census", description = "Emails of the dispatcher-only statement census (default 2000; quick 200; 0: skip).")
    Integer dispatchCensus;

    @Option(names = "--dispatch-queue-messages", description = "Messages of the dispatcher-only scenario's no-op queue reference "
            + "(batch 100, attempts on; default 100000; quick 500; 0: skip).")
    Integer dispatchQueueMessages;

    @Option(names = "--dispatch-latency-seconds", description = "Seconds per paced latency run of the dispatcher-only scenario "
            + "(default 8; quick 1; 0: skip).")
    Integer dispatchLatencySeconds;

    @Option(names = "--dispatch-profile", description = "Record a JFR profile (settings=profile) of the dispatcher JVM during "
            + "the dispatcher-only HTTP drain, into the work directory.")
    boolean dispatchProfile;

    @Option(names = "--dispatch-baseline-classpath", description = "Also run every dispatcher-only drain and the census with the "
            + "dispatcher from this class path (another build, e.g. the commit before a change), before this build's, in the "
            + "same run: rows marked [before: LABEL] and [after].")
    String dispatchBaselineClassPath;

    @Option(names = "--dispatch-baseline-label", description = "What the baseline class path is, in the rows (e.g. a commit).")
    String dispatchBaselineLabel;

    @Option(names = "--memory-heap", description = "The dispatcher's -Xmx in the memory scenario (issue 28; default 256m).")
    String memoryHeap = "256m";

    @Option(names = "--memory-backlog", description = "Emails of the memory scenario's backlog, read paused and drained "
            + "(default 100000; quick 500).")
    Integer memoryBacklog;

    @Option(names = "--memory-review", description = "Emails the memory scenario's stub answers 500, so they end in review "
            + "(default 10000; quick 20).")
    Integer memoryReview;

    @Option(names = "--fsync-test", description = "Also run pg_test_fsync for this many seconds per test (0: skip).")
    int fsyncSeconds;

    @Option(names = "--no-diagnostics", description = "Skip the EXPLAIN ANALYZE diagnostics.")
    boolean noDiagnostics;

    /** The report of the last {@link #call()}, for tests. */
    Report report;

    static final class ScenarioNames extends ArrayList<String> {
        ScenarioNames() {
            super(ALL_SCENARIOS);
        }
    }

    public static void main(String[] args) {
        Logging.configure();
        System.exit(new CommandLine(new BenchCommand()).execute(args));
    }

    @Override
    public Integer call() throws Exception {
        Set<String> unknown = scenarios.stream().filter(s -> !ALL_SCENARIOS.contains(s)).collect(Collectors.toSet());
        if (!unknown.isEmpty()) {
            throw new CommandLine.ParameterException(new CommandLine(this), "unknown scenarios " + unknown
                    + "; choose from " + ALL_SCENARIOS);
        }
        Path out = output != null ? output : defaultOutput();
        Path work = out.toAbsolutePath().getParent().resolve("bench-work");
        Files.createDirectories(work);
        Instant started = Instant.now();
        report = new Report();
        QueueLoader.checkpointAfterLoad = !quick;
        Optional<Path> pgbenchPath = "none".equals(pgbench) ? Optional.empty() : PgbenchReference.find(pgbench);

        PostgresServer server = PostgresServer.get();
        try (Connection admin = server.connect(server.adminDatabase())) {
            Machine.describe(report.machine, admin);
            if (fsyncSeconds > 0) {
                report.machine.put("pg_test_fsync", Machine.fsyncSpeed(fsyncSeconds, work, admin)
                        .map(m -> (Object) m).orElse("pg_test_fsync not found or failed"));
            }
        }
        report.settings.put("mode", quick ? "quick (CI smoke run: figures are not meaningful)" : "full");
        report.settings.put("started_at", started.toString());
        report.settings.put("server", server.origin());
        report.settings.put("args", Map.of("scenarios", scenarios));
        System.out.println("Mailroom benchmarks (" + report.settings.get("mode") + ") on " + report.machine.get("cpu_model")
                + ", " + report.machine.get("logical_cpus") + " CPUs, " + report.machine.get("postgresql"));

        if (scenarios.contains("throughput")) {
            QueueThroughput.Plan plan = new QueueThroughput.Plan(or(batches, List.of(1, 10, 100, 1000), List.of(10, 100)),
                    or(messages, 100_000, 1_000), or(maxClaims, 1_000, 100), parseSweep(), refSessions, pgbenchPath,
                    or(repeat, 2, 1), or(warmup, 20_000, 0),
                    quick ? 200 : 2_000, Duration.ofMinutes(quick ? 1 : 5), work, !noDiagnostics);
            report.settings.put("throughput", plan.toString());
            timed("throughput", () -> new QueueThroughput(plan).run(report));
        }
        List<String> serviceJvm = serviceJvmOpts == null || serviceJvmOpts.isBlank() ? List.of()
                : List.of(serviceJvmOpts.trim().split("\\s+"));
        if (scenarios.contains("e2e")) {
            EndToEnd.Plan plan = new EndToEnd.Plan(transports(), or(e2eOrders, 10_000, 40), or(e2eWarmup, 3_000, 10),
                    or(e2eClients, 8, 4), Duration.ofMinutes(quick ? 1 : 5), work, serviceJvm, serviceEnv, quick);
            report.settings.put("e2e", plan.toString());
            timed("e2e", () -> new EndToEnd(plan).run(report));
        }
        if (scenarios.contains("latency")) {
            List<Integer> latencyRates = or(rates, List.of(200, 1000), List.of(200));
            Duration latencyDuration = Duration.ofSeconds(or(latencySeconds, 8, 1));
            Duration latencyWarmup = quick ? Duration.ZERO : Duration.ofSeconds(2);
            CommitToHandlerLatency.Plan plan = new CommitToHandlerLatency.Plan(latencyRates, latencyDuration, latencyWarmup, 16);
            // the services are fresh JVMs: warm them with 3,000 orders (15 s at 200/s), as scenarios 3 and 4 do
            Duration providerWarmup = quick ? Duration.ZERO : Duration.ofMillis(3_000_000L / latencyRates.getFirst());
            CommitToProviderLatency.Plan provider = new CommitToProviderLatency.Plan(latencyRates, latencyDuration,
                    providerWarmup, 16, Duration.ofMinutes(quick ? 1 : 5), work, serviceJvm, serviceEnv, quick);
            report.settings.put("latency", plan.toString());
            report.settings.put("latency_provider", provider.toString());
            timed("latency", () -> {
                Report.Section section = new CommitToHandlerLatency(plan).run(report);
                new CommitToProviderLatency(provider).run(section);
            });
        }
        if (scenarios.contains("enqueue")) {
            EnqueueOverhead.Plan plan = new EnqueueOverhead.Plan(or(enqueueThreads, 4, 2), or(enqueueOrders, 500, 50),
                    quick ? 1 : 2, quick ? 10 : 200);
            report.settings.put("enqueue", plan.toString());
            timed("enqueue", () -> new EnqueueOverhead(plan).run(report));
        }
        if (scenarios.contains("scaling")) {
            Scaling.Plan plan = new Scaling.Plan(or(processes, List.of(1, 2, 4), List.of(1, 2)),
                    or(scalingMessages, 50_000, 1_000), 100, 200, quick ? 0 : 2_000,
                    Duration.ofMinutes(quick ? 1 : 5), work);
            report.settings.put("scaling", plan.toString());
            timed("scaling", () -> new Scaling(plan).run(report));
        }

        if (scenarios.contains("dispatch-only")) {
            DispatchOnly.Plan plan = new DispatchOnly.Plan(dispatchProviders(), or(dispatchEmails, 20_000, 100),
                    or(dispatchAiosmtpdEmails, 5_000, 300), or(dispatchWarmup, 30_000, 20), 100, or(dispatchCensus, 2_000, 200),
                    or(dispatchQueueMessages, 100_000, 500), quick ? 0 : 20_000, 200, 0.8,
                    Duration.ofSeconds(or(dispatchLatencySeconds, 8, 1)), Duration.ofMinutes(quick ? 1 : 10), work,
                    serviceJvm, serviceEnv, quick, dispatchProfile, dispatchBaselineClassPath, dispatchBaselineLabel,
                    dispatchAttachmentKib);
            report.settings.put("dispatch-only", plan.toString());
            timed("dispatch-only", () -> new DispatchOnly(plan).run(report));
        }

        if (scenarios.contains("memory")) {
            DispatcherMemory.Plan plan = new DispatcherMemory.Plan(memoryHeap, or(memoryBacklog, 100_000, 500),
                    or(memoryReview, 10_000, 20), or(dispatchWarmup, 3_000, 20), Duration.ofMinutes(quick ? 1 : 10), work,
                    serviceEnv, quick);
            report.settings.put("memory", plan.toString());
            timed("memory", () -> new DispatcherMemory(plan).run(report));
        }

        report.settings.put("duration_seconds", Duration.between(started, Instant.now()).toSeconds());
        report.settings.put("load_average_at_end", LoadAverage.oneMinute());
        report.writeJson(out);
        System.out.println();
        System.out.println("All results: " + out.toAbsolutePath() + " (" + report.settings.get("duration_seconds") + " s)");
        boolean failed = report.sections.stream().flatMap(s -> s.rows.stream())
                .anyMatch(r -> Report.FAILED.equals(r.get("status")));
        return failed ? 2 : 0;
    }

    @FunctionalInterface
    private interface Step {
        void run() throws Exception;
    }

    /** Runs one scenario, records how long it took, and prints its sections. */
    private void timed(String scenario, Step step) throws Exception {
        long t0 = System.nanoTime();
        step.run();
        long seconds = Math.round((System.nanoTime() - t0) / 1e9);
        @SuppressWarnings("unchecked")
        Map<String, Object> durations = (Map<String, Object>) report.settings.computeIfAbsent("scenario_seconds",
                k -> new java.util.LinkedHashMap<String, Object>());
        durations.put(scenario, seconds);
        printLast();
        System.out.println("  (" + scenario + ": " + seconds + " s)");
    }

    private int printed;

    /** Prints the sections added since the last call, so a long run shows results as they come. */
    private void printLast() {
        for (int i = printed; i < report.sections.size(); i++) {
            Report.printSection(System.out, report.sections.get(i));
        }
        System.out.flush();
        printed = report.sections.size();
    }

    private <T> T or(T given, T full, T quickValue) {
        return given != null ? given : quick ? quickValue : full;
    }

    private List<MailPipeline.Transport> transports() {
        List<MailPipeline.Transport> out = new ArrayList<>();
        for (String t : e2eTransports) {
            try {
                out.add(MailPipeline.Transport.valueOf(t.trim().toUpperCase(java.util.Locale.ROOT)));
            } catch (IllegalArgumentException e) {
                throw new CommandLine.ParameterException(new CommandLine(this), "--e2e-transports takes http and/or smtp, got "
                        + t);
            }
        }
        return out;
    }

    private List<DispatchOnly.Provider> dispatchProviders() {
        List<String> names = dispatchProviders != null ? dispatchProviders : quick ? List.of("http") : List.of("http", "smtp", "aiosmtpd");
        List<DispatchOnly.Provider> out = new ArrayList<>();
        for (String p : names) {
            try {
                out.add(DispatchOnly.Provider.valueOf(p.trim().toUpperCase(java.util.Locale.ROOT)));
            } catch (IllegalArgumentException e) {
                throw new CommandLine.ParameterException(new CommandLine(this), "--dispatch-providers takes http, smtp and/or "
                        + "aiosmtpd, got " + p);
            }
        }
        return out;
    }

    private List<List<Integer>> parseSweep() {
        List<String> pairs = sweep != null ? sweep : quick ? List.of() : List.of("100:100", "100:200", "100:800");
        List<List<Integer>> out = new ArrayList<>();
        for (String p : pairs) {
            if (p.isBlank() || p.equals("none")) {
                continue;
            }
            String[] bc = p.split(":");
            if (bc.length != 2) {
                throw new CommandLine.ParameterException(new CommandLine(this), "--sweep takes batch:concurrency pairs, got " + p);
            }
            out.add(List.of(Integer.parseInt(bc[0].trim()), Integer.parseInt(bc[1].trim())));
        }
        return out;
    }

    private static Path defaultOutput() {
        Path fromRoot = Path.of("benchmarks", "pom.xml");
        return Files.exists(fromRoot) ? Path.of("benchmarks", "target", "bench-results.json")
                : Path.of("target", "bench-results.json");
    }

    @Override
    public String toString() {
        return "BenchCommand" + Arrays.asList(quick, scenarios);
    }
}
