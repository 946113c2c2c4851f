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

    @Test
    void renderingPartsAreCompressedWithLz4WhereTheServerHasIt() {
        DSLContext dsl = pg.dsl();
        // a server built without lz4 refuses the setting's value: there the migration keeps pglz
        boolean lz4 = dsl.fetchSingle("SELECT 'lz4' = ANY (enumvals) FROM pg_settings WHERE name = 'default_toast_compression'")
                .get(0, Boolean.class);
        List<String> methods = dsl.fetch("SELECT a.attname || '=' || coalesce(nullif(a.attcompression::text, ''), '-') AS m"
                        + " FROM pg_attribute a WHERE a.attrelid = 'mailroom.email_rendering'::regclass"
                        + " AND a.attname IN ('text_part', 'html_part') ORDER BY a.attname")
                .getValues("m", String.class);
        assertThat(methods).containsExactly(lz4 ? "html_part=l" : "html_part=-", lz4 ? "text_part=l" : "text_part=-");
        if (lz4) {
            // and a part written now is stored with it
            String method = dsl.transactionResult(cfg -> {
                cfg.dsl().execute("INSERT INTO mailroom.email_rendering (idempotency_key, message_id, message_created_at, attempt,"
                        + " template_version, subject, text_part, html_part) VALUES ('lz4-check', 1, now(), 1, 'v', 's', 't',"
                        + " repeat('<p>lz4</p>', 500))");
                String m = cfg.dsl().fetchSingle("SELECT pg_column_compression(html_part) FROM mailroom.email_rendering"
                        + " WHERE idempotency_key = 'lz4-check'").get(0, String.class);
                cfg.dsl().execute("DELETE FROM mailroom.email_rendering WHERE idempotency_key = 'lz4-check'");
                return m;
            });
            assertThat(method).isEqualTo("lz4");
        }
    }
}
