package io.mailroom.outbox.runtime;

import io.mailroom.db.sql.SqlClock;
import io.mailroom.outbox.DispatcherSessions;
import io.mailroom.outbox.Fixtures;
import io.mailroom.testing.PostgresExtension;
import org.jooq.Query;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import java.sql.Connection;
import java.time.Duration;
import java.time.Instant;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assumptions.assumeThat;

/**
 * The claim's generic plan walks the claim index in order under its LIMIT whatever the statistics
 * say, from the head and from a mark: statistics taken while nothing was pending, then a burst
 * enqueued, made PostgreSQL plan a bitmap scan of every pending row and a sort (issue 28). Counts
 * plan nodes and buffers (EXPLAIN ANALYZE, rolled back), not time.
 */
class ClaimPlanTest {

    @RegisterExtension
    static final PostgresExtension pg = new PostgresExtension();

    private static final List<String> TOPICS = List.of(Fixtures.TOPIC);
    private static final int PENDING = 20_000;

    private final OutboxStore store = new OutboxStore(SqlClock.database(), Backoff.DEFAULT);

    /** A queue after a drain (analyzed with nothing pending), then a burst the statistics have not seen. */
    @BeforeAll
    static void aBurstAfterADrain() {
        pg.dsl().execute("TRUNCATE outbox_message, outbox_effect, outbox_effect_term, outbox_attempt");
        pg.dsl().execute("""
                INSERT INTO outbox_message (topic, aggregate_type, aggregate_id, idempotency_key, payload, status,
                                            finished_at)
                SELECT ?, 'order', 'd' || g, 'd' || g, '{}', 'done', now() FROM generate_series(1, 2000) g""",
                Fixtures.TOPIC);
        pg.dsl().execute("VACUUM ANALYZE outbox_message");
        pg.dsl().execute("""
                INSERT INTO outbox_message (topic, aggregate_type, aggregate_id, idempotency_key, payload)
                SELECT ?, 'order', 'p' || g, 'p' || g, '{}' FROM generate_series(1, ?) g""", Fixtures.TOPIC, PENDING);
    }

    @Test
    void theClaimFromTheHeadReadsInIndexOrderUnderStaleStatistics() throws Exception {
        assertOrdered(store.claims().claimQuery(pg.dsl(), "w", null, 32, TOPICS, Duration.ofMinutes(1), true));
    }

    @Test
    void theClaimFromAMarkReadsInIndexOrderUnderStaleStatistics() throws Exception {
        ClaimMark lowest = pg.dsl().resultQuery("""
                SELECT available_at, id FROM outbox_message WHERE status = 'pending' ORDER BY available_at, id LIMIT 1""")
                .fetchOne(r -> new ClaimMark(r.get(0, Instant.class), r.get(1, Long.class)));
        assertOrdered(store.claims().claimQuery(pg.dsl(), "w", null, 32, TOPICS, Duration.ofMinutes(1), true, lowest));
    }

    @Test
    void theClaimsTransactionDisablesSortingForItselfOnly() {
        DispatcherSessions sessions = new DispatcherSessions(pg.dataSource(), null, null);
        String during = sessions.inTransaction(tx -> {
            store.claims().claim(tx, "w", null, 1, TOPICS, Duration.ofMinutes(1), true, null);
            return String.valueOf(tx.fetchValue("SHOW enable_sort"));
        });
        String after = sessions.inTransaction(tx -> String.valueOf(tx.fetchValue("SHOW enable_sort")));
        pg.dsl().execute("UPDATE outbox_message SET status = 'pending', lease_until = NULL WHERE status = 'running'");
        assertThat(during).isEqualTo("off");
        assertThat(after).isEqualTo("on");
    }

    /**
     * Without the claim's setting the generic plan sorts every pending row (the precondition: if a
     * server plans this well on its own, there is nothing to show); with it, no sort, and the pick
     * reads a few dozen buffers instead of every pending row's.
     */
    private static void assertOrdered(Query claim) throws Exception {
        Plan without = genericPlan(claim, false);
        assumeThat(without.sorts()).as("the server plans a sort without the setting: " + without).isTrue();
        Plan with = genericPlan(claim, true);
        assertThat(with.sorts()).as(with.toString()).isFalse();
        assertThat(with.pickBuffers()).as("with: %s; without: %s", with, without)
                .isLessThan(200).isLessThan(without.pickBuffers() / 5);
    }

    private record Plan(boolean sorts, long pickBuffers, String json) {
        @Override
        public String toString() {
            return "sorts=" + sorts + ", pick buffers=" + pickBuffers + ": " + json;
        }
    }

    /** The claim's generic plan, made in a transaction that ran {@link ClaimStore#ORDERED_PICK} first or not, executed and rolled back. */
    private static Plan genericPlan(Query claim, boolean orderedPick) throws Exception {
        try (Connection c = pg.newConnection()) {
            String json = PlanText.genericPlanJson(c, claim, orderedPick ? List.of(ClaimStore.ORDERED_PICK) : List.of());
            return new Plan(json.contains("\"Node Type\": \"Sort\""), PlanText.pickBuffers(json), json);
        }
    }
}
