package io.mailroom.outbox;

import io.mailroom.testing.PostgresExtension;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.postgresql.PGConnection;
import org.postgresql.PGNotification;

import javax.sql.DataSource;
import java.lang.reflect.Proxy;
import java.sql.Connection;
import java.sql.SQLException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicInteger;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/** Wake-ups sent after commit from a session of their own: delivered, coalesced, never thrown. */
class WakeUpNotifierTest {

    @RegisterExtension
    static final PostgresExtension pg = new PostgresExtension();

    @Test
    void everyTopicAskedForIsDeliveredAndConcurrentRequestsShareNotifications() throws Exception {
        WakeUpNotifier notifier = new WakeUpNotifier(pg.dataSource());
        try (Connection listener = Fixtures.listen(pg)) {
            int threads = 4;
            int perThread = 200;
            CountDownLatch start = new CountDownLatch(1);
            List<Thread> callers = new ArrayList<>();
            for (int t = 0; t < threads; t++) {
                String topic = "topic-" + t;
                callers.add(Thread.ofPlatform().start(() -> {
                    awaitQuietly(start);
                    for (int i = 0; i < perThread; i++) {
                        notifier.wake(topic);
                    }
                }));
            }
            start.countDown();
            for (Thread t : callers) {
                t.join();
            }
            Set<String> received = new HashSet<>();
            await().atMost(Duration.ofSeconds(10)).until(() -> {
                received.addAll(payloads(listener));
                return received.containsAll(Set.of("topic-0", "topic-1", "topic-2", "topic-3"));
            });
            assertThat(notifier.sent()).as("statements sent for %d requests", threads * perThread)
                    .isBetween(1L, (long) threads * perThread - 1);
            assertThat(notifier.failed()).isZero();
        }
    }

    @Test
    void aFailingDatabaseCostsTheWakeUpButNeitherThrowsNorStopsLaterOnes() throws Exception {
        AtomicInteger calls = new AtomicInteger();
        DataSource flaky = failingFirst(pg.dataSource(), calls);
        WakeUpNotifier notifier = new WakeUpNotifier(flaky);
        try (Connection listener = Fixtures.listen(pg)) {
            notifier.wake("lost");
            await().atMost(Duration.ofSeconds(10)).until(() -> notifier.failed() == 1);
            notifier.wake("delivered");
            Set<String> received = new HashSet<>();
            await().atMost(Duration.ofSeconds(10)).until(() -> {
                received.addAll(payloads(listener));
                return received.contains("delivered");
            });
            assertThat(received).doesNotContain("lost");
        }
    }

    private static List<String> payloads(Connection listener) throws SQLException {
        PGNotification[] batch = listener.unwrap(PGConnection.class).getNotifications(100);
        List<String> out = new ArrayList<>();
        if (batch != null) {
            for (PGNotification n : batch) {
                out.add(n.getParameter());
            }
        }
        return out;
    }

    /** A data source whose first getConnection fails as an unreachable server would (SQLSTATE 08001). */
    private static DataSource failingFirst(DataSource real, AtomicInteger calls) {
        return (DataSource) Proxy.newProxyInstance(DataSource.class.getClassLoader(), new Class<?>[]{DataSource.class},
                (proxy, method, args) -> {
                    if (method.getName().equals("getConnection") && calls.getAndIncrement() == 0) {
                        throw new SQLException("connection refused", "08001");
                    }
                    return method.invoke(real, args);
                });
    }

    private static void awaitQuietly(CountDownLatch latch) {
        try {
            latch.await();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
