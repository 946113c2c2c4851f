package io.mailroom.soak;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import io.mailroom.db.Schema;
import io.mailroom.outbox.runtime.ClaimedMessage;
import io.mailroom.outbox.runtime.Dispatcher;
import io.mailroom.outbox.runtime.DispatcherConfig;
import io.mailroom.outbox.runtime.DispatcherListener;
import io.mailroom.outbox.Durations;
import io.mailroom.outbox.NewMessage;
import io.mailroom.outbox.OutboxEnqueuer;
import io.mailroom.outbox.runtime.Outcome;
import io.mailroom.testing.TestDatabase;
import io.mailroom.testing.TestDatabases;
import io.zonky.test.db.postgres.embedded.EmbeddedPostgres;
import org.jooq.DSLContext;
import org.jooq.SQLDialect;
import org.jooq.impl.DSL;
import org.knowm.xchart.BitmapEncoder;
import org.knowm.xchart.XYChart;
import org.knowm.xchart.XYChartBuilder;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.atomic.AtomicLong;
import java.util.stream.Stream;

/**
 * The bloat soak (issue 7): measures the dispatcher's capacity with a no-op handler, then drives it
 * at a share of that capacity (default 80 %) for a set time while, in the middle, a REPEATABLE READ
 * transaction stays open (holding back VACUUM, as a long report or a hung worker would). Every few
 * seconds it records claim p50/p99, throughput, dead tuples, hot table and index size, pending
 * depth, the partitions' autovacuum count and whether a vacuum of one is running at that moment, and
 * the server's WAL so far (records, full-page images, bytes: {@code pg_stat_wal}); it writes
 * {@code soak.csv}, {@code soak.png} and {@code soak.md} to the output folder.
 *
 * <p>{@code scripts/soak.sh} runs it; options are {@code key=value} arguments: {@code duration=20m
 * txnStart=30% txnLength=30% load=0.8 sample=5s out=soak/target/soak server=embedded naptime=10s}.
 * {@code server=embedded} (default) starts a PostgreSQL of its own with autovacuum on, and with
 * {@code sharedBuffers=1GB} (for example) a buffer cache of that size instead of PostgreSQL's default 128MB;
 * {@code server=shared} uses a fresh database on the test server ({@code $MAILROOM_TEST_DB_URL}).
 */
public final class SoakRun {

    static final String TOPIC = "soak.noop";

    /** One row of the record. */
    record Sample(double t, String phase, double claimP50, double claimP99, double throughput, double enqueued,
                  long deadTuples, long tableBytes, long indexBytes, long pending, long autovacuums, long vacuuming,
                  long walRecords, long walFullPages, long walBytes) {
    }

    /** What a run found, for the summary and for tests. */
    record Result(double capacity, double rate, List<Sample> samples, long enqueued, long done, Path dir, String server) {
    }

    public static void main(String[] args) throws Exception {
        Map<String, String> opts = new java.util.HashMap<>();
        for (String a : args) {
            int eq = a.indexOf('=');
            if (eq <= 0) {
                throw new IllegalArgumentException("options are key=value, got '" + a + "'");
            }
            opts.put(a.substring(0, eq), a.substring(eq + 1));
        }
        Duration duration = Durations.parse("duration", opts.getOrDefault("duration", "20m"));
        String server = opts.getOrDefault("server", "embedded");
        if (!server.equals("embedded") && !server.equals("shared")) {
            throw new IllegalArgumentException("server must be 'embedded' or 'shared', got '" + server + "'");
        }
        String sharedBuffers = opts.get("sharedBuffers");
        if (sharedBuffers != null && (!server.equals("embedded") || !sharedBuffers.matches("[1-9][0-9]{0,5}(kB|MB|GB)"))) {
            throw new IllegalArgumentException("sharedBuffers is a size such as 512MB or 2GB, for server=embedded only; got '"
                    + sharedBuffers + "' with server=" + server);
        }
        Result r = run(duration, percent(opts.getOrDefault("txnStart", "30%")), percent(opts.getOrDefault("txnLength", "30%")),
                Double.parseDouble(opts.getOrDefault("load", "0.8")), Durations.parse("sample", opts.getOrDefault("sample", "5s")),
                Path.of(opts.getOrDefault("out", "soak/target/soak")), Integer.parseInt(opts.getOrDefault("capacityMessages", "20000")),
                server.equals("embedded") ? opts.getOrDefault("naptime", "10s") : null, sharedBuffers);
        System.out.println(Files.readString(r.dir().resolve("soak.md")));
    }

    /** Where the soak runs: a database with its URL, a way to open extra sessions, and its server's settings. */
    interface Target extends AutoCloseable {
        String jdbcUrl();

        Connection newConnection() throws java.sql.SQLException;

        @Override
        void close();
    }

    /**
     * Runs against a fresh database on the shared test server ({@code naptime} null), or on an
     * embedded PostgreSQL of its own with autovacuum on and the given {@code autovacuum_naptime}:
     * the shared server on CI machines may run with autovacuum off, which would make a bloat soak
     * meaningless. {@code sharedBuffers} sizes the embedded server's buffer cache (null: PostgreSQL's default).
     */
    static Result run(Duration duration, double txnStart, double txnLength, double load, Duration sampleEvery, Path dir,
                      int capacityMessages, String naptime, String sharedBuffers) throws Exception {
        if (load <= 0 || load > 1.5) {
            throw new IllegalArgumentException("load must be in (0, 1.5], got " + load);
        }
        Files.createDirectories(dir);
        try (Target db = naptime == null ? shared() : embedded(naptime, sharedBuffers); HikariDataSource pool = pool(db, 24)) {
            DSLContext dsl = DSL.using(pool, SQLDialect.POSTGRES);
            String settings = dsl.fetchSingle("""
                    SELECT 'PostgreSQL ' || current_setting('server_version') || ', autovacuum=' || current_setting('autovacuum')
                           || ', autovacuum_naptime=' || current_setting('autovacuum_naptime')
                           || ', synchronous_commit=' || current_setting('synchronous_commit')
                           || ', fsync=' || current_setting('fsync')
                           || ', shared_buffers=' || current_setting('shared_buffers')""").get(0, String.class);
            System.out.println("soak server: " + settings);
            ConcurrentLinkedQueue<Long> claimNanos = new ConcurrentLinkedQueue<>();
            // Messages done, counted as the dispatcher writes their outcomes. Counting them in the
            // database (status = 'done' has no index: a scan of every partition) cost more with every
            // sample as the day's partition grew, on the same two cores as the claims it measured.
            AtomicLong doneCount = new AtomicLong();
            DispatcherListener listener = new DispatcherListener() {
                @Override
                public void claimed(int requested, int claimed, Duration took) {
                    claimNanos.add(took.toNanos());
                }

                @Override
                public void finished(ClaimedMessage message, String outcome, Duration took) {
                    if ("done".equals(outcome)) {
                        doneCount.incrementAndGet();
                    }
                }
            };
            DispatcherConfig config = DispatcherConfig.builder().workerId("soak").batchSize(50).concurrency(16)
                    .pollInterval(Duration.ofMillis(200)).build();
            Map<String, io.mailroom.outbox.runtime.MessageHandler> handlers = Map.of(TOPIC, (ClaimedMessage m, io.mailroom.outbox.runtime.ClaimContext c) -> Outcome.done());

            // 1. capacity: drain a preloaded backlog with the no-op handler
            preload(dsl, capacityMessages);
            Dispatcher probe = new Dispatcher(pool, config, handlers, null, listener);
            long t0 = System.nanoTime();
            probe.start();
            while (doneCount.get() < capacityMessages) {
                Thread.sleep(100);
            }
            double capacity = capacityMessages / ((System.nanoTime() - t0) / 1e9);
            probe.stop();
            dsl.execute("TRUNCATE mailroom.outbox_message, mailroom.outbox_effect, mailroom.outbox_effect_term, mailroom.outbox_attempt");
            dsl.execute("VACUUM ANALYZE mailroom.outbox_message");
            claimNanos.clear();
            doneCount.set(0);
            double rate = capacity * load;
            System.out.printf(Locale.ROOT, "capacity %.0f msg/s; soaking at %.0f msg/s for %s%n", capacity, rate, duration);

            // 2. soak
            Dispatcher dispatcher = new Dispatcher(pool, config, handlers, null, listener);
            dispatcher.start();
            AtomicLong enqueued = new AtomicLong();
            Thread producer = Thread.ofPlatform().name("soak-producer").start(() -> produce(pool, rate, duration, enqueued));
            long start = System.nanoTime();
            long txnFrom = (long) (duration.toNanos() * txnStart);
            long txnTo = txnFrom + (long) (duration.toNanos() * txnLength);
            Connection longTxn = null;
            List<Sample> samples = new ArrayList<>();
            long lastDone = 0;
            long lastEnqueued = 0;
            double lastT = 0;
            try {
                while (System.nanoTime() - start < duration.toNanos()) {
                    Thread.sleep(sampleEvery.toMillis());
                    long elapsed = System.nanoTime() - start;
                    if (longTxn == null && elapsed >= txnFrom && elapsed < txnTo) {
                        longTxn = db.newConnection();
                        longTxn.setAutoCommit(false);
                        longTxn.setTransactionIsolation(Connection.TRANSACTION_REPEATABLE_READ);
                        try (Statement st = longTxn.createStatement()) {
                            st.executeQuery("SELECT count(*) FROM mailroom.outbox_effect").close(); // takes the snapshot
                        }
                    } else if (longTxn != null && elapsed >= txnTo) {
                        longTxn.commit();
                        longTxn.close();
                        longTxn = null;
                    }
                    String phase = elapsed < txnFrom ? "before" : elapsed < txnTo ? "long_txn" : "after";
                    List<Long> claims = new ArrayList<>();
                    for (Long n; (n = claimNanos.poll()) != null; ) {
                        claims.add(n);
                    }
                    double t = elapsed / 1e9;
                    long done = doneCount.get();
                    long enq = enqueued.get();
                    var stats = dsl.fetchSingle("""
                            SELECT coalesce(sum(s.n_dead_tup), 0) AS dead,
                                   coalesce(sum(pg_relation_size(c.oid)), 0) AS tbl,
                                   coalesce(sum(pg_indexes_size(c.oid)), 0) AS idx,
                                   coalesce(sum(s.autovacuum_count), 0) AS autovacuums,
                                   (SELECT count(*) FROM pg_stat_progress_vacuum v JOIN pg_inherits p ON p.inhrelid = v.relid
                                    WHERE p.inhparent = 'mailroom.outbox_message'::regclass) AS vacuuming,
                                   (SELECT wal_records FROM pg_stat_wal) AS wal_records,
                                   (SELECT wal_fpi FROM pg_stat_wal) AS wal_fpi,
                                   (SELECT wal_bytes::bigint FROM pg_stat_wal) AS wal_bytes
                            FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid
                            JOIN pg_stat_user_tables s ON s.relid = c.oid
                            WHERE i.inhparent = 'mailroom.outbox_message'::regclass""");
                    samples.add(new Sample(t, phase, percentile(claims, 0.50), percentile(claims, 0.99),
                            (done - lastDone) / (t - lastT), (enq - lastEnqueued) / (t - lastT),
                            stats.get("dead", Long.class), stats.get("tbl", Long.class), stats.get("idx", Long.class),
                            count(dsl, "pending"), stats.get("autovacuums", Long.class), stats.get("vacuuming", Long.class),
                            stats.get("wal_records", Long.class), stats.get("wal_fpi", Long.class), stats.get("wal_bytes", Long.class)));
                    Sample s = samples.getLast();
                    System.out.printf(Locale.ROOT, "t=%5.0fs %-8s claim p50 %6.2f ms p99 %7.2f ms  %6.0f msg/s  dead %8d  table %6.1f MB  index %6.1f MB  pending %d  autovacuums %d%s%n",
                            s.t(), s.phase(), s.claimP50(), s.claimP99(), s.throughput(), s.deadTuples(),
                            s.tableBytes() / 1e6, s.indexBytes() / 1e6, s.pending(), s.autovacuums(),
                            s.vacuuming() > 0 ? " (vacuum running)" : "");
                    lastDone = done;
                    lastEnqueued = enq;
                    lastT = t;
                }
            } finally {
                if (longTxn != null) {
                    longTxn.rollback();
                    longTxn.close();
                }
                producer.join();
                // let the backlog drain so "nothing lost" can be checked
                long drainUntil = System.nanoTime() + Duration.ofMinutes(2).toNanos();
                while (doneCount.get() < enqueued.get() && System.nanoTime() < drainUntil) {
                    Thread.sleep(200);
                }
                dispatcher.stop();
            }
            Result result = new Result(capacity, rate, samples, enqueued.get(), count(dsl, "done"), dir, settings);
            write(result, txnFrom / 1e9, txnTo / 1e9);
            return result;
        }
    }

    private static void produce(javax.sql.DataSource pool, double rate, Duration duration, AtomicLong enqueued) {
        OutboxEnqueuer enqueuer = new OutboxEnqueuer();
        DSLContext dsl = DSL.using(pool, SQLDialect.POSTGRES);
        long start = System.nanoTime();
        long tickNanos = 100_000_000L;
        long n = 0;
        while (System.nanoTime() - start < duration.toNanos()) {
            long due = (long) (rate * (System.nanoTime() - start) / 1e9);
            int batch = (int) Math.min(1000, due - n);
            if (batch > 0) {
                long from = n;
                List<NewMessage> messages = new ArrayList<>(batch);
                for (int i = 0; i < batch; i++) {
                    String key = "soak-" + (from + i);
                    messages.add(NewMessage.of(TOPIC, "order", key, key, "{\"n\":" + (from + i) + "}"));
                }
                dsl.transaction(cfg -> enqueuer.enqueueAll(cfg.dsl(), messages));
                n += batch;
                enqueued.set(n);
            }
            try {
                Thread.sleep(tickNanos / 1_000_000);
            } catch (InterruptedException e) {
                return;
            }
        }
    }

    private static void preload(DSLContext dsl, int n) {
        dsl.execute("""
                WITH m AS (
                  INSERT INTO mailroom.outbox_message (topic, aggregate_type, aggregate_id, idempotency_key, payload)
                  SELECT {0}, 'order', g::text, 'cap-' || g, '{}'::jsonb FROM generate_series(1, {1}) g
                  RETURNING id, created_at, idempotency_key, aggregate_id)
                INSERT INTO mailroom.outbox_effect (idempotency_key, topic, aggregate_type, aggregate_id, message_id,
                                           message_created_at, max_attempts)
                SELECT idempotency_key, {0}, 'order', aggregate_id, id, created_at, 10 FROM m""", TOPIC, n);
        dsl.execute("VACUUM ANALYZE mailroom.outbox_message");
    }

    /**
     * Messages in {@code status}. The status is written into the text, not bound, so that every plan
     * of a count of pending messages can read the claim's partial index; done has no index and is
     * counted once, at the end.
     */
    private static long count(DSLContext dsl, String status) {
        return dsl.fetchSingle("SELECT count(*) FROM mailroom.outbox_message WHERE status = {0}", DSL.inline(status))
                .get(0, Long.class);
    }

    private static Target shared() {
        TestDatabase db = TestDatabases.create();
        return new Target() {
            public String jdbcUrl() {
                return db.jdbcUrlWithCredentials();
            }

            public Connection newConnection() throws java.sql.SQLException {
                return db.newConnection();
            }

            public void close() {
                db.close();
            }
        };
    }

    private static Target embedded(String naptime, String sharedBuffers) throws IOException {
        EmbeddedPostgres.Builder builder = EmbeddedPostgres.builder();
        if (sharedBuffers != null) {
            builder.setServerConfig("shared_buffers", sharedBuffers);
        }
        EmbeddedPostgres pg = builder
                .setServerConfig("autovacuum", "on")
                .setServerConfig("autovacuum_naptime", naptime)
                .setServerConfig("fsync", "on")
                .setServerConfig("synchronous_commit", "on")
                .setServerConfig("max_connections", "100")
                .start();
        String url = "jdbc:postgresql://127.0.0.1:" + pg.getPort() + "/postgres?user=postgres";
        Schema.migrate(pg.getPostgresDatabase());
        return new Target() {
            public String jdbcUrl() {
                return url;
            }

            public Connection newConnection() throws java.sql.SQLException {
                return java.sql.DriverManager.getConnection(url);
            }

            public void close() {
                try {
                    pg.close();
                } catch (IOException e) {
                    System.err.println("embedded PostgreSQL did not stop cleanly: " + e);
                }
            }
        };
    }

    private static HikariDataSource pool(Target db, int size) {
        HikariConfig c = new HikariConfig();
        c.setJdbcUrl(db.jdbcUrl());
        c.setMaximumPoolSize(size);
        c.setPoolName("soak");
        return new HikariDataSource(c);
    }

    static double percentile(List<Long> nanos, double p) {
        if (nanos.isEmpty()) {
            return Double.NaN;
        }
        long[] s = nanos.stream().mapToLong(Long::longValue).sorted().toArray();
        return s[Math.min(s.length - 1, (int) Math.floor(p * s.length))] / 1e6;
    }

    private static void write(Result r, double txnFrom, double txnTo) throws IOException {
        StringBuilder csv = new StringBuilder("t_s,phase,claim_p50_ms,claim_p99_ms,throughput_per_s,enqueued_per_s,"
                + "n_dead_tup,table_bytes,index_bytes,pending,autovacuum_count,vacuum_running,wal_records,wal_fpi,wal_bytes\n");
        for (Sample s : r.samples()) {
            csv.append(String.format(Locale.ROOT, "%.1f,%s,%.3f,%.3f,%.1f,%.1f,%d,%d,%d,%d,%d,%d,%d,%d,%d%n", s.t(), s.phase(), s.claimP50(),
                    s.claimP99(), s.throughput(), s.enqueued(), s.deadTuples(), s.tableBytes(), s.indexBytes(), s.pending(),
                    s.autovacuums(), s.vacuuming(), s.walRecords(), s.walFullPages(), s.walBytes()));
        }
        Files.writeString(r.dir().resolve("soak.csv"), csv);
        chart(r, txnFrom, txnTo);
        Files.writeString(r.dir().resolve("soak.md"), summary(r, txnFrom, txnTo));
    }

    private static void chart(Result r, double txnFrom, double txnTo) throws IOException {
        List<Sample> s = r.samples();
        if (s.isEmpty()) {
            return;
        }
        double[] t = s.stream().mapToDouble(Sample::t).toArray();
        XYChart claims = chart("Claim duration (ms)", "ms");
        claims.addSeries("p50", t, s.stream().mapToDouble(x -> nan0(x.claimP50())).toArray());
        claims.addSeries("p99", t, s.stream().mapToDouble(x -> nan0(x.claimP99())).toArray());
        XYChart dead = chart("Dead tuples and pending depth", "rows");
        dead.addSeries("n_dead_tup", t, s.stream().mapToDouble(Sample::deadTuples).toArray());
        dead.addSeries("pending", t, s.stream().mapToDouble(Sample::pending).toArray());
        XYChart size = chart("Hot table and index size (MB)", "MB");
        size.addSeries("table", t, s.stream().mapToDouble(x -> x.tableBytes() / 1e6).toArray());
        size.addSeries("indexes", t, s.stream().mapToDouble(x -> x.indexBytes() / 1e6).toArray());
        XYChart rate = chart("Throughput (msg/s)", "msg/s");
        rate.addSeries("done", t, s.stream().mapToDouble(Sample::throughput).toArray());
        rate.addSeries("enqueued", t, s.stream().mapToDouble(Sample::enqueued).toArray());
        for (XYChart c : List.of(claims, dead, size, rate)) {
            double top = c.getSeriesMap().values().stream()
                    .flatMapToDouble(x -> java.util.Arrays.stream(x.getYData())).filter(d -> !Double.isNaN(d)).max().orElse(1);
            c.addSeries("long transaction", new double[]{txnFrom, txnFrom, txnTo, txnTo}, new double[]{0, top, top, 0});
        }
        BitmapEncoder.saveBitmap(List.of(claims, rate, dead, size), 2, 2, r.dir().resolve("soak").toString(),
                BitmapEncoder.BitmapFormat.PNG);
    }

    private static XYChart chart(String title, String y) {
        XYChart c = new XYChartBuilder().width(700).height(380).title(title).xAxisTitle("seconds").yAxisTitle(y).build();
        c.getStyler().setMarkerSize(0);
        return c;
    }

    private static double nan0(double d) {
        return Double.isNaN(d) ? 0 : d;
    }

    static String summary(Result r, double txnFrom, double txnTo) {
        List<Sample> s = r.samples();
        Sample first = s.stream().filter(x -> x.t() > 10).findFirst().orElse(s.getFirst());
        Sample worst = s.stream().filter(x -> x.phase().equals("long_txn")).filter(x -> !Double.isNaN(x.claimP99()))
                .max(java.util.Comparator.comparingDouble(Sample::claimP99)).orElse(null);
        Sample after = s.stream().filter(x -> x.t() >= txnTo + 120).findFirst()
                .orElse(s.stream().filter(x -> x.phase().equals("after")).reduce((a, b) -> b).orElse(null));
        Sample last = s.getLast();
        long maxDead = s.stream().mapToLong(Sample::deadTuples).max().orElse(0);
        StringBuilder md = new StringBuilder();
        md.append("# Soak summary\n\n");
        md.append("- server: ").append(r.server()).append("\n");
        md.append(String.format(Locale.ROOT, "- capacity (no-op handler, batch 50, concurrency 16): **%.0f msg/s**; soak rate **%.0f msg/s** (%.0f %%)%n",
                r.capacity(), r.rate(), 100 * r.rate() / r.capacity()));
        String hold = txnTo > txnFrom
                ? String.format(Locale.ROOT, "REPEATABLE READ transaction open from %.0f s to %.0f s", txnFrom, txnTo)
                : String.format(Locale.ROOT, "no long transaction (txnLength=0: the control run; \"after\" is from %.0f s)", txnTo);
        md.append(String.format(Locale.ROOT, "- run: %.0f s, %s; %d enqueued, %d done (%s)%n",
                last.t(), hold, r.enqueued(), r.done(), r.enqueued() == r.done() ? "nothing lost" : "NOT ALL DONE"));
        md.append("\n| moment | t (s) | claim p50 (ms) | claim p99 (ms) | msg/s | dead tuples | table (MB) | indexes (MB) | pending |\n");
        md.append("|---|---|---|---|---|---|---|---|---|\n");
        row(md, "start", first);
        row(md, "worst during the long transaction", worst);
        row(md, "2 min after it ended (or last)", after);
        row(md, "end", last);
        md.append(String.format(Locale.ROOT, "%n- most dead tuples seen: %d%n", maxDead));
        BloatMeasures bloat = BloatMeasures.of(s, r.rate(), txnFrom, txnTo);
        String before = String.format(Locale.ROOT, "- claim p99, median of the samples: %.2f ms before %s, ", bloat.baselineP99(),
                txnTo > txnFrom ? "the long transaction" : "the control run's mark");
        md.append(Double.isNaN(bloat.afterP99())
                ? before + "and from 90 s to 150 s after its end: not reached (the run ended before)\n"
                : before + String.format(Locale.ROOT, "%.2f ms from 90 s to 150 s after its end: **%.2f×**%n",
                        bloat.afterP99(), bloat.ratio()));
        if (!bloat.holdMinutesOfOffered().isEmpty()) {
            md.append("- throughput in each minute of the long transaction, of the offered rate: ")
                    .append(String.join(", ", bloat.holdMinutesOfOffered().stream()
                            .map(v -> String.format(Locale.ROOT, "%.0f %%", 100 * v)).toList()))
                    .append("\n");
        }
        md.append("\nFiles: `soak.csv` (every sample), `soak.png` (charts; the shaded band is the long transaction).\n");
        return md.toString();
    }

    /**
     * Issue 28's two measures of bloat, from the samples: the claim's p99 before the long transaction
     * (the median of the before phase's samples), the same in the minute around two minutes after it
     * ended (samples from 90 s to 150 s after), their ratio, and the throughput of each minute of the
     * hold as a share of the offered rate. A median of 5 s samples, not one sample: a single sample's
     * p99 is the third-worst of a few hundred claims and moves by half between neighbours. NaN where
     * a window holds no sample with claims (a run too short to reach it).
     */
    record BloatMeasures(double baselineP99, double afterP99, List<Double> holdMinutesOfOffered) {

        double ratio() {
            return afterP99 / baselineP99;
        }

        static BloatMeasures of(List<Sample> samples, double offered, double txnFrom, double txnTo) {
            double baseline = median(samples.stream().filter(x -> x.t() < txnFrom));
            double after = median(samples.stream().filter(x -> x.t() >= txnTo + 90 && x.t() < txnTo + 150));
            List<Double> minutes = new ArrayList<>();
            for (double from = txnFrom; from < txnTo; from += 60) {
                double start = from;
                double end = Math.min(from + 60, txnTo);
                samples.stream().filter(x -> x.t() > start && x.t() <= end).mapToDouble(Sample::throughput).average()
                        .ifPresent(mean -> minutes.add(mean / offered));
            }
            return new BloatMeasures(baseline, after, List.copyOf(minutes));
        }

        private static double median(Stream<Sample> window) {
            double[] p99 = window.mapToDouble(Sample::claimP99).filter(v -> !Double.isNaN(v)).sorted().toArray();
            if (p99.length == 0) {
                return Double.NaN;
            }
            int mid = p99.length / 2;
            return p99.length % 2 == 1 ? p99[mid] : (p99[mid - 1] + p99[mid]) / 2;
        }
    }

    private static void row(StringBuilder md, String label, Sample s) {
        if (s == null) {
            md.append("| ").append(label).append(" | – | – | – | – | – | – | – | – |\n");
            return;
        }
        md.append(String.format(Locale.ROOT, "| %s | %.0f | %.2f | %.2f | %.0f | %d | %.1f | %.1f | %d |%n", label, s.t(),
                s.claimP50(), s.claimP99(), s.throughput(), s.deadTuples(), s.tableBytes() / 1e6, s.indexBytes() / 1e6, s.pending()));
    }

    static double percent(String v) {
        String s = v.trim();
        double d = s.endsWith("%") ? Double.parseDouble(s.substring(0, s.length() - 1)) / 100 : Double.parseDouble(s);
        if (d < 0 || d > 1) {
            throw new IllegalArgumentException("a share between 0% and 100%, got '" + v + "'");
        }
        return d;
    }
}
