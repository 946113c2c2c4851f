package io.mailroom.chaos;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import io.mailroom.email.service.DispatcherService;
import io.mailroom.email.service.MailroomCli;
import io.mailroom.outbox.NewMessage;
import io.mailroom.outbox.OutboxEnqueuer;
import io.mailroom.testing.ChildJvm;
import io.mailroom.testing.TestDatabase;
import io.mailroom.testing.TestDatabases;
import org.jooq.DSLContext;
import org.jooq.Record;
import org.jooq.SQLDialect;
import org.jooq.impl.DSL;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;

/**
 * Dispatchers on separate "hosts": three network namespaces of this run's own, each with one veth on
 * a bridge in a private range only this run uses ({@value #SUBNET}.0/24), PostgreSQL and the provider
 * stub reached through forwarders of the run's own on the bridge's address (the server's own
 * configuration stays as it is). The forwarders hold what the hosts send for an adjustable delay
 * ({@link DelayingForwarder}; this kernel has no {@code sch_netem} for {@code tc netem}), so the same
 * fleet is measured first with no added latency, then with {@code --latency} (50 ms) per round trip:
 * throughput of a burst and commit-to-accept latency of a paced trickle. Then one host is cut off
 * ({@code ip link set eth0 down} in its namespace) for longer than the lease while its process keeps
 * running and holds claims; its claims must be rescued and finished elsewhere, and when it comes
 * go on working. Everything this run creates is removed at the end. Without root or
 * go on working. Everything this run creates is removed at the end. Without root, {@code ip} or
 * {@code ip} it says so and exits 0.
 *
 * <pre>
 * scripts/chaos-partition.sh                       # short: 240 emails, a 20 s cut (lease 8 s), then new ones until the cut host sends again
 * scripts/chaos-partition.sh --messages 2000 --cut 60s
 * </pre>
 */
public final class PartitionRun {

    private static final Logger log = LoggerFactory.getLogger(PartitionRun.class);
    static final String SUBNET = "10.216.77";
    static final String GATEWAY = SUBNET + ".1";
    static final String BRIDGE = "mr16br0";
    private static final int HOSTS = 3;
    private static final int HEALTH_PORT = 8082;

    private final int messages;
    private final Duration lease;
    private final Duration cut;
    private final Path dir;
    private final HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(1)).build();
    private final List<DelayingForwarder> forwarders = new ArrayList<>();
    private Duration latency = Duration.ofMillis(50);
    private int burst = 200;
    private int paceRate = 20;
    private Duration paceFor = Duration.ofSeconds(5);

    /** One pass of the latency comparison: a burst's throughput and a paced trickle's commit-to-accept latency. */
    record LatencyPhase(Duration added, int burst, double burstPerSecond, int paced, int rate, long p50, long p99, long max) {
    }

    PartitionRun(int messages, Duration lease, Duration cut, Path dir) {
        if (cut.compareTo(lease.plusSeconds(2)) <= 0) {
            throw new IllegalArgumentException("--cut (" + cut + ") must be longer than --lease (" + lease + ") + 2 s");
        }
        this.messages = messages;
        this.lease = lease;
        this.cut = cut;
        this.dir = dir;
    }

    public static void main(String[] argv) throws Exception {
        Args a = Args.parse(argv);
        String missing = missingTooling();
        if (missing != null) {
            System.out.println("partition run: skipped, " + missing);
            return;
        }
        PartitionRun run = new PartitionRun(a.integer("messages", 240), a.duration("lease", Duration.ofSeconds(8)),
                a.duration("cut", Duration.ofSeconds(20)), Path.of(a.string("work-dir", "tools/chaos/target/chaos-partition")));
        run.latency = a.duration("latency", run.latency);
        run.burst = a.integer("burst", run.burst);
        run.paceRate = a.integer("pace-rate", run.paceRate);
        run.paceFor = a.duration("pace-for", run.paceFor);
        boolean passed;
        try {
            passed = run.run();
        } catch (Exception e) {
            log.error("Partition run could not complete", e);
            passed = false;
        }
        System.exit(passed ? 0 : 1);
    }

    /** Null when this machine can run it; otherwise why not. */
    static String missingTooling() {
        if (!"root".equals(System.getProperty("user.name"))) {
            return "network namespaces need root";
        }
        if (!Files.isExecutable(Path.of("/usr/sbin/ip"))) {
            return "/usr/sbin/ip is missing (apt-get install iproute2)";
        }
        return null;
    }

    boolean run() throws Exception {
        Files.createDirectories(dir);
        try (var old = Files.list(dir)) { // the provider's record of an earlier run must not count in this one
            for (Path p : old.toList()) {
                if (Files.isRegularFile(p)) {
                    Files.delete(p);
                }
            }
        }
        TestDatabase db = TestDatabases.create();
        HikariDataSource control = pool(db);
        DSLContext dsl = DSL.using(control, SQLDialect.POSTGRES);
        ChildJvm provider = null;
        List<ChildJvm> dispatchers = new ArrayList<>();
        try {
            networkUp();
            URI dbUri = URI.create(db.jdbcUrlWithCredentials().substring("jdbc:".length()));
            forward(dbUri.getPort(), dbUri.getHost(), dbUri.getPort());
            String token = "tok_" + HexFormat.of().formatHex(new java.security.SecureRandom().generateSeed(12));
            Path portFile = dir.resolve("provider.port");
            Files.deleteIfExists(portFile);
            provider = ChildJvm.of("provider-stub", ProviderStub.class.getName())
                    .jvmOptions(List.of("-Xmx128m", "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1"))
                    .args(List.of("--record", dir.resolve("provider.rec").toString(), "--port-file", portFile.toString(),
                            "--seed", "16", "--p500", "0", "--p429", "0",
                            // answered at once for the latency comparison; then (control/hang) every send
                            // answered after 300 ms, well within the 2 s timeout: a provider slow enough that
                            // each host always has sends (and so claims) in flight when one is cut off
                            "--p-hang", "0", "--hang", "300ms",
                            "--key-window", "1800000ms"))
                    .env(Map.of(ChaosRun.TOKEN_ENV, token)).log(dir.resolve("provider-stub.log")).start();
            int providerPort = awaitPort(portFile, provider);
            forward(providerPort, "127.0.0.1", providerPort);

            String dbUrl = "jdbc:postgresql://" + GATEWAY + ":" + dbUri.getPort() + dbUri.getPath()
                    + (dbUri.getQuery() == null ? "" : "?" + dbUri.getQuery());
            for (int h = 1; h <= HOSTS; h++) {
                dispatchers.add(startDispatcher(h, dbUrl, providerPort, token));
            }
            for (int h = 1; h <= HOSTS; h++) {
                awaitLive(h, dispatchers.get(h - 1));
            }
            List<LatencyPhase> phases = new ArrayList<>();
            for (Duration added : List.of(Duration.ZERO, latency)) {
                phases.add(measure(dsl, added, phases.size()));
            }
            control(providerPort, "/control/hang?p=1");
            log.info("{} dispatcher hosts live ({} ms added per round trip); enqueuing {} emails", HOSTS, latency.toMillis(), messages);
            List<Long> firstBatch = enqueue(dsl, 1, messages);

            String zombie = worker(1);
            long deadline = System.nanoTime() + TimeUnit.MINUTES.toNanos(2);
            while (running(dsl, zombie) < 3) {
                if (System.nanoTime() > deadline) {
                    throw new IllegalStateException(zombie + " never held 3 claims at once");
                }
                Thread.sleep(5);
            }
            ip("-n", ns(1), "link", "set", "eth0", "down");
            long cutAt = System.currentTimeMillis();
            // what the zombie holds as seen from the database once it is gone: its committed claims
            Map<Long, Long> held = new LinkedHashMap<>();
            for (Record r : dsl.fetch("SELECT id, claim_version FROM mailroom.outbox_message WHERE status = 'running' AND claimed_by = ?", zombie)) {
                held.put(r.get(0, Long.class), r.get(1, Long.class));
            }
            log.info("Host 1 cut off holding {} claims; the cut lasts {}, the lease is {}", held.size(), cut, lease);
            Thread.sleep(cut.toMillis());
            boolean zombieRanThrough = dispatchers.get(0).isAlive();
            int rescuedDuringCut = ((Number) dsl.fetchValue("SELECT count(*) FROM mailroom.outbox_message WHERE id = ANY(?) AND"
                    + " (claim_version > 0) AND NOT (status = 'running' AND claimed_by = ?)", held.keySet().toArray(Long[]::new), zombie)).intValue();
            ip("-n", ns(1), "link", "set", "eth0", "up");
            long backAt = System.currentTimeMillis();
            log.info("Host 1 back after {} ms (process alive throughout: {})", backAt - cutAt, zombieRanThrough);
            // a trickle of new orders until the host that was cut off sends one of them: how long it
            // takes to recover by itself (its sessions were stalled in TCP retransmission backoff)
            List<Long> secondBatch = new ArrayList<>();
            long recoverDeadline = System.currentTimeMillis() + TimeUnit.SECONDS.toMillis(120);
            long recoveredAt = -1;
            for (int round = 0; System.currentTimeMillis() < recoverDeadline; round++) {
                secondBatch.addAll(enqueue(dsl, 2 + round, 5));
                if (doneAfter(dsl, zombie, backAt) > 0) {
                    recoveredAt = System.currentTimeMillis();
                    break;
                }
                Thread.sleep(500);
            }
            secondBatch.addAll(enqueue(dsl, 100_000, messages / 4));

            long drained = drain(dsl);
            boolean zombieAliveAtEnd = dispatchers.get(0).isAlive();
            return report(dsl, dir.resolve("provider.rec"), firstBatch.size(), secondBatch.size(), held, zombie,
                    cutAt, backAt, recoveredAt, zombieRanThrough, zombieAliveAtEnd, rescuedDuringCut, drained, phases);
        } finally {
            for (ChildJvm d : dispatchers) {
                d.stop(15);
            }
            if (provider != null) {
                provider.stop(5);
            }
            forwarders.forEach(DelayingForwarder::close);
            networkDown();
            http.close();
            control.close();
            db.close();
        }
    }

    // ------------------------------------------------------------------------------- network

    private static String ns(int host) {
        return "mr16h" + host;
    }

    private static String address(int host) {
        return SUBNET + "." + (10 + host);
    }

    private static String worker(int host) {
        return "host-" + host;
    }

    private void networkUp() throws Exception {
        networkDown(); // leftovers of an interrupted run
        ip("link", "add", BRIDGE, "type", "bridge");
        ip("addr", "add", GATEWAY + "/24", "dev", BRIDGE);
        ip("link", "set", BRIDGE, "up");
        for (int h = 1; h <= HOSTS; h++) {
            ip("netns", "add", ns(h));
            ip("link", "add", "mr16v" + h, "type", "veth", "peer", "name", "eth0", "netns", ns(h));
            ip("link", "set", "mr16v" + h, "master", BRIDGE);
            ip("link", "set", "mr16v" + h, "up");
            ip("-n", ns(h), "addr", "add", address(h) + "/24", "dev", "eth0");
            ip("-n", ns(h), "link", "set", "eth0", "up");
            ip("-n", ns(h), "link", "set", "lo", "up");
        }
    }

    private void networkDown() {
        for (int h = 1; h <= HOSTS; h++) {
            // the pair explicitly: a namespace lingers (and keeps its end) while its TCP sockets close
            quietly("link", "del", "mr16v" + h);
            quietly("netns", "del", ns(h));
        }
        quietly("link", "del", BRIDGE);
    }

    private void quietly(String... args) {
        try {
            run(prepend("/usr/sbin/ip", args), false);
        } catch (Exception ignored) {
            // not there: nothing to remove
        }
    }

    private void ip(String... args) throws Exception {
        run(prepend("/usr/sbin/ip", args), true);
    }

    private static List<String> prepend(String first, String... rest) {
        List<String> c = new ArrayList<>(List.of(first));
        c.addAll(List.of(rest));
        return c;
    }

    private void run(List<String> command, boolean mustSucceed) throws Exception {
        Process p = new ProcessBuilder(command).redirectErrorStream(true).start();
        String out = new String(p.getInputStream().readAllBytes());
        int rc = p.waitFor();
        if (rc != 0 && mustSucceed) {
            throw new IllegalStateException(String.join(" ", command) + " failed (" + rc + "): " + out.strip());
        }
    }

    /** A forwarder on the bridge's address that carries the hosts' connections to a service on the loopback. */
    private void forward(int listenPort, String toHost, int toPort) throws IOException {
        forwarders.add(DelayingForwarder.start(new InetSocketAddress(GATEWAY, listenPort), new InetSocketAddress(toHost, toPort)));
    }

    /** A control request to the provider stub (on the loopback, not through a forwarder). */
    private void control(int providerPort, String pathAndQuery) throws Exception {
        HttpResponse<String> r = http.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + providerPort + pathAndQuery))
                .timeout(Duration.ofSeconds(5)).POST(HttpRequest.BodyPublishers.noBody()).build(), HttpResponse.BodyHandlers.ofString());
        if (r.statusCode() != 200) {
            throw new IllegalStateException("provider control " + pathAndQuery + " answered " + r.statusCode() + ": " + r.body());
        }
    }

    // ------------------------------------------------------------------------ latency comparison

    /**
     * The fleet with {@code added} delay on every link: first a burst of {@link #burst} emails committed in
     * one transaction (emails/s from that commit to the provider's last accept), then a trickle at
     * {@link #paceRate}/s for {@link #paceFor}, one transaction each (commit to the provider's accept,
     * per email). Times are this host's clock in both processes.
     */
    private LatencyPhase measure(DSLContext dsl, Duration added, int phase) throws Exception {
        forwarders.forEach(f -> f.delay(added));
        Path record = dir.resolve("provider.rec");
        int base = 200_000 + phase * 10_000;
        List<NewMessage> burstMessages = new ArrayList<>();
        for (int i = 1; i <= burst; i++) {
            burstMessages.add(email(base, i));
        }
        OutboxEnqueuer enqueuer = new OutboxEnqueuer();
        dsl.transaction(cfg -> {
            for (NewMessage m : burstMessages) {
                enqueuer.enqueue(cfg.dsl(), m);
            }
        });
        long burstCommit = System.currentTimeMillis();
        Map<String, Long> burstAccepted = awaitAccepted(record, burstMessages.stream().map(NewMessage::idempotencyKey).toList());
        long lastAccept = burstAccepted.values().stream().mapToLong(Long::longValue).max().orElseThrow();
        double perSecond = burst * 1000.0 / Math.max(1, lastAccept - burstCommit);

        int paced = (int) (paceRate * paceFor.toMillis() / 1000);
        Map<String, Long> committedAt = new LinkedHashMap<>();
        long start = System.nanoTime();
        for (int i = 1; i <= paced; i++) {
            long due = start + TimeUnit.MILLISECONDS.toNanos(i * 1000L / paceRate);
            long wait = due - System.nanoTime();
            if (wait > 0) {
                TimeUnit.NANOSECONDS.sleep(wait);
            }
            NewMessage m = email(base + 5_000, i);
            dsl.transaction(cfg -> enqueuer.enqueue(cfg.dsl(), m));
            committedAt.put(m.idempotencyKey(), System.currentTimeMillis());
        }
        Map<String, Long> accepted = awaitAccepted(record, List.copyOf(committedAt.keySet()));
        List<Long> delays = new ArrayList<>();
        committedAt.forEach((key, at) -> delays.add(accepted.get(key) - at));
        delays.sort(Long::compare);
        LatencyPhase p = new LatencyPhase(added, burst, perSecond, paced, paceRate, ChaosCheck.pct(delays, 50),
                ChaosCheck.pct(delays, 99), delays.getLast());
        log.info("Added latency {} ms: burst {} emails at {} emails/s; paced {} at {}/s: commit -> accept p50 {} ms, p99 {} ms",
                added.toMillis(), burst, String.format(java.util.Locale.ROOT, "%.0f", perSecond), paced, paceRate, p.p50(), p.p99());
        return p;
    }

    /** Waits (up to 2 minutes) until the provider has accepted every key; their first accept times. */
    private static Map<String, Long> awaitAccepted(Path record, List<String> keys) throws InterruptedException {
        Set<String> wanted = Set.copyOf(keys);
        long deadline = System.currentTimeMillis() + TimeUnit.MINUTES.toMillis(2);
        while (true) {
            Map<String, Long> first = new HashMap<>();
            for (Records.ProviderLine l : Records.provider(record)) {
                if (l.isEffect() && wanted.contains(l.key())) {
                    first.merge(l.key(), l.at(), Math::min);
                }
            }
            if (first.size() == keys.size()) {
                return first;
            }
            if (System.currentTimeMillis() > deadline) {
                throw new IllegalStateException("the provider accepted only " + first.size() + " of " + keys.size()
                        + " emails of the latency comparison within 2 minutes");
            }
            Thread.sleep(50);
        }
    }

    // ----------------------------------------------------------------------------- processes

    private ChildJvm startDispatcher(int host, String dbUrl, int providerPort, String token) {
        Map<String, String> env = new HashMap<>();
        env.put("MAILROOM_TEMPLATES_DIR", io.mailroom.orders.ShopTemplates.temporaryCopy().toString()); // the shop's templates
        env.put("MAILROOM_DB_URL", dbUrl + (dbUrl.contains("?") ? "&" : "?") + "ApplicationName=" + worker(host));
        env.put("MAILROOM_DB_USER", null);
        env.put("MAILROOM_DB_PASSWORD", null);
        env.put("MAILROOM_WORKER_ID", worker(host));
        env.put("MAILROOM_MIGRATE", "false");
        env.put("MAILROOM_DISPATCHER_HOST", address(host));
        env.put("MAILROOM_DISPATCHER_PORT", Integer.toString(HEALTH_PORT));
        env.put("MAILROOM_LEASE", lease.toMillis() + "ms");
        env.put("MAILROOM_POLL_INTERVAL", "500ms");
        env.put("MAILROOM_CONCURRENCY", "8");
        env.put("MAILROOM_BATCH_SIZE", "10");
        env.put("MAILROOM_SHUTDOWN_DEADLINE", "5s");
        env.put("MAILROOM_MAIL_FROM", ChaosRun.FROM);
        env.put("MAILROOM_TRANSPORT", "http");
        env.put("MAILROOM_HTTP_BASE_URL", "http://" + GATEWAY + ":" + providerPort);
        env.put("MAILROOM_HTTP_TOKEN", token);
        env.put("MAILROOM_HTTP_TIMEOUT", "2000ms");
        env.put("MAILROOM_HTTP_CONNECT_TIMEOUT", "1000ms");
        env.put("MAILROOM_HTTP_KEY_WINDOW", "1800000ms");
        return ChildJvm.of(worker(host), MailroomCli.class.getName())
                .launcher(List.of("/usr/sbin/ip", "netns", "exec", ns(host)))
                .jvmOptions(List.of("-Xmx192m", "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1",
                        "--enable-native-access=ALL-UNNAMED", "-Dlogback.configurationFile=chaos-dispatcher-logback.xml"))
                .args(List.of("dispatcher", "run")).env(env).log(dir.resolve(worker(host) + ".log")).start();
    }

    private void awaitLive(int host, ChildJvm jvm) throws Exception {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(120);
        URI ready = URI.create("http://" + address(host) + ":" + HEALTH_PORT + "/health/ready");
        while (true) {
            try {
                if (http.send(HttpRequest.newBuilder(ready).timeout(Duration.ofSeconds(2)).GET().build(),
                        HttpResponse.BodyHandlers.discarding()).statusCode() == 200) {
                    return;
                }
            } catch (IOException notYet) {
                // starting
            }
            if (!jvm.isAlive() || System.nanoTime() > deadline) {
                throw new IllegalStateException(worker(host) + " did not become ready; see " + jvm.log());
            }
            Thread.sleep(250);
        }
    }

    private static int awaitPort(Path portFile, ChildJvm jvm) throws Exception {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
        while (!Files.exists(portFile) || Files.readString(portFile).isBlank()) {
            if (!jvm.isAlive() || System.nanoTime() > deadline) {
                throw new IllegalStateException(jvm.name() + " did not start; see " + jvm.log());
            }
            Thread.sleep(100);
        }
        return Integer.parseInt(Files.readString(portFile).trim());
    }

    // ------------------------------------------------------------------------------- queue

    private static List<Long> enqueue(DSLContext dsl, int batch, int n) {
        OutboxEnqueuer enqueuer = new OutboxEnqueuer();
        List<Long> ids = new ArrayList<>();
        for (int i = 1; i <= n; i++) {
            NewMessage m = email(batch, i);
            ids.add(dsl.transactionResult(cfg -> enqueuer.enqueue(cfg.dsl(), m)).id());
        }
        return ids;
    }

    private static NewMessage email(int batch, int i) {
        String order = batch + "-" + i;
        return NewMessage.of(io.mailroom.orders.OrderService.TOPIC, "order", order, "email-order-" + order, """
                {"orderId":%d,"customerEmail":"c%s@example.com","customerName":"C","currency":"EUR",
                 "total":"1.00","createdAt":"2026-12-02T10:00:00Z",
                 "lines":[{"sku":"X","name":"Pin","quantity":1,"unitPrice":"1.00"}]}""".formatted((long) batch * 100_000 + i, order));
    }

    private static int running(DSLContext dsl, String worker) {
        return ((Number) dsl.fetchValue("SELECT count(*) FROM mailroom.outbox_message WHERE status = 'running' AND claimed_by = ?", worker)).intValue();
    }

    private static long drain(DSLContext dsl) throws InterruptedException {
        long start = System.currentTimeMillis();
        long deadline = start + TimeUnit.MINUTES.toMillis(3);
        while (((Number) dsl.fetchValue("SELECT count(*) FROM mailroom.outbox_message WHERE status IN ('pending', 'running')")).intValue() > 0) {
            if (System.currentTimeMillis() > deadline) {
                return -1;
            }
            Thread.sleep(250);
        }
        return System.currentTimeMillis() - start;
    }

    // ------------------------------------------------------------------------------- checks

    private static int doneAfter(DSLContext dsl, String worker, long millis) {
        return ((Number) dsl.fetchValue("SELECT count(*) FROM mailroom.outbox_attempt WHERE worker = ? AND outcome = 'done'"
                + " AND started_at > to_timestamp(? / 1000.0)", worker, millis)).intValue();
    }

    private boolean report(DSLContext dsl, Path providerRecord, int before, int after, Map<Long, Long> held, String zombie,
                           long cutAt, long backAt, long recoveredAt, boolean ranThrough, boolean aliveAtEnd,
                           int rescuedDuringCut, long drained, List<LatencyPhase> phases) throws IOException {
        int measured = phases.stream().mapToInt(p -> p.burst() + p.paced()).sum();
        int total = before + after + measured;
        Map<String, Integer> byStatus = dsl.fetch("SELECT status, count(*) FROM mailroom.outbox_message GROUP BY status").stream()
                .collect(Collectors.toMap(r -> r.get(0, String.class), r -> r.get(1, Integer.class)));
        int done = byStatus.getOrDefault("done", 0);
        int finished = done + byStatus.getOrDefault("failed", 0) + byStatus.getOrDefault("review", 0);
        int stuck = byStatus.getOrDefault("running", 0) + byStatus.getOrDefault("pending", 0);
        int lost = total - finished - stuck;
        Long[] heldIds = held.keySet().toArray(Long[]::new);
        // each held message finished under a newer claim than the one the cut host held
        int finishedUnderNewerClaim = 0;
        for (Map.Entry<Long, Long> h : held.entrySet()) {
            finishedUnderNewerClaim += ((Number) dsl.fetchValue("SELECT count(*) FROM mailroom.outbox_attempt WHERE message_id = ?"
                    + " AND outcome = 'done' AND claim_version > ?", h.getKey(), h.getValue())).intValue() > 0 ? 1 : 0;
        }
        // who finished each held message, and with which claim_version
        int finishedElsewhere = ((Number) dsl.fetchValue("SELECT count(DISTINCT message_id) FROM mailroom.outbox_attempt"
                + " WHERE message_id = ANY(?) AND outcome = 'done' AND worker <> ?", heldIds, zombie)).intValue();
        // zombie rows on the held messages that record an outcome (anything but "I lost it")
        Map<String, Integer> zombieRows = dsl.fetch("SELECT a.outcome, count(*) FROM mailroom.outbox_attempt a WHERE a.message_id = ANY(?)"
                + " AND a.worker = ? GROUP BY a.outcome", heldIds, zombie).stream()
                .collect(Collectors.toMap(r -> r.get(0, String.class), r -> r.get(1, Integer.class)));
        int zombieOverNewHolder = ((Number) dsl.fetchValue("""
                SELECT count(*) FROM mailroom.outbox_attempt z
                WHERE z.message_id = ANY(?) AND z.worker = ? AND z.outcome IN ('done', 'retry', 'failed', 'review')
                  AND EXISTS (SELECT 1 FROM mailroom.outbox_attempt n WHERE n.message_id = z.message_id AND n.worker <> z.worker
                              AND n.claim_version > z.claim_version AND n.finished_at <= z.finished_at)""", heldIds, zombie)).intValue();
        int zombieAfterReturn = doneAfter(dsl, zombie, backAt);
        List<Records.ProviderLine> lines = Records.provider(providerRecord);
        Map<String, Long> acceptedByKey = lines.stream().filter(Records.ProviderLine::isEffect)
                .collect(Collectors.groupingBy(Records.ProviderLine::key, Collectors.counting()));
        long keysTwice = acceptedByKey.values().stream().filter(c -> c > 1).count();
        Map<String, Long> acceptedByRecipient = lines.stream().filter(Records.ProviderLine::isEffect)
                .filter(l -> l.recipient() != null)
                .collect(Collectors.groupingBy(Records.ProviderLine::recipient, Collectors.counting()));
        long recipientsTwice = acceptedByRecipient.values().stream().filter(c -> c > 1).count();
        long replays = lines.stream().filter(l -> l.kind().startsWith("replayed")).count();
        Object maxDelaySeconds = dsl.fetchValue("SELECT extract(epoch FROM max(a.finished_at - m.created_at)) FROM mailroom.outbox_message m"
                + " JOIN mailroom.outbox_attempt a ON a.message_id = m.id AND a.outcome = 'done'");
        Double maxDelay = maxDelaySeconds == null ? null : ((Number) maxDelaySeconds).doubleValue();

        List<String> violations = new ArrayList<>();
        check(violations, lost == 0, "lost " + lost);
        check(violations, stuck == 0, "stuck " + stuck);
        check(violations, !held.isEmpty(), "the cut host held no committed claims");
        check(violations, ranThrough, "the cut host's process died during the cut");
        check(violations, aliveAtEnd, "the cut host's process died after it came back");
        check(violations, finishedUnderNewerClaim == held.size(), "only " + finishedUnderNewerClaim + " of " + held.size()
                + " held messages were finished under a newer claim");
        check(violations, zombieOverNewHolder == 0, zombieOverNewHolder + " zombie outcomes recorded after a newer holder's");
        check(violations, keysTwice == 0 && recipientsTwice == 0, "sent twice: " + keysTwice + " keys, " + recipientsTwice + " recipients");
        check(violations, zombieAfterReturn > 0, "the cut host sent nothing after it came back");
        check(violations, drained >= 0, "the queue did not drain within 3 minutes");

        StringBuilder sb = new StringBuilder("## Partition run: 3 dispatcher hosts (network namespaces, " + latency.toMillis()
                + " ms added per round trip), one cut off\n\n");
        sb.append("| | |\n|---|---|\n");
        row(sb, "messages", total + " (" + measured + " in the latency comparison, " + before + " before the cut, " + after
                + " after the return)");
        row(sb, "faults", "host-1 cut off (`ip link set eth0 down`) for " + (backAt - cutAt) + " ms, lease " + lease.toMillis()
                + " ms, process running throughout: " + ranThrough);
        row(sb, "lost", Integer.toString(lost));
        row(sb, "duplicated (keys accepted twice / recipients accepted twice)", keysTwice + " / " + recipientsTwice);
        row(sb, "stuck (pending or running after the drain)", Integer.toString(stuck));
        row(sb, "max delay commit -> done", maxDelay == null ? "-" : String.format(java.util.Locale.ROOT, "%.1f s", maxDelay));
        row(sb, "claims the cut host held (committed)", Integer.toString(held.size()));
        row(sb, "of them rescued before it came back", Integer.toString(rescuedDuringCut));
        row(sb, "of them finished under a newer claim (by another host / by the cut host, re-claimed after its return)",
                finishedUnderNewerClaim + " (" + finishedElsewhere + " / " + (finishedUnderNewerClaim - finishedElsewhere) + ")");
        row(sb, "the cut host's attempts on them, by outcome", zombieRows.isEmpty() ? "none" : zombieRows.toString());
        row(sb, "zombie outcomes recorded over a newer holder", Integer.toString(zombieOverNewHolder));
        row(sb, "provider repeats deduplicated by key", Long.toString(replays));
        row(sb, "emails the cut host sent after it came back", Integer.toString(zombieAfterReturn));
        row(sb, "the cut host's first send after it came back", recoveredAt < 0 ? "none within 120 s" : "after " + (recoveredAt - backAt) + " ms");
        row(sb, "drain after the last enqueue", drained < 0 ? "timed out" : drained + " ms");
        sb.append("\nSame fleet, same run, before the cut: latency added by the forwarders on every link (towards the database"
                + " and the provider), as `tc netem delay` on each host's link would add it\n\n");
        sb.append("| added per round trip | burst: emails | burst: emails/s (commit -> last accept) | paced: emails at rate"
                + " | commit -> provider accept p50 | p99 | max |\n|---:|---:|---:|---|---:|---:|---:|\n");
        for (LatencyPhase p : phases) {
            sb.append(String.format(java.util.Locale.ROOT, "| %d ms | %d | %.0f | %d at %d/s | %d ms | %d ms | %d ms |%n",
                    p.added().toMillis(), p.burst(), p.burstPerSecond(), p.paced(), p.rate(), p.p50(), p.p99(), p.max()));
        }
        if (phases.size() == 2 && phases.get(0).burstPerSecond() > 0) {
            sb.append(String.format(java.util.Locale.ROOT, "%nThroughput with %d ms ÷ without: %.2f; p50 latency %+d ms%n",
                    phases.get(1).added().toMillis(), phases.get(1).burstPerSecond() / phases.get(0).burstPerSecond(),
                    phases.get(1).p50() - phases.get(0).p50()));
        }
        sb.append('\n').append(violations.isEmpty() ? "**PASSED**" : "**FAILED**: " + String.join("; ", violations)).append('\n');
        String table = sb.toString();
        System.out.println(table);
        Files.writeString(dir.toAbsolutePath().resolveSibling("chaos-summary-partition.md"), table);
        return violations.isEmpty();
    }

    private static void check(List<String> violations, boolean ok, String what) {
        if (!ok) {
            violations.add(what);
        }
    }

    private static void row(StringBuilder sb, String label, String value) {
        sb.append("| ").append(label).append(" | ").append(value).append(" |\n");
    }

    private static HikariDataSource pool(TestDatabase db) {
        HikariConfig c = new HikariConfig();
        c.setJdbcUrl(db.jdbcUrlWithCredentials());
        c.setMaximumPoolSize(3);
        c.setPoolName("partition-orchestrator");
        return new HikariDataSource(c);
    }
}
