package io.mailroom.bench;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import io.mailroom.outbox.runtime.ClaimedMessage;
import io.mailroom.outbox.runtime.Dispatcher;
import io.mailroom.outbox.runtime.DispatcherConfig;
import io.mailroom.outbox.runtime.DispatcherListener;
import io.mailroom.outbox.JdbcUrls;
import io.mailroom.outbox.runtime.MessageHandler;
import io.mailroom.outbox.runtime.Outcome;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicLong;

/**
 * One dispatcher process of scenario 7, driven by lines on stdin. It opens its pool and prints
 * {@code READY}; {@code WARM} starts a dispatcher on the warm-up topic and {@code WARMED} stops it
 * (answer {@code WARM-DONE}), so that the JIT has compiled the hot paths before anything is timed;
 * {@code GO} starts the measured {@link Dispatcher} (no-op handler) and {@code STOP} (or end of
 * input) stops it gracefully and prints {@code HANDLED <n> ERRORS <e>}. The parent times the drain
 * and checks the database; this process only reports what its handler saw.
 *
 * <p>Arguments: JDBC URL with credentials, worker id, batch size, concurrency, record attempts (true/false).
 */
public final class DispatcherWorkerMain {

    static final String WARMUP_TOPIC = "bench.warmup";

    private DispatcherWorkerMain() {
    }

    public static void main(String[] args) throws Exception {
        Logging.configure();
        String url = args[0];
        String worker = args[1];
        int batch = Integer.parseInt(args[2]);
        int concurrency = Integer.parseInt(args[3]);
        boolean recordAttempts = Boolean.parseBoolean(args[4]);

        HikariConfig pool = new HikariConfig();
        pool.setJdbcUrl(JdbcUrls.withKeepAlive(url));
        pool.setMaximumPoolSize(RuntimeDrain.POOL_SIZE);
        pool.setMinimumIdle(RuntimeDrain.POOL_SIZE);
        pool.setPoolName(worker);
        try (HikariDataSource dataSource = new HikariDataSource(pool)) {
            List<Connection> open = new ArrayList<>();
            for (int i = 0; i < RuntimeDrain.POOL_SIZE; i++) {
                open.add(dataSource.getConnection()); // every session open before READY, for the CPU meter
            }
            for (Connection c : open) {
                c.close();
            }
            AtomicLong handled = new AtomicLong();
            AtomicLong errors = new AtomicLong();
            Outcome ok = Outcome.done();
            MessageHandler noop = (m, ctx) -> ok;
            DispatcherListener listener = new DispatcherListener() {
                @Override
                public void finished(ClaimedMessage message, String outcome, Duration took) {
                    if ("done".equals(outcome)) {
                        handled.incrementAndGet();
                    }
                }

                @Override
                public void error(String where, Throwable error) {
                    errors.incrementAndGet();
                }
            };
            DispatcherConfig config = DispatcherConfig.builder().workerId(worker).batchSize(batch)
                    .concurrency(concurrency).recordAttempts(recordAttempts).build();
            Dispatcher dispatcher = new Dispatcher(dataSource, config, Map.of(QueueLoader.TOPIC, noop), null, listener);
            Dispatcher warmUp = new Dispatcher(dataSource, config, Map.of(WARMUP_TOPIC, noop));
            System.out.println("READY " + worker);
            System.out.flush();
            BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
            String line;
            while ((line = in.readLine()) != null) {
                switch (line) {
                    case "WARM" -> warmUp.start();
                    case "WARMED" -> {
                        warmUp.stop();
                        System.out.println("WARM-DONE");
                        System.out.flush();
                    }
                    case "GO" -> dispatcher.start();
                    default -> {
                    }
                }
                if (line.equals("STOP")) {
                    break;
                }
            }
            dispatcher.stop();
            System.out.println("HANDLED " + handled.get() + " ERRORS " + errors.get());
            System.out.flush();
        }
    }
}
