package io.mailroom.chaos;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import io.mailroom.testing.ChildJvm;
import io.mailroom.testing.PgBouncer;
import io.mailroom.testing.TestDatabase;
import io.mailroom.testing.TestDatabases;
import org.jooq.DSLContext;
import org.jooq.SQLDialect;
import org.jooq.impl.DSL;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

/**
 * One chaos run, end to end: a fresh database, a fault-injecting provider stub (or SMTP sink)
 * process, three dispatcher processes ({@code mailroom dispatcher run}), an order writer, and a
 * seeded timeline of faults ({@code kill -9} of dispatchers, {@code pg_terminate_backend} of their
 * sessions, a provider outage, optionally one PostgreSQL restart); then a drain, and the checks of
 * {@link ChaosCheck} over the database, the provider's record and the dispatchers' logs.
 *
 * <pre>
 * scripts/chaos.sh                      # the short HTTP run (what CI runs through ChaosShortRunTest)
 * scripts/chaos.sh --transport smtp     # the short SMTP run, review mode
 * scripts/chaos.sh --long               # 25 minutes, 24,000 orders, one PostgreSQL restart (by hand only)
 * scripts/chaos-pgbouncer.sh            # the short HTTP run with every dispatcher and the order writer
 *                                       # going through a PgBouncer of its own in transaction mode
 * </pre>
 *
 * Exit status 0 when every check passed, 1 when any failed, 2 for bad options.
 */
public final class ChaosRun {

    private static final Logger log = LoggerFactory.getLogger(ChaosRun.class);
    /** The provider stub's token travels in its environment, not on its command line (where ps shows it). */
    static final String TOKEN_ENV = "CHAOS_PROVIDER_TOKEN";
    private static final List<String> SMALL_JVM = List.of("-Xmx128m", "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1");
    static final String FROM = "Chaos Shop <shop@example.com>";

    /** A fault the harness injected: when it started and ended, what, and on what. */
    record Fault(long at, long until, String kind, String detail) {
    }

    /** Server sessions PgBouncer keeps for the whole fleet and the order writer, in a run through it. */
    static final int PGBOUNCER_SERVER_SESSIONS = 20;

    private final ChaosOptions o;
    private final boolean throughPgBouncer;
    /** {@code host:port,host:port} of a primary and its replica, or null: every URL becomes multi-host, targetServerType=primary. */
    private String failoverHosts;
    private final Random random;
    private final List<Fault> faults = Collections.synchronizedList(new ArrayList<>());
    private final String token = newToken();
    private final HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(1)).build();

    private ChildJvm provider;
    private int providerPort;
    private int sinkPort;
    private volatile long outageStart;
    private volatile long outageEnd;

    public ChaosRun(ChaosOptions options) {
        this(options, false);
    }

    /**
     * @param throughPgBouncer the dispatchers and the order writer reach PostgreSQL through a PgBouncer
     *                         process of this run ({@code pool_mode = transaction}), with
     *                         {@code MAILROOM_DB_POOLER=pgbouncer} and a direct LISTEN session; the
     *                         orchestrator's checks and session kills stay direct
     */
    public ChaosRun(ChaosOptions options, boolean throughPgBouncer) {
        this.o = options;
        this.throughPgBouncer = throughPgBouncer;
        this.random = new Random(options.seed());
    }

    public static void main(String[] args) {
        ChaosOptions options;
        boolean pgbouncer = java.util.Arrays.asList(args).contains("--pgbouncer");
        String failover = null;
        List<String> rest = new ArrayList<>();
        for (int i = 0; i < args.length; i++) {
            if (args[i].equals("--failover-hosts") && i + 1 < args.length) {
                failover = args[++i];
            } else if (!args[i].equals("--pgbouncer")) {
                rest.add(args[i]);
            }
        }
        try {
            options = ChaosOptions.parse(rest.toArray(String[]::new));
        } catch (IllegalArgumentException e) {
            System.err.println("chaos: " + e.getMessage());
            System.exit(2);
            return;
        }
        ChaosReport report;
        try {
            ChaosRun run = new ChaosRun(options, pgbouncer);
            run.failoverHosts = failover;
            report = run.run();
        } catch (Exception e) {
            log.error("Chaos run could not complete", e);
            System.exit(1);
            return;
        }
        System.exit(report.passed() ? 0 : 1);
    }

    /** Runs everything and returns the report (also printed and written to {@link ChaosOptions#summaryFile()}). */
    public ChaosReport run() throws Exception {
        Path dir = o.workDir().toAbsolutePath();
        prepare(dir);
        log.info("Chaos run ({}, seed {}): {} of load at {} orders/s, {} dispatchers; logs in {}", o.transport(), o.seed(),
                o.load(), o.ordersPerSecond(), o.dispatchers(), dir);
        TestDatabase db = TestDatabases.create();
        boolean keepDatabase = false;
        HikariDataSource control = pool(db, "chaos-orchestrator", 4, failoverHosts);
        DSLContext dsl = DSL.using(control, SQLDialect.POSTGRES);
        PgBouncer bouncer = throughPgBouncer ? startPgBouncer(db, dsl) : null;
        HikariDataSource orders = bouncer == null ? pool(db, "chaos-orders", 4, failoverHosts) : pooled(bouncer, "chaos-orders", 4);
        DispatcherFleet fleet = null;
        OrderWriter writer = null;
        BreakerWatch watch = null;
        ScheduledExecutorService timeline = Executors.newScheduledThreadPool(2,
                Thread.ofPlatform().name("chaos-fault-", 0).daemon().factory());
        try {
            Map<String, String> env = startProvider(dir);
            String fleetUrl = multiHost(db.jdbcUrlWithCredentials(), failoverHosts);
            if (bouncer != null) {
                fleetUrl = bouncer.jdbcUrlDefaults(); // the service adds prepareThreshold=0 itself
                env.put("MAILROOM_DB_POOLER", "pgbouncer");
                env.put("MAILROOM_LISTEN_DB_URL", db.jdbcUrlWithCredentials());
            }
            fleet = new DispatcherFleet(o.dispatchers(), fleetUrl, env, dir);
            for (DispatcherFleet.Slot s : fleet.slots()) {
                fleet.start(s);
            }
            fleet.awaitLive(Duration.ofSeconds(120));
            log.info("{} dispatchers live; writing orders", o.dispatchers());

            long loadStart = System.currentTimeMillis();
            watch = new BreakerWatch(fleet, control, Duration.ofMillis(250));
            writer = new OrderWriter(orders, o.ordersPerSecond());
            schedule(timeline, fleet, dsl, dir);
            Thread.sleep(o.load().toMillis());
            writer.close();
            timeline.shutdownNow();
            if (!timeline.awaitTermination(90, TimeUnit.SECONDS)) {
                log.warn("A fault was still running after the load ended");
            }
            restoreEverything(fleet, dir);
            long loadEnd = System.currentTimeMillis();
            log.info("Load over: {} orders attempted, {} acknowledged; draining", writer.attempted(),
                    writer.acknowledged().size());

            long drained = drain(dsl, fleet, dir);
            watch.close();
            ChaosCheck check = new ChaosCheck(o, dsl, writer, fleet, watch, List.copyOf(faults), dir, loadStart, loadEnd,
                    outageStart, outageEnd);
            ChaosReport report = check.run(drained);
            if (bouncer != null) {
                report.note("dispatchers and order writer through PgBouncer " + "(pool_mode = transaction, "
                        + PGBOUNCER_SERVER_SESSIONS + " server sessions); LISTEN and the checks direct");
            }
            keepDatabase = !report.passed();
            if (keepDatabase) {
                report.note("database " + db.name() + " kept for inspection (dropped by the test harness after 3 hours)");
            }
            String table = report.markdown();
            System.out.println(table);
            Path summary = summaryFile();
            Files.writeString(summary, table);
            log.info("Summary written to {}", summary);
            return report;
        } finally {
            timeline.shutdownNow();
            if (writer != null) {
                writer.close();
            }
            if (watch != null) {
                watch.close();
            }
            if (fleet != null) {
                fleet.stopAll(20);
                fleet.close();
            }
            if (provider != null) {
                provider.stop(5);
            }
            http.close();
            control.close();
            orders.close();
            if (bouncer != null) {
                bouncer.close();
            }
            if (!keepDatabase && failoverHosts == null) { // after a failover the old primary is gone: the cluster goes with it
                db.close();
            }
        }
    }

    // ------------------------------------------------------------------------------------ set-up

    /** The summary table's file: beside the plain run's, with {@code -pgbouncer} through the pooler. */
    Path summaryFile() {
        Path plain = o.summaryFile();
        if (failoverHosts != null) {
            return plain.resolveSibling("chaos-summary-" + o.workDir().getFileName() + ".md");
        }
        return throughPgBouncer ? plain.resolveSibling(plain.getFileName().toString().replace(".md", "-pgbouncer.md")) : plain;
    }

    private static PgBouncer startPgBouncer(TestDatabase db, DSLContext direct) throws IOException {
        URI uri = URI.create(db.jdbcUrl().substring("jdbc:".length()));
        String user = String.valueOf(direct.fetchValue("SELECT current_user"));
        PgBouncer bouncer = PgBouncer.start(uri.getHost(), uri.getPort(), db.name(), user, PGBOUNCER_SERVER_SESSIONS);
        log.info("PgBouncer (transaction mode) on port {} in front of {}", bouncer.port(), db.name());
        return bouncer;
    }

    private static HikariDataSource pooled(PgBouncer bouncer, String applicationName, int size) {
        HikariConfig c = new HikariConfig();
        c.setJdbcUrl(bouncer.jdbcUrl() + "&ApplicationName=" + applicationName);
        c.setMaximumPoolSize(size);
        c.setPoolName(applicationName);
        c.setConnectionTimeout(10_000);
        return new HikariDataSource(c);
    }

    private static void prepare(Path dir) throws IOException {
        Files.createDirectories(dir);
        try (Stream<Path> old = Files.list(dir)) {
            for (Path p : old.toList()) {
                if (Files.isRegularFile(p)) {
                    Files.delete(p);
                }
            }
        }
    }

    /** {@code url} with its host:port replaced by {@code hosts} and {@code targetServerType=primary}; as it is when null. */
    static String multiHost(String url, String hosts) {
        if (hosts == null) {
            return url;
        }
        java.util.regex.Matcher m = java.util.regex.Pattern.compile("^jdbc:postgresql://([^/]+)(/.*)$").matcher(url);
        if (!m.matches()) {
            throw new IllegalArgumentException("not a jdbc:postgresql://host:port/... URL");
        }
        String rest = m.group(2);
        return "jdbc:postgresql://" + hosts + rest + (rest.contains("?") ? "&" : "?") + "targetServerType=primary";
    }

    private static HikariDataSource pool(TestDatabase db, String applicationName, int size, String failoverHosts) {
        HikariConfig c = new HikariConfig();
        String url = multiHost(db.jdbcUrl(), failoverHosts);
        c.setJdbcUrl(url + (url.contains("?") ? "&" : "?") + "ApplicationName=" + applicationName);
        if (db.user() != null) {
            c.setUsername(db.user());
        }
        if (db.password() != null) {
            c.setPassword(db.password());
        }
        c.setMaximumPoolSize(size);
        c.setPoolName(applicationName);
        c.setConnectionTimeout(10_000);
        return new HikariDataSource(c);
    }

    /** Starts the provider stub or the SMTP sink; returns the dispatchers' MAILROOM_* settings for it. */
    private Map<String, String> startProvider(Path dir) throws Exception {
        Map<String, String> env = new HashMap<>();
        env.put("MAILROOM_TEMPLATES_DIR", io.mailroom.orders.ShopTemplates.temporaryCopy().toString()); // the shop's templates
        env.put("MAILROOM_LEASE", millis(o.lease()));
        env.put("MAILROOM_POLL_INTERVAL", "500ms");
        env.put("MAILROOM_CONCURRENCY", "8");
        env.put("MAILROOM_BATCH_SIZE", "20");
        // MAILROOM_DB_POOL_SIZE left to the formula (11 sessions at concurrency 8): 6 no longer fits one
        env.put("MAILROOM_SHUTDOWN_DEADLINE", "10s");
        env.put("MAILROOM_BREAKER_OPEN_WAIT", millis(o.breakerOpenWait()));
        env.put("MAILROOM_MAIL_FROM", FROM);
        // the parent's database settings must not leak into the children
        env.put("MAILROOM_DB_USER", null);
        env.put("MAILROOM_DB_PASSWORD", null);
        if (o.transport() == ChaosOptions.Transport.HTTP) {
            providerPort = startStub(dir);
            env.put("MAILROOM_TRANSPORT", "http");
            env.put("MAILROOM_HTTP_BASE_URL", "http://127.0.0.1:" + providerPort);
            env.put("MAILROOM_HTTP_TOKEN", token);
            env.put("MAILROOM_HTTP_TIMEOUT", millis(o.httpTimeout()));
            env.put("MAILROOM_HTTP_CONNECT_TIMEOUT", "1000ms");
            env.put("MAILROOM_HTTP_KEY_WINDOW", millis(o.keyWindow()));
        } else {
            sinkPort = DispatcherFleet.freePort();
            startSink(dir);
            env.put("MAILROOM_TRANSPORT", "smtp");
            env.put("MAILROOM_SMTP_HOST", "127.0.0.1");
            env.put("MAILROOM_SMTP_PORT", Integer.toString(sinkPort));
            env.put("MAILROOM_SMTP_SECURITY", "none");
            env.put("MAILROOM_SMTP_FROM", FROM);
            env.put("MAILROOM_SMTP_AMBIGUOUS", "review");
            env.put("MAILROOM_SMTP_CONNECT_TIMEOUT", "1000ms");
            env.put("MAILROOM_SMTP_READ_TIMEOUT", "5000ms");
        }
        return env;
    }

    private int startStub(Path dir) throws Exception {
        Path portFile = dir.resolve("provider.port");
        provider = ChildJvm.of("provider-stub", ProviderStub.class.getName()).jvmOptions(SMALL_JVM)
                .args(List.of("--record", dir.resolve("provider.rec").toString(),
                        "--port-file", portFile.toString(), "--seed", Long.toString(o.seed()),
                        "--p500", Double.toString(o.p500()), "--p429", Double.toString(o.p429()),
                        "--p-hang", Double.toString(o.pHang()), "--hang", millis(o.hang()),
                        "--key-window", millis(o.keyWindow())))
                .env(Map.of(TOKEN_ENV, token)).log(dir.resolve("provider-stub.log")).appendLog().start();
        return awaitPort(portFile, provider);
    }

    private void startSink(Path dir) throws Exception {
        Path portFile = dir.resolve("sink.port");
        Files.deleteIfExists(portFile);
        // the same log for every life of the sink (it is killed and restarted): appended to
        provider = ChildJvm.of("smtp-sink", RecordedSmtpSink.class.getName()).jvmOptions(SMALL_JVM)
                .args(List.of("--port", Integer.toString(sinkPort),
                        "--record", dir.resolve("sink.rec").toString(), "--port-file", portFile.toString(),
                        "--seed", Long.toString(o.seed() + faults.size()),
                        "--p-drop-before", Double.toString(o.pDropBeforeData()), "--p451", Double.toString(o.p451()),
                        "--p-drop-after", Double.toString(o.pDropAfterData())))
                .log(dir.resolve("smtp-sink.log")).appendLog().start();
        awaitPort(portFile, provider);
    }

    private static int awaitPort(Path portFile, ChildJvm jvm) throws Exception {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
        while (!Files.exists(portFile)) {
            if (!jvm.isAlive()) {
                throw new IllegalStateException(jvm.name() + " exited during start-up; see " + jvm.log());
            }
            if (System.nanoTime() > deadline) {
                throw new IllegalStateException(jvm.name() + " did not start listening within 60 s; see " + jvm.log());
            }
            Thread.sleep(100);
        }
        return Integer.parseInt(Files.readString(portFile).trim());
    }

    // ----------------------------------------------------------------------------------- faults

    /** Lays the seeded timeline of faults over the load. */
    private void schedule(ScheduledExecutorService timeline, DispatcherFleet fleet, DSLContext dsl, Path dir) {
        long loadMillis = o.load().toMillis();
        for (long at : times(o.killEvery(), loadMillis)) {
            int victim = random.nextInt(fleet.slots().size());
            long restartDelay = 1000 + random.nextInt(2000);
            timeline.schedule(() -> kill(fleet, victim, restartDelay, timeline), at, TimeUnit.MILLISECONDS);
        }
        for (long at : times(o.terminateEvery(), loadMillis)) {
            timeline.schedule(() -> terminateSessions(dsl), at, TimeUnit.MILLISECONDS);
        }
        if (o.transport() == ChaosOptions.Transport.HTTP) {
            if (!o.outage().isZero()) {
                timeline.schedule(this::httpOutage, o.outageAt().toMillis(), TimeUnit.MILLISECONDS);
            }
        } else {
            if (!o.outage().isZero()) {
                timeline.schedule(() -> sinkOutage(dir), o.outageAt().toMillis(), TimeUnit.MILLISECONDS);
            }
            for (long at : times(o.sinkKillEvery(), loadMillis)) {
                if (at < o.outageAt().toMillis() - 2000 || at > o.outageAt().plus(o.outage()).toMillis() + 2000) {
                    timeline.schedule(() -> sinkKill(dir), at, TimeUnit.MILLISECONDS);
                }
            }
        }
        if (o.restartPostgres()) {
            timeline.schedule(this::restartPostgres, o.restartAt().toMillis(), TimeUnit.MILLISECONDS);
        }
    }

    /** Offsets of a Poisson process with mean interval {@code every}, from 5 s to 5 s before the end. */
    private List<Long> times(Duration every, long loadMillis) {
        List<Long> out = new ArrayList<>();
        if (every.isZero()) {
            return out;
        }
        double mean = every.toMillis();
        long t = 5000;
        while (true) {
            t += Math.max(2000, (long) (-mean * Math.log(1 - random.nextDouble())));
            if (t > loadMillis - 5000) {
                return out;
            }
            out.add(t);
        }
    }

    private void kill(DispatcherFleet fleet, int slotIndex, long restartDelay, ScheduledExecutorService timeline) {
        DispatcherFleet.Slot slot = fleet.slots().get(slotIndex);
        DispatcherFleet.Incarnation killed = fleet.kill9(slot);
        if (killed == null) {
            return;
        }
        fault("kill-9", killed.workerId + " (pid " + killed.jvm.pid() + "), restart in " + restartDelay + " ms");
        try {
            timeline.schedule(() -> {
                DispatcherFleet.Incarnation next = fleet.start(slot);
                fault("restart", next.workerId);
            }, restartDelay, TimeUnit.MILLISECONDS);
        } catch (java.util.concurrent.RejectedExecutionException e) {
            // the load is over; restoreEverything() starts it again
        }
    }

    private void terminateSessions(DSLContext dsl) {
        try {
            // The victims are chosen first (MATERIALIZED), so pg_terminate_backend can only ever run on
            // this run's dispatcher sessions, whatever order the planner evaluates conditions in.
            List<String> names = dsl.fetch("""
                    WITH victims AS MATERIALIZED (
                      SELECT pid, application_name FROM pg_stat_activity
                      WHERE datname = current_database() AND application_name LIKE ? AND pid <> pg_backend_pid())
                    SELECT application_name FROM victims WHERE pg_terminate_backend(pid)""",
                    DispatcherFleet.APPLICATION_PREFIX + "%").getValues(0, String.class);
            fault("pg_terminate_backend", names.size() + " dispatcher sessions " + new java.util.TreeSet<>(names));
        } catch (RuntimeException e) {
            log.warn("pg_terminate_backend round failed: {}", e.toString());
        }
    }

    private void httpOutage() {
        outageStart = System.currentTimeMillis();
        outageEnd = outageStart + o.outage().toMillis();
        try {
            http.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + providerPort + "/control/outage?millis="
                    + o.outage().toMillis())).POST(HttpRequest.BodyPublishers.noBody()).build(), HttpResponse.BodyHandlers.discarding());
            fault("provider-outage", o.outage().toSeconds() + " s of 503");
        } catch (IOException e) {
            log.error("Could not start the provider outage", e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    private void sinkOutage(Path dir) {
        outageStart = System.currentTimeMillis();
        provider.kill9();
        fault("smtp-sink-outage", "sink killed for " + o.outage().toSeconds() + " s");
        try {
            Thread.sleep(o.outage().toMillis());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        try {
            startSink(dir);
        } catch (Exception e) {
            log.error("Could not restart the SMTP sink", e);
        }
        outageEnd = System.currentTimeMillis();
    }

    private void sinkKill(Path dir) {
        provider.kill9();
        fault("smtp-sink-kill-9", "restarted at once");
        try {
            startSink(dir);
        } catch (Exception e) {
            log.error("Could not restart the SMTP sink", e);
        }
    }

    private void restartPostgres() {
        long started = System.currentTimeMillis();
        try {
            Process p = new ProcessBuilder("sh", "-c", o.restartCommand()).redirectErrorStream(true)
                    .redirectOutput(o.workDir().toAbsolutePath().resolve("postgres-restart.log").toFile()).start();
            boolean done = p.waitFor(120, TimeUnit.SECONDS);
            long ended = System.currentTimeMillis();
            fault(started, ended, "postgres-restart", "'" + o.restartCommand() + "' " + (done ? "exit " + p.exitValue() : "timed out")
                    + " after " + (ended - started) + " ms");
        } catch (IOException e) {
            log.error("Could not restart PostgreSQL", e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    private void fault(String kind, String detail) {
        long now = System.currentTimeMillis();
        fault(now, now, kind, detail);
    }

    private void fault(long at, long until, String kind, String detail) {
        faults.add(new Fault(at, until, kind, detail));
        log.info("Fault: {} {}", kind, detail);
    }

    /** After the load: every slot has a running dispatcher and the provider is up. */
    private void restoreEverything(DispatcherFleet fleet, Path dir) throws Exception {
        for (DispatcherFleet.Slot s : fleet.slots()) {
            if (!s.alive()) {
                DispatcherFleet.Incarnation next = fleet.start(s);
                fault("restart", next.workerId + " (after the load)");
            }
        }
        if (!provider.isAlive()) {
            if (o.transport() == ChaosOptions.Transport.HTTP) {
                throw new IllegalStateException("the provider stub died; see " + provider.log());
            }
            startSink(dir);
        }
        fleet.awaitLive(Duration.ofSeconds(120));
    }

    /** Waits until no message is pending or running; returns how long it took, or -1 on timeout. */
    private long drain(DSLContext dsl, DispatcherFleet fleet, Path dir) throws Exception {
        long start = System.currentTimeMillis();
        long deadline = start + o.drain().toMillis();
        long lastLog = 0;
        while (true) {
            int open = dsl.fetchSingle("SELECT count(*) FROM mailroom.outbox_message WHERE status IN ('pending', 'running')")
                    .get(0, Integer.class);
            if (open == 0) {
                return System.currentTimeMillis() - start;
            }
            long now = System.currentTimeMillis();
            if (now > deadline) {
                log.warn("Drain timed out with {} messages pending or running", open);
                return -1;
            }
            if (now - lastLog > 10_000) {
                log.info("Draining: {} messages pending or running", open);
                lastLog = now;
            }
            for (DispatcherFleet.Slot s : fleet.slots()) {
                if (!s.alive()) {
                    throw new IllegalStateException("dispatcher " + s.current.workerId + " died during the drain; see "
                            + s.current.jvm.log());
                }
            }
            Thread.sleep(500);
        }
    }

    /** A provider token for this run only: a secret like a real one, never printed. */
    private static String newToken() {
        byte[] bytes = new byte[16];
        new java.security.SecureRandom().nextBytes(bytes);
        return "tok_" + HexFormat.of().formatHex(bytes);
    }

    private static String millis(Duration d) {
        return d.toMillis() + "ms";
    }
}
