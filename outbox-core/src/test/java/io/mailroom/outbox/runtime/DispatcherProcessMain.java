package io.mailroom.outbox.runtime;

import io.mailroom.outbox.Fixtures;
import io.mailroom.outbox.JdbcUrls;
import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.CountDownLatch;

/**
 * A dispatcher in a process of its own, for {@link MultiProcessDispatcherTest}. Its handler writes
 * each delivery to {@code delivery_log} in its own autocommitted statement (the side effect, which
 * survives a crash of the process), then takes a few milliseconds, like a send would.
 *
 * <p>Arguments: JDBC URL with credentials, worker id, lease seconds, milliseconds one "send" takes.
 */
public final class DispatcherProcessMain {

    public static void main(String[] args) throws Exception {
        String url = args[0];
        String worker = args[1];
        Duration lease = Duration.ofSeconds(Long.parseLong(args[2]));
        long sendMillis = Long.parseLong(args[3]);

        HikariConfig pool = new HikariConfig();
        pool.setJdbcUrl(JdbcUrls.withKeepAlive(url));
        pool.setMaximumPoolSize(12);
        pool.setPoolName(worker);
        pool.addDataSourceProperty("ApplicationName", worker); // the test waits for a killed worker's sessions by it
        HikariDataSource dataSource = new HikariDataSource(pool);

        DispatcherConfig config = DispatcherConfig.builder()
                .workerId(worker).batchSize(20).concurrency(8)
                .lease(lease).heartbeatInterval(Duration.ofSeconds(1))
                .rescueInterval(Duration.ofSeconds(1)).pollInterval(Duration.ofMillis(200))
                .shutdownDeadline(Duration.ofSeconds(5))
                .backoff(new Backoff(Duration.ofMillis(200), Duration.ofSeconds(2), 2.0, 0.5))
                .build();
        Dispatcher dispatcher = new Dispatcher(dataSource, config, Map.of(Fixtures.TOPIC, (m, ctx) -> {
            try (Connection c = dataSource.getConnection();
                 PreparedStatement ps = c.prepareStatement(
                         "INSERT INTO delivery_log (message_id, claim_version, worker) VALUES (?, ?, ?)")) {
                ps.setLong(1, m.id());
                ps.setLong(2, m.claimVersion());
                ps.setString(3, worker);
                ps.executeUpdate();
            }
            Thread.sleep(sendMillis); // the "send"
            return Outcome.done();
        }));
        CountDownLatch stopped = new CountDownLatch(1);
        Runtime.getRuntime().addShutdownHook(new Thread(() -> {
            dispatcher.stop();
            dataSource.close();
            stopped.countDown();
        }));
        dispatcher.start();
        System.out.println("READY " + worker);
        System.out.flush();
        stopped.await();
    }
}
