package io.mailroom.outbox.runtime;

import io.mailroom.db.sql.SqlClock;
import io.mailroom.outbox.DispatcherSessions;
import io.mailroom.testing.TestDatabase;
import io.mailroom.testing.TestDatabases;
import org.jooq.DSLContext;
import org.jooq.conf.ParamType;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

/**
 * Issue 27: does a mass of scheduled emails slow the claim? The claim reads the partial index
 * {@code (available_at, id) WHERE status = 'pending'} from its head, so rows scheduled for later sit
 * behind every due row and are never read. Measured: two databases, one with {@code due} due rows
 * alone, one with the same due rows and {@code scheduled} rows with times from 1 h to 30 days ahead
 * (ids interleaved with the due ones); the claim statement's plan (EXPLAIN ANALYZE, BUFFERS) in
 * each, then claims timed alternately in the two, rolled back, so every round sees the same data. Prints figures; asserts nothing (a timed
 * unit test would fail on a busy machine without saying anything about the claim).
 *
 * <p>Run: {@code scripts/run-test-main.sh outbox-core io.mailroom.outbox.runtime.ScheduledClaimBenchmark 200000 10000 50 300}
 * (scheduled rows, due rows, batch size, rounds).
 */
public final class ScheduledClaimBenchmark {

    private static final String TOPIC = "test.topic";

    public static void main(String[] args) {
        int scheduled = args.length > 0 ? Integer.parseInt(args[0]) : 200_000;
        int due = args.length > 1 ? Integer.parseInt(args[1]) : 10_000;
        int batch = args.length > 2 ? Integer.parseInt(args[2]) : 50;
        int rounds = args.length > 3 ? Integer.parseInt(args[3]) : 300;
        try (TestDatabase plain = TestDatabases.create(); TestDatabase withScheduled = TestDatabases.create()) {
            OutboxStore store = new OutboxStore(SqlClock.database(), Backoff.DEFAULT);
            // due rows get every 21st id, so the scheduled rows' ids lie between theirs
            for (TestDatabase db : List.of(plain, withScheduled)) {
                load(db.dsl(), due, "due", "now() - interval '1 hour' + g * interval '1 millisecond'", 21, 0);
            }
            load(withScheduled.dsl(), scheduled, "sched", "now() + interval '1 hour' + (g % 2592000) * interval '1 second'", 21, 1);
            analyze(plain.dsl());
            analyze(withScheduled.dsl());

            System.out.printf("== %d due rows, no scheduled rows ==%n", due);
            explain(plain.dsl(), store, batch);
            System.out.printf("%n== %d due rows + %d scheduled 1 h to 30 days ahead ==%n", due, scheduled);
            explain(withScheduled.dsl(), store, batch);

            DispatcherSessions a = new DispatcherSessions(plain.dataSource(), null, null);
            DispatcherSessions b = new DispatcherSessions(withScheduled.dataSource(), null, null);
            List<Long> before = new ArrayList<>();
            List<Long> after = new ArrayList<>();
            for (int i = 0; i < rounds + 20; i++) { // alternating, so both share the machine's noise
                long x = ClaimCostBenchmark.timeClaim(a, store, batch, true);
                long y = ClaimCostBenchmark.timeClaim(b, store, batch, true);
                if (i >= 20) { // warm-up
                    before.add(x);
                    after.add(y);
                }
            }
            System.out.printf("%nclaim of %d, %d rounds each, alternating between the two databases (rolled back):%n", batch, rounds);
            ClaimCostBenchmark.print("due only          ", before);
            ClaimCostBenchmark.print("due + scheduled   ", after);
            System.out.printf("ratio of medians (with scheduled / without): %.2f%n", ClaimCostBenchmark.median(after) / (double) ClaimCostBenchmark.median(before));
            for (TestDatabase db : List.of(plain, withScheduled)) {
                System.out.println(db.dsl().fetchOne("""
                        SELECT 'claim index: ' || pg_size_pretty(sum(pg_relation_size(h.inhrelid))) || ' over its partitions'
                        FROM pg_class c JOIN pg_inherits h ON h.inhparent = c.oid
                        WHERE c.relname = 'outbox_message_claim_idx'""").get(0, String.class));
            }
        }
    }

    /** {@code n} pending rows named {@code prefix-g}, available at {@code availableAt}, ids {@code stride*g + offset}. */
    private static void load(DSLContext dsl, int n, String prefix, String availableAt, int stride, int offset) {
        long base = dsl.fetchOne("SELECT nextval('outbox_message_id_seq')").get(0, Long.class);
        dsl.execute("""
                WITH m AS (
                  INSERT INTO outbox_message (id, topic, aggregate_type, aggregate_id, idempotency_key, payload, available_at)
                  SELECT {0} + g * {1} + {2}, '%s', 'order', g::text, '%s-' || g, '{}'::jsonb, %s
                  FROM generate_series(1, {3}) g RETURNING id, created_at, idempotency_key, aggregate_id)
                INSERT INTO outbox_effect (idempotency_key, topic, aggregate_type, aggregate_id, message_id,
                                           message_created_at, max_attempts)
                SELECT idempotency_key, '%s', 'order', aggregate_id, id, created_at, 10 FROM m
                """.formatted(TOPIC, prefix, availableAt, TOPIC), base, stride, offset, n);
    }

    private static void analyze(DSLContext dsl) {
        dsl.execute("VACUUM ANALYZE outbox_message");
        dsl.execute("VACUUM ANALYZE outbox_effect");
    }

    /** The claim's plan, executed (and rolled back). */
    private static void explain(DSLContext dsl, OutboxStore store, int batch) {
        String sql = store.claims().claimQuery(dsl, "bench", null, batch, List.of(TOPIC), Duration.ofMinutes(1), true)
                .getSQL(ParamType.INLINED);
        try {
            dsl.transaction(cfg -> {
                cfg.dsl().fetch("EXPLAIN (ANALYZE, BUFFERS, COSTS OFF) " + sql).forEach(r -> System.out.println("  " + r.get(0)));
                throw new ClaimCostBenchmark.Rollback();
            });
        } catch (ClaimCostBenchmark.Rollback expected) {
            // the claim ran for its plan; nothing of it stays
        }
    }
}
