package io.mailroom.db;

import io.mailroom.testing.PostgresExtension;
import io.mailroom.testing.TestDatabase;
import io.mailroom.testing.TestDatabases;
import org.jooq.DSLContext;
import org.jooq.Record;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

class MigrationTest {

    @RegisterExtension
    static final PostgresExtension pg = new PostgresExtension();

    @Test
    void migrationsApplyToAnEmptyDatabase() throws Exception {
        // A database from template0, not the harness's template: the scripts themselves are exercised.
        try (TestDatabase scratch = TestDatabases.createEmpty()) {
            var result = Schema.migrate(scratch.dataSource());
            assertThat(result.success).isTrue();
            assertThat(result.migrationsExecuted).isGreaterThanOrEqualTo(3);
            assertThat(scratch.dsl().fetchSingle("SELECT count(*) FROM mailroom.outbox_message").get(0, Long.class)).isZero();
        }
    }

    @Test
    void claimIndexIsPartialOnPending() {
        DSLContext dsl = pg.dsl();
        String def = dsl.fetchSingle(
                "SELECT pg_get_indexdef(i.indexrelid) FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid"
                        + " WHERE c.relname = 'outbox_message_claim_idx'").get(0, String.class);
        assertThat(def).contains("(available_at, id)").contains("WHERE ((status)::text = 'pending'::text)");
        // every partition carries its own copy of the partial index
        List<String> partitionIndexes = dsl.fetch(
                "SELECT pg_get_indexdef(i.inhrelid) AS def FROM pg_inherits i"
                        + " JOIN pg_class p ON p.oid = i.inhparent WHERE p.relname = 'outbox_message_claim_idx'")
                .getValues("def", String.class);
        assertThat(partitionIndexes).isNotEmpty().allSatisfy(d -> assertThat(d).contains("WHERE ((status)::text = 'pending'::text)"));
    }

    @Test
    void outboxIsPartitionedWithADefaultAndDailyPartitions() {
        List<String> partitions = pg.dsl().fetch(
                "SELECT c.relname FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid"
                        + " JOIN pg_class p ON p.oid = i.inhparent WHERE p.relname = 'outbox_message' ORDER BY 1")
                .getValues(0, String.class);
        assertThat(partitions).contains("outbox_message_default");
        assertThat(partitions.stream().filter(n -> n.matches("outbox_message_p\\d{8}"))).hasSizeGreaterThanOrEqualTo(5);
    }

    @Test
    void everyOutboxPartitionHasQueueAutovacuumSettings() {
        var rows = pg.dsl().fetch(
                "SELECT c.relname, c.reloptions::text AS opts FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid"
                        + " JOIN pg_class p ON p.oid = i.inhparent WHERE p.relname = 'outbox_message'");
        assertThat(rows).isNotEmpty();
        for (Record r : rows) {
            assertThat(r.get("opts", String.class))
                    .as("reloptions of %s", r.get(0))
                    .contains("autovacuum_vacuum_scale_factor=0.01")
                    .contains("autovacuum_vacuum_threshold=1000");
        }
    }

    @Test
    void statusIsConstrained() {
        String constraint = pg.dsl().fetchSingle(
                "SELECT pg_get_constraintdef(oid) FROM pg_constraint WHERE conname = 'outbox_message_status_check' AND conrelid = 'outbox_message'::regclass")
                .get(0, String.class);
        assertThat(constraint).contains("pending").contains("running").contains("done").contains("failed");
    }
}
