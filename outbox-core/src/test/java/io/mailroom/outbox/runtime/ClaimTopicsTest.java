package io.mailroom.outbox.runtime;

import io.mailroom.db.sql.SqlClock;
import io.mailroom.outbox.DispatcherSessions;
import io.mailroom.testing.PostgresExtension;
import org.jooq.DSLContext;
import org.jooq.Query;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import java.sql.Connection;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.function.Function;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A claim of one topic reads only that topic (issue 28, V28): 30,000 emails wait on a paused topic,
 * half of them older than everything else and half among the others, and the claim of another topic
 * reads a few dozen buffers, from the head and from a mark, instead of walking the paused topic's rows (a claim of several topics
 * still walks them: {@link Producer#claimSets} claims topic by topic while one is paused). A claim
 * of several topics takes their rows in (available_at, id) order across all of them. Counts
 * buffers of the generic plan (EXPLAIN ANALYZE, rolled back), not time.
 */
class ClaimTopicsTest {

    @RegisterExtension
    static final PostgresExtension pg = new PostgresExtension();

    private static final int PAUSED = 30_000;
    private static final Duration LEASE = Duration.ofMinutes(1);

    private final OutboxStore store = new OutboxStore(SqlClock.database(), Backoff.DEFAULT);

    /**
     * Half the paused topic's rows an hour old, half among the others'; 20 each of "a" and "b",
     * interleaved, from a minute ago, "a" at even seconds and "b" at odd ones.
     */
    @BeforeAll
    static void aPausedBacklogBeforeEverythingElse() {
        pg.dsl().execute("""
                INSERT INTO outbox_message (topic, aggregate_type, aggregate_id, idempotency_key, payload, available_at)
                SELECT 'paused', 'order', 'p' || g, 'p' || g, '{}',
                       CASE WHEN g % 2 = 0 THEN now() - interval '1 hour'
                            ELSE now() - interval '1 minute' + (g % 40000) * interval '1 millisecond' END
                FROM generate_series(1, ?) g""",
                PAUSED);
        pg.dsl().execute("""
                INSERT INTO outbox_message (topic, aggregate_type, aggregate_id, idempotency_key, payload, available_at)
                SELECT CASE WHEN g % 2 = 0 THEN 'a' ELSE 'b' END, 'order', 'k' || g, 'k' || g, '{}',
                       now() - interval '1 minute' + g * interval '1 second'
                FROM generate_series(0, 39) g""");
        pg.dsl().execute("VACUUM ANALYZE outbox_message");
    }

    @Test
    void aClaimOfOneTopicReadsOnlyThatTopic() throws Exception {
        assertReadsOnlyItsTopics(claimQuery(List.of("a"), null));
    }

    @Test
    void aClaimOfOneTopicFromAMarkReadsOnlyThatTopic() throws Exception {
        ClaimMark oldest = pg.dsl().resultQuery("""
                SELECT available_at, id FROM outbox_message WHERE topic IN ('a', 'b') ORDER BY available_at, id LIMIT 1""")
                .fetchOne(r -> new ClaimMark(r.get(0, Instant.class), r.get(1, Long.class)));
        assertReadsOnlyItsTopics(claimQuery(List.of("a"), oldest));
    }

    @Test
    void aClaimOfSeveralTopicsTakesTheOldestRowsAcrossThemInOrder() {
        List<String> taken = claimedThenReleased(tx -> store.claims().claim(tx, "w", null, 5,
                List.of("b", "a", "nothing-here"), LEASE));
        assertThat(taken).containsExactly("k0", "k1", "k2", "k3", "k4");
    }

    @Test
    void aClaimOfSeveralTopicsFromAMarkStartsAtTheMark() {
        ClaimMark third = pg.dsl().resultQuery("SELECT available_at, id FROM outbox_message WHERE idempotency_key = 'k2'")
                .fetchOne(r -> new ClaimMark(r.get(0, Instant.class), r.get(1, Long.class)));
        List<String> taken = claimedThenReleased(tx -> store.claims().claim(tx, "w", null, 3, List.of("a", "b"), LEASE,
                true, third).messages());
        assertThat(taken).containsExactly("k2", "k3", "k4");
    }

    /** The keys a claim took, in the order it returned them; the rows are pending again afterwards. */
    private static List<String> claimedThenReleased(Function<DSLContext, List<ClaimedMessage>> claim) {
        DispatcherSessions sessions = new DispatcherSessions(pg.dataSource(), null, null);
        try {
            return sessions.inTransaction(tx -> claim.apply(tx).stream().map(ClaimedMessage::idempotencyKey).toList());
        } finally {
            pg.dsl().execute("UPDATE outbox_message SET status = 'pending', lease_until = NULL WHERE status = 'running'");
        }
    }

    private Query claimQuery(List<String> topics, ClaimMark from) {
        return store.claims().claimQuery(pg.dsl(), "w", null, 16, topics, LEASE, true, from);
    }

    /** Under the claim's own setting, the pick reads a few dozen buffers, not the paused topic's 30,000 rows. */
    private static void assertReadsOnlyItsTopics(Query claim) throws Exception {
        try (Connection c = pg.newConnection()) {
            String json = PlanText.genericPlanJson(c, claim, List.of(ClaimStore.ORDERED_PICK));
            assertThat(PlanText.pickBuffers(json)).as(json).isLessThan(200);
            assertThat(PlanText.firstNumber(json, "\"Actual Rows\": ")).as(json).isEqualTo(16);
        }
    }
}
