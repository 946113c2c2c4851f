package io.mailroom.chaos;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import io.mailroom.outbox.runtime.Dispatcher;
import io.mailroom.outbox.runtime.DispatcherConfig;
import io.mailroom.outbox.NewMessage;
import io.mailroom.outbox.OutboxEnqueuer;
import io.mailroom.outbox.runtime.Outcome;
import io.mailroom.outbox.SessionSettings;
import io.mailroom.testing.PgBouncer;
import io.mailroom.testing.TestDatabase;
import io.mailroom.testing.TestDatabases;
import org.jooq.DSLContext;
import org.jooq.SQLDialect;
import org.jooq.impl.DSL;

import java.net.URI;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.locks.LockSupport;

/**
 * Throughput through PgBouncer (transaction mode, {@code prepareThreshold=0}, settings per
 * transaction) as a ratio to a direct connection, in the same run on the same database: the
 * order-service side (one message per transaction, 4 writers) and the dispatcher side (one
 * dispatcher, defaults, a handler that does no I/O, so that the database path is all that is
 * measured). The two paths alternate, {@code --rounds} times each, and the median of each is used.
 *
 * <pre>
 * java ... io.mailroom.chaos.PoolerThroughput [--messages 4000] [--rounds 3] [--out file.md]
 * </pre>
 */
public final class PoolerThroughput {

    private static final String TOPIC = "bench.pooler";

    private PoolerThroughput() {
    }

    record Round(String path, double enqueuedPerSecond, double dispatchedPerSecond) {
    }

    public static void main(String[] argv) throws Exception {
        Args a = Args.parse(argv);
        int messages = a.integer("messages", 4000);
        int rounds = a.integer("rounds", 3);
        Path out = a.has("out") ? Path.of(a.string("out", null)) : null;
        if (PgBouncer.binary().isEmpty()) {
            System.out.println("pooler throughput: skipped, pgbouncer is not installed (apt-get install pgbouncer)");
            return;
        }
        String table = run(messages, rounds);
        System.out.println(table);
        if (out != null) {
            Files.createDirectories(out.toAbsolutePath().getParent());
            Files.writeString(out, table);
        }
    }

    static String run(int messages, int rounds) throws Exception {
        try (TestDatabase db = TestDatabases.create()) {
            DSLContext admin = DSL.using(db.dataSource(), SQLDialect.POSTGRES);
            URI uri = URI.create(db.jdbcUrl().substring("jdbc:".length()));
            String user = String.valueOf(admin.fetchValue("SELECT current_user"));
            try (PgBouncer bouncer = PgBouncer.start(uri.getHost(), uri.getPort(), db.name(), user, 10);
                 HikariDataSource direct = pool(db.jdbcUrlWithCredentials(), "direct");
                 HikariDataSource pooled = pool(bouncer.jdbcUrl(), "pgbouncer")) {
                // one round of each path first, not counted: JIT and caches warm for all of them alike
                round("direct", direct, SessionSettings.SESSION, admin, Math.min(messages, 1000), -1);
                round("pgbouncer", pooled, SessionSettings.TRANSACTION, admin, Math.min(messages, 1000), -1);
                List<Round> results = new ArrayList<>();
                for (int r = 0; r < rounds; r++) {
                    results.add(round("direct", direct, SessionSettings.SESSION, admin, messages, r));
                    results.add(round("pgbouncer", pooled, SessionSettings.TRANSACTION, admin, messages, r));
                    // the same path with the settings left to the role: what SET LOCAL per transaction costs
                    results.add(round("pgbouncer-server-settings", pooled, SessionSettings.SERVER, admin, messages, r));
                }
                return table(results, messages, rounds);
            }
        }
    }

    private static Round round(String path, HikariDataSource ds, SessionSettings settings, DSLContext admin, int n, int r)
            throws Exception {
        admin.execute("TRUNCATE mailroom.outbox_message, mailroom.outbox_effect, mailroom.outbox_attempt CASCADE");
        DSLContext dsl = DSL.using(ds, SQLDialect.POSTGRES);
        OutboxEnqueuer enqueuer = new OutboxEnqueuer(null, false);
        AtomicInteger next = new AtomicInteger();
        long t0 = System.nanoTime();
        try (ExecutorService writers = Executors.newFixedThreadPool(4)) {
            List<Future<?>> done = new ArrayList<>();
            for (int w = 0; w < 4; w++) {
                done.add(writers.submit(() -> {
                    for (int i = next.incrementAndGet(); i <= n; i = next.incrementAndGet()) {
                        String key = path + "-" + r + "-" + i;
                        NewMessage m = NewMessage.of(TOPIC, "order", key, key, "{\"i\":" + i + "}");
                        dsl.transaction(cfg -> enqueuer.enqueue(cfg.dsl(), m));
                    }
                    return null;
                }));
            }
            for (Future<?> f : done) {
                f.get();
            }
        }
        double enqueueSeconds = (System.nanoTime() - t0) / 1e9;

        AtomicInteger handled = new AtomicInteger();
        DispatcherConfig config = DispatcherConfig.builder().workerId("bench-" + path).sessionSettings(settings)
                .listenForNotifications(false).pollInterval(Duration.ofMillis(50)).build();
        Dispatcher dispatcher = new Dispatcher(ds, config, Map.of(TOPIC, (m, ctx) -> {
            handled.incrementAndGet();
            return Outcome.done();
        }));
        long t1 = System.nanoTime();
        dispatcher.start();
        try {
            long deadline = t1 + Duration.ofMinutes(5).toNanos();
            while (((Number) admin.fetchValue("SELECT count(*) FROM mailroom.outbox_message WHERE status = 'done'")).intValue() < n) {
                if (System.nanoTime() > deadline) {
                    throw new IllegalStateException(path + ": " + n + " messages not done within 5 minutes");
                }
                LockSupport.parkNanos(Duration.ofMillis(20).toNanos());
            }
        } finally {
            dispatcher.stop();
        }
        double dispatchSeconds = (System.nanoTime() - t1) / 1e9;
        if (handled.get() != n) {
            throw new IllegalStateException(path + ": handled " + handled.get() + " times for " + n + " messages");
        }
        return new Round(path, n / enqueueSeconds, n / dispatchSeconds);
    }

    private static String table(List<Round> results, int messages, int rounds) {
        double de = median(results, "direct", true);
        double pe = median(results, "pgbouncer", true);
        double dd = median(results, "direct", false);
        double pd = median(results, "pgbouncer", false);
        double se = median(results, "pgbouncer-server-settings", true);
        double sd = median(results, "pgbouncer-server-settings", false);
        StringBuilder sb = new StringBuilder();
        sb.append("## Throughput through PgBouncer against a direct connection (same run)\n\n");
        sb.append("| path | enqueue, 1 message per transaction, 4 writers (msg/s) | dispatch, 1 dispatcher, defaults (msg/s) |\n");
        sb.append("|---|---:|---:|\n");
        for (Round r : results) {
            sb.append(String.format(Locale.ROOT, "| %s | %.0f | %.0f |%n", r.path(), r.enqueuedPerSecond(), r.dispatchedPerSecond()));
        }
        sb.append(String.format(Locale.ROOT, "| **median direct** | %.0f | %.0f |%n", de, dd));
        sb.append(String.format(Locale.ROOT, "| **median pgbouncer** | %.0f | %.0f |%n", pe, pd));
        sb.append(String.format(Locale.ROOT, "| **median pgbouncer, settings on the role** | %.0f | %.0f |%n", se, sd));
        sb.append(String.format(Locale.ROOT, "| **ratio pgbouncer / direct** | %.2f | %.2f |%n", pe / de, pd / dd));
        sb.append(String.format(Locale.ROOT, "| **ratio pgbouncer with settings on the role / direct** | %.2f | %.2f |%n", se / de, sd / dd));
        sb.append(String.format(Locale.ROOT, "%n%d messages per round, %d rounds per path, alternating, after one uncounted warm-up round of each; pgbouncer %s, "
                + "pool_mode = transaction, 10 server sessions; prepareThreshold=0 through it, and SET LOCAL per transaction"
                + " (MAILROOM_DB_SESSION_SETTINGS=transaction) unless the settings are on the role (=server); the enqueue"
                + " path sets nothing in either case, so its two pgbouncer rows differ by noise only.%n",
                messages, rounds, "1.18"));
        return sb.toString();
    }

    private static double median(List<Round> results, String path, boolean enqueue) {
        double[] v = results.stream().filter(r -> r.path().equals(path))
                .mapToDouble(r -> enqueue ? r.enqueuedPerSecond() : r.dispatchedPerSecond()).sorted().toArray();
        return v.length % 2 == 1 ? v[v.length / 2] : (v[v.length / 2 - 1] + v[v.length / 2]) / 2;
    }

    private static HikariDataSource pool(String url, String name) {
        HikariConfig c = new HikariConfig();
        c.setJdbcUrl(url);
        c.setMaximumPoolSize(12);
        c.setPoolName("bench-" + name);
        return new HikariDataSource(c);
    }
}
