package io.mailroom.db;

import io.mailroom.testing.PostgresExtension;
import io.mailroom.testing.TestDatabase;
import io.mailroom.testing.TestDatabases;
import org.flywaydb.core.Flyway;
import org.flywaydb.core.api.MigrationInfo;
import org.jooq.DSLContext;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import javax.sql.DataSource;
import java.sql.Connection;
import java.sql.Statement;
import java.util.Arrays;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The upgrade from a database that the previous Mailroom migrated: every table in {@code public},
 * the example shop's among them, one {@code flyway_schema_history} with V1 to V13 (the old scripts
 * are the queue's own scripts, unchanged since, and the shop's three as they were, kept as test
 * resources under legacy/shop-in-public). Mailroom's tables move into
 * its schema with every row (pending, retrying and in-review messages included), its history comes
 * along, and the shop's tables stay in public as the shop's.
 */
class PublicSchemaUpgradeTest {

    @RegisterExtension
    static final PostgresExtension pg = new PostgresExtension();

    private static void migrateTheOldWay(DataSource ds, String target) {
        // the previous release's layout: one history in public, the shop's scripts among the queue's
        Flyway.configure().dataSource(ds).locations("classpath:legacy/shop-in-public", Schema.MIGRATIONS).target(target)
                .load().migrate();
    }

    @Test
    void aDatabaseOfThePreviousLayout_movesWithItsQueue_andTheShopsTablesStay() throws Exception {
        try (TestDatabase db = TestDatabases.createEmpty()) {
            DataSource ds = db.dataSource();
            migrateTheOldWay(ds, "13");
            DSLContext dsl = db.dsl();
            dsl.execute("INSERT INTO public.orders (customer_email, customer_name, currency, total) VALUES ('ann@example.com', 'Ann', 'EUR', 10)");
            message(dsl, "email-order-1", "pending", 0, "now()");
            message(dsl, "email-order-2", "pending", 2, "now() + interval '1 minute'"); // retrying, with backoff
            message(dsl, "email-order-3", "review", 1, "now()");
            message(dsl, "email-order-4", "done", 1, "now()");
            long partitions = partitionsOfOutbox(dsl, "public");
            assertThat(partitions).isGreaterThan(1);

            var result = Schema.migrate(ds);

            assertThat(result.success).isTrue();
            assertThat(dsl.fetch("SELECT idempotency_key || ':' || status || ':' || attempts FROM mailroom.outbox_message ORDER BY id").getValues(0, String.class))
                    .containsExactly("email-order-1:pending:0", "email-order-2:pending:2", "email-order-3:review:1", "email-order-4:done:1");
            assertThat(dsl.fetchValue("SELECT count(*) FROM mailroom.outbox_effect")).isEqualTo(4L);
            assertThat(partitionsOfOutbox(dsl, "mailroom")).isEqualTo(partitions);
            assertThat(dsl.fetchValue("SELECT count(*) FROM pg_tables WHERE schemaname = 'public' AND tablename LIKE 'outbox%'")).isEqualTo(0L);
            // the shop's tables and rows stay where they were
            assertThat(dsl.fetchValue("SELECT count(*) FROM public.orders")).isEqualTo(1L);
            assertThat(dsl.fetchValue("SELECT to_regclass('public.order_shipment')::text")).isEqualTo("order_shipment");
            // Mailroom's history came along and went on; public's, which only Mailroom had written, is gone
            Flyway mailroom = Schema.flyway(ds, MailroomSchema.DEFAULT).load();
            mailroom.validate();
            assertThat(Arrays.stream(mailroom.info().applied()).map(MigrationInfo::getScript))
                    .containsExactlyElementsOf(SchemaSql.SCRIPTS);
            assertThat(dsl.fetchValue("SELECT to_regclass('public.flyway_schema_history')")).isNull();
            // the id sequence moved with its table: a new message takes the next id
            long next = message(dsl, "email-order-5", "pending", 0, "now()");
            assertThat(next).isGreaterThan(4);
            // the trigger function moved and finds its tables from any session
            try (Connection c = db.newConnection(); Statement st = c.createStatement()) {
                st.execute("SET search_path = public");
                st.execute("INSERT INTO mailroom.delivery_event (source, delivery_id, kind, provider_event, idempotency_key)"
                        + " VALUES ('test', 'd-1', 'delivered', 'email.delivered', 'email-order-4')");
            }
            assertThat(dsl.fetchValue("SELECT events FROM mailroom.delivery_event_count WHERE topic = 'email.order_confirmation'"))
                    .isEqualTo(1L);
            // a second start finds nothing to move and nothing to apply
            assertThat(Schema.migrate(ds).migrationsExecuted).isZero();
        }
    }

    @Test
    void anOlderDatabaseAtV9_movesThenGetsTheRest() throws Exception {
        try (TestDatabase db = TestDatabases.createEmpty()) {
            DataSource ds = db.dataSource();
            migrateTheOldWay(ds, "9");
            message(db.dsl(), "email-order-1", "pending", 0, "now()");
            var result = Schema.migrate(ds);
            // V10 onwards, into the moved tables (V14 itself is the move)
            assertThat(result.migrationsExecuted).isEqualTo(SchemaSql.SCRIPTS.size()
                    - SchemaSql.SCRIPTS.indexOf("V10__claim_incarnation.sql"));
            assertThat(Schema.status(ds, MailroomSchema.DEFAULT).upToDate()).isTrue();
            assertThat(db.dsl().fetchValue("SELECT count(*) FROM mailroom.outbox_message WHERE claimed_incarnation IS NULL")).isEqualTo(1L);
        }
    }

    @Test
    void aDatabaseWhoseHistoryAlsoHoldsABusinesssRows_keepsThoseRows() throws Exception {
        try (TestDatabase db = TestDatabases.createEmpty()) {
            DataSource ds = db.dataSource();
            migrateTheOldWay(ds, "13");
            db.dsl().execute("INSERT INTO public.flyway_schema_history (installed_rank, version, description, type, script,"
                    + " checksum, installed_by, execution_time, success) VALUES (100, '500', 'business table', 'SQL',"
                    + " 'V500__business_table.sql', 1, 'app', 1, true)");
            Schema.migrate(ds);
            assertThat(db.dsl().fetch("SELECT script FROM public.flyway_schema_history").getValues(0, String.class))
                    .containsExactly("V500__business_table.sql");
        }
    }

    private static long message(DSLContext dsl, String key, String status, int attempts, String availableAt) {
        String schema = dsl.fetchValue("SELECT to_regclass('mailroom.outbox_message')") == null ? "public" : "mailroom";
        Long id = dsl.fetchSingle("INSERT INTO " + schema + ".outbox_message (topic, aggregate_type, aggregate_id,"
                + " idempotency_key, payload, status, attempts, available_at) VALUES ('email.order_confirmation', 'order',"
                + " '1', ?, '{}'::jsonb, ?, ?, " + availableAt + ") RETURNING id", key, status, attempts).get(0, Long.class);
        dsl.execute("INSERT INTO " + schema + ".outbox_effect (idempotency_key, topic, aggregate_type, aggregate_id, message_id,"
                + " message_created_at, status, attempts, max_attempts) SELECT idempotency_key, topic, aggregate_type,"
                + " aggregate_id, id, created_at, status, attempts, max_attempts FROM " + schema + ".outbox_message WHERE id = ?", id);
        return id;
    }

    private static long partitionsOfOutbox(DSLContext dsl, String schema) {
        return dsl.fetchSingle("SELECT count(*) FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid"
                + " JOIN pg_namespace n ON n.oid = c.relnamespace WHERE i.inhparent = to_regclass(? || '.outbox_message')"
                + " AND n.nspname = ?", schema, schema).get(0, Long.class);
    }
}
