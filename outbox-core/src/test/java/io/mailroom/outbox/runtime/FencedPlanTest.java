package io.mailroom.outbox.runtime;

import io.mailroom.db.sql.HotSql;
import io.mailroom.db.sql.SqlClock;
import io.mailroom.testing.PostgresExtension;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The statements on claimed rows reach them by primary key in the generic plans the dispatchers
 * keep, never by reading the lease index {@code (lease_until) WHERE status = 'running'} whole:
 * while a long transaction holds the xmin horizon that index keeps an entry for every row that ran
 * since, and a heartbeat or completion that reads it grows with the hold's age (issue 28).
 */
class FencedPlanTest {

    @RegisterExtension
    static final PostgresExtension pg = new PostgresExtension();

    /** A queue's statistics as they are at work: many finished rows, few running (with them the lease index looks tiny). */
    @BeforeAll
    static void aQueueAtWork() {
        pg.dsl().execute("TRUNCATE outbox_message, outbox_effect, outbox_effect_term, outbox_attempt");
        pg.dsl().execute("""
                INSERT INTO outbox_message (topic, aggregate_type, aggregate_id, idempotency_key, payload, status,
                                            finished_at)
                SELECT 't', 'order', 'o' || g, 'k' || g, '{}', 'done', now() FROM generate_series(1, 20000) g""");
        pg.dsl().execute("""
                INSERT INTO outbox_message (topic, aggregate_type, aggregate_id, idempotency_key, payload, status,
                                            lease_until, claim_version)
                SELECT 't', 'order', 'r' || g, 'r' || g, '{}', 'running', now() + interval '1 minute', 1
                FROM generate_series(1, 50) g""");
        pg.dsl().execute("ANALYZE outbox_message");
    }

    @Test
    void heartbeatCompletionAndReleaseGoThroughThePrimaryKey() throws Exception {
        for (String template : List.of(LeaseStore.HEARTBEAT, CompletionStore.FINISH, LeaseStore.RELEASE)) {
            String plan = genericPlan(template);
            assertThat(targetScan(plan)).as(plan).contains("_pkey on outbox_message_").doesNotContain("lease_until_idx");
        }
    }

    @Test
    void theRescueReadsTheLeaseIndexOnceAndUpdatesThroughThePrimaryKey() throws Exception {
        String plan = genericPlan(RescueStore.RESCUE);
        String target = targetScan(plan);
        assertThat(plan.substring(0, plan.length() - target.length())).as(plan).contains("lease_until_idx");
        assertThat(target).as(plan).contains("_pkey on outbox_message_").doesNotContain("lease_until_idx");
    }

    /** The part of an UPDATE's plan that finds its target rows: from its first child node on, after any CTE. */
    private static String targetScan(String plan) {
        int at = plan.indexOf("\n  ->  ");
        assertThat(at).as(plan).isPositive();
        return plan.substring(at);
    }

    /** The statement's generic plan (EXPLAIN, not executed), as a prepared statement gets it after five runs. */
    private static String genericPlan(String template) throws Exception {
        String sql = HotSql.of(template, SqlClock.database()).sql();
        String numbered = PlanText.numbered(sql);
        long n = sql.chars().filter(ch -> ch == '?').count();
        try (Connection c = pg.newConnection(); Statement st = c.createStatement()) {
            st.execute("SET plan_cache_mode = force_generic_plan");
            st.execute("PREPARE fenced AS " + numbered);
            List<String> lines = new ArrayList<>();
            try (ResultSet rs = st.executeQuery("EXPLAIN (COSTS OFF) EXECUTE fenced("
                    + String.join(", ", Collections.nCopies((int) n, "NULL")) + ")")) {
                while (rs.next()) {
                    lines.add(rs.getString(1));
                }
            }
            return String.join("\n", lines);
        }
    }
}
