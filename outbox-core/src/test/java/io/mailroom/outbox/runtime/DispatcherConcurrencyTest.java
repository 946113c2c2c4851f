package io.mailroom.outbox.runtime;

import io.mailroom.outbox.Fixtures;
import io.mailroom.testing.PostgresExtension;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/** Four dispatcher instances (real threads, real loops) over 10,000 messages: none lost, none twice. */
class DispatcherConcurrencyTest {

    @RegisterExtension
    static final PostgresExtension pg = new PostgresExtension();

    @Test
    void fourDispatchersHandleEveryMessageExactlyOnce() {
        int n = 10_000;
        var enqueued = Fixtures.enqueue(pg.dsl(), null, "c", n);
        Map<Long, AtomicInteger> deliveries = new ConcurrentHashMap<>();
        Map<Long, String> deliveredBy = new ConcurrentHashMap<>();

        List<Dispatcher> dispatchers = new ArrayList<>();
        for (int i = 1; i <= 4; i++) {
            String worker = "thread-dispatcher-" + i;
            DispatcherConfig config = DispatcherConfig.builder()
                    .workerId(worker).batchSize(50).concurrency(16)
                    .pollInterval(Duration.ofMillis(200)).lease(Duration.ofSeconds(60)).build();
            dispatchers.add(new Dispatcher(pg.dataSource(), config, Map.of(Fixtures.TOPIC, (m, ctx) -> {
                deliveries.computeIfAbsent(m.id(), id -> new AtomicInteger()).incrementAndGet();
                deliveredBy.put(m.id(), worker);
                return Outcome.done();
            })));
        }
        dispatchers.forEach(Dispatcher::start);
        try {
            await().atMost(Duration.ofMinutes(2)).pollInterval(Duration.ofMillis(200))
                    .until(() -> Fixtures.countByStatus(pg.dsl(), "done") == n);
        } finally {
            dispatchers.forEach(Dispatcher::stop);
        }

        assertThat(deliveries).hasSize(n);
        assertThat(deliveries.values()).allSatisfy(c -> assertThat(c.get()).isEqualTo(1));
        enqueued.forEach(e -> assertThat(deliveries).containsKey(e.id()));
        assertThat(Fixtures.countByStatus(pg.dsl(), "running")).isZero();
        assertThat(Fixtures.countByStatus(pg.dsl(), "pending")).isZero();
        // the work was actually shared
        assertThat(new java.util.HashSet<>(deliveredBy.values())).hasSizeGreaterThan(1);
        assertThat(pg.dsl().fetchCount(pg.dsl().selectFrom("outbox_effect").where("status = 'done'"))).isEqualTo(n);
    }
}
