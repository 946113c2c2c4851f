package io.mailroom.outbox.runtime;

import io.mailroom.outbox.DispatcherSessions;
import io.mailroom.db.sql.SqlClock;
import io.mailroom.testing.TestDatabase;
import io.mailroom.testing.TestDatabases;
import org.jooq.DSLContext;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

/**
 * Measures what the ordering-key predicate costs the claim: the same claim statement with and
 * without it, on the same data (claims are rolled back, so both variants see identical tables),
 * alternating to share the machine's noise. Prints figures; asserts nothing.
 *
 * <p>Run: {@code scripts/run-test-main.sh outbox-core io.mailroom.outbox.runtime.ClaimCostBenchmark 100000 50 300}
 * (pending messages, batch size, rounds).
 */
public final class ClaimCostBenchmark {

    public static void main(String[] args) {
        int pending = args.length > 0 ? Integer.parseInt(args[0]) : 100_000;
        int batch = args.length > 1 ? Integer.parseInt(args[1]) : 50;
        int rounds = args.length > 2 ? Integer.parseInt(args[2]) : 300;
        try (TestDatabase db = TestDatabases.create()) {
            DSLContext dsl = db.dsl();
            load(dsl, pending);
            OutboxStore store = new OutboxStore(SqlClock.database(), Backoff.DEFAULT);
            DispatcherSessions sessions = new DispatcherSessions(db.dataSource(), null, null);
            List<Long> with = new ArrayList<>();
            List<Long> without = new ArrayList<>();
            for (int i = 0; i < rounds + 20; i++) {
                long a = timeClaim(sessions, store, batch, true);
                long b = timeClaim(sessions, store, batch, false);
                if (i >= 20) { // warm-up
                    with.add(a);
                    without.add(b);
                }
            }
            System.out.printf("pending=%d (half with ordering keys, 2 per key) batch=%d rounds=%d%n", pending, batch, rounds);
            print("claim with ordering-key predicate   ", with);
            print("claim without ordering-key predicate", without);
            System.out.printf("ratio of medians: %.2f%n", median(with) / (double) median(without));
        }
    }

    private static void load(DSLContext dsl, int n) {
        dsl.execute("""
                WITH s AS (SELECT g, nextval('outbox_message_id_seq') AS id FROM generate_series(1, {0}) g),
                     m AS (
                  INSERT INTO outbox_message (id, topic, aggregate_type, aggregate_id, idempotency_key, ordering_key,
                                              payload, available_at)
                  SELECT id, 'test.topic', 'order', (g / 2)::text, 'bench-' || g,
                         CASE WHEN g % 4 < 2 THEN 'order-' || (g / 2) END, '{}'::jsonb,
                         now() - interval '1 hour' + g * interval '1 millisecond'
                  FROM s RETURNING id, created_at, idempotency_key, aggregate_id)
                INSERT INTO outbox_effect (idempotency_key, topic, aggregate_type, aggregate_id, message_id,
                                           message_created_at, max_attempts)
                SELECT idempotency_key, 'test.topic', 'order', aggregate_id, id, created_at, 10 FROM m
                """, n);
        dsl.execute("VACUUM ANALYZE outbox_message");
    }

    /** One claim of {@code batch} messages, timed, then rolled back so the next round sees the same rows. */
    static long timeClaim(DispatcherSessions sessions, OutboxStore store, int batch, boolean ordering) {
        long[] took = new long[1];
        try {
            sessions.inTransaction(tx -> {
                long t0 = System.nanoTime();
                int got = store.claims().claim(tx, "bench", null, batch, List.of("test.topic"), Duration.ofMinutes(1), ordering).size();
                took[0] = System.nanoTime() - t0;
                if (got != batch) {
                    throw new IllegalStateException("claimed " + got + " of " + batch);
                }
                throw new Rollback();
            });
        } catch (Rollback expected) {
            // rolled back on purpose: the next round sees the same data
        }
        return took[0];
    }

    static final class Rollback extends RuntimeException {
        Rollback() {
            super(null, null, false, false);
        }
    }

    static void print(String label, List<Long> nanos) {
        long[] s = nanos.stream().mapToLong(Long::longValue).sorted().toArray();
        System.out.printf("%s p50 %.3f ms  p95 %.3f ms  p99 %.3f ms%n", label,
                s[s.length / 2] / 1e6, s[(int) (s.length * 0.95)] / 1e6, s[(int) (s.length * 0.99)] / 1e6);
    }

    static long median(List<Long> nanos) {
        long[] s = nanos.stream().mapToLong(Long::longValue).sorted().toArray();
        return s[s.length / 2];
    }

}
