package io.mailroom.support;

import io.mailroom.testing.PostgresExtension;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.condition.EnabledIfSystemProperty;
import org.junit.jupiter.api.extension.RegisterExtension;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.ThreadLocalRandom;
import java.util.stream.Collectors;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * "Emails of order N" on a big history, for the closing note: loads {@code mailroom.bench.rows}
 * outbox_effect rows (and as many attempts and idempotency records), prints the plan with
 * EXPLAIN (ANALYZE, BUFFERS) and times the whole service call (effects, attempts, audit, resends)
 * for random orders. Writes the report to {@code target/order-query-plan.txt}. Off by default
 * (loading a million rows takes a while); run it with
 * {@code ./mvnw -B -pl support -am test -Dtest=OrderQueryPlanBenchmarkTest -Dsurefire.failIfNoSpecifiedTests=false -Dmailroom.bench.rows=1000000}.
 */
@EnabledIfSystemProperty(named = "mailroom.bench.rows", matches = "[0-9]{4,8}")
class OrderQueryPlanBenchmarkTest {

    @RegisterExtension
    static final PostgresExtension pg = new PostgresExtension();

    @Test
    void emailsOfOrderOnABigHistory() throws IOException {
        int rows = Integer.parseInt(System.getProperty("mailroom.bench.rows"));
        long loadStarted = System.nanoTime();
        HistoryLoader.load(pg.dsl(), rows);
        long loadMillis = (System.nanoTime() - loadStarted) / 1_000_000;
        int orders = rows / 3;
        String orderId = Integer.toString(orders / 2);

        String sql = pg.dsl().renderInlined(new SupportStore().aboutQuery(pg.dsl(), new About("order", orderId), SupportService.MAX_EMAILS_PER_ENTITY + 1));
        pg.dsl().fetch(sql); // warm the cache as a running service would have it
        String plan = pg.dsl().fetch("EXPLAIN (ANALYZE, BUFFERS) " + sql).stream()
                .map(r -> r.get(0, String.class)).collect(Collectors.joining("\n"));

        SupportService service = new SupportService(pg.dataSource());
        for (int i = 0; i < 50; i++) {
            service.emailsOfOrder(Integer.toString(1 + ThreadLocalRandom.current().nextInt(orders)));
        }
        List<Long> micros = new ArrayList<>();
        for (int i = 0; i < 500; i++) {
            String id = Integer.toString(1 + ThreadLocalRandom.current().nextInt(orders));
            long started = System.nanoTime();
            AboutEmails found = service.emailsOfOrder(id);
            micros.add((System.nanoTime() - started) / 1000);
            assertThat(found.emails()).hasSize(3);
        }
        Collections.sort(micros);
        long effects = pg.dsl().fetchCount(io.mailroom.db.jooq.Tables.OUTBOX_EFFECT);
        String report = String.format("""
                outbox_effect rows: %d (outbox_attempt and idempotency_record: as many), %d orders; loaded in %d ms
                EXPLAIN (ANALYZE, BUFFERS) of "emails of order %s":
                %s

                SupportService.emailsOfOrder (effects + attempts + audit + resends, one read-only transaction), 500 random orders:
                  median %.2f ms, p95 %.2f ms, max %.2f ms
                """, effects, orders, loadMillis, orderId, plan, micros.get(micros.size() / 2) / 1000.0,
                micros.get(micros.size() * 95 / 100) / 1000.0, micros.getLast() / 1000.0);
        System.out.println(report);
        Path out = Path.of("target", "order-query-plan.txt");
        Files.createDirectories(out.getParent());
        Files.writeString(out, report);

        assertThat(effects).isEqualTo(rows);
        assertThat(plan).contains("outbox_effect_aggregate_idx").doesNotContain("Seq Scan on outbox_effect");
        assertThat(micros.get(micros.size() / 2)).as("median microseconds").isLessThan(50_000);
    }
}
