package io.mailroom.db;

import io.mailroom.testing.PostgresExtension;
import io.mailroom.testing.TestDatabase;
import io.mailroom.testing.TestDatabases;
import org.flywaydb.core.Flyway;
import org.flywaydb.core.api.MigrationInfo;
import org.flywaydb.core.api.MigrationVersion;
import org.jooq.DSLContext;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import javax.sql.DataSource;
import java.sql.Connection;
import java.sql.Statement;
import java.util.Arrays;
import java.util.List;

import static io.mailroom.db.jooq.Tables.OUTBOX_CONTROL;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * Mailroom is a guest in a business's database: its tables in a schema of its own, its own Flyway
 * history and script location, so that the business's Flyway (at the defaults: classpath:db/migration,
 * flyway_schema_history) and Mailroom's migrate the same database in either order without either
 * noticing the other.
 */
class SchemaPlacementTest {

    @RegisterExtension
    static final PostgresExtension pg = new PostgresExtension();

    /** The business's own Flyway, at the defaults of Flyway and Spring Boot. */
    private static Flyway business(DataSource ds) {
        return Flyway.configure().dataSource(ds).locations("classpath:business/db/migration").load();
    }

    /** The database as a business's app sees it: no search path of the test harness's. */
    static DataSource plain(TestDatabase db) {
        org.postgresql.ds.PGSimpleDataSource ds = new org.postgresql.ds.PGSimpleDataSource();
        ds.setURL(db.jdbcUrl());
        if (db.user() != null) {
            ds.setUser(db.user());
        }
        if (db.password() != null) {
            ds.setPassword(db.password());
        }
        return ds;
    }

    @Test
    void anEmptyDatabaseGetsMailroomInItsOwnSchema_andNothingElse() throws Exception {
        try (TestDatabase db = TestDatabases.createEmpty()) {
            Schema.migrate(db.dataSource());
            DSLContext dsl = db.dsl();
            assertThat(tables(dsl, "public")).as("nothing of Mailroom's, and no shop, in public").isEmpty();
            assertThat(tables(dsl, "mailroom")).contains("outbox_message", "outbox_effect", "idempotency_record",
                    Schema.HISTORY_TABLE).noneMatch(t -> t.startsWith("order"));
            assertThat(dsl.fetchValue("SELECT to_regclass('public.flyway_schema_history')")).isNull();
        }
    }

    @Test
    void aBusinessWithItsOwnFlywayAndOrdersTable_migratesBesideMailroomInEitherOrder() throws Exception {
        for (boolean businessFirst : new boolean[]{true, false}) {
            try (TestDatabase db = TestDatabases.createEmpty()) {
                DataSource ds = plain(db);
                if (businessFirst) {
                    business(ds).migrate();
                    Schema.migrate(ds);
                } else {
                    Schema.migrate(ds);
                    business(ds).migrate();
                }
                // both validate afterwards: neither history holds the other's scripts
                business(ds).validate();
                Schema.flyway(ds, MailroomSchema.DEFAULT).load().validate();
                assertThat(Arrays.stream(business(ds).info().applied()).map(MigrationInfo::getScript))
                        .containsExactly("V1__init.sql", "V2__customers.sql");
                assertThat(Schema.status(ds, MailroomSchema.DEFAULT).upToDate()).isTrue();
                // and both run: the business's orders (its own shape) and Mailroom's tables side by side
                DSLContext dsl = db.dsl();
                dsl.execute("INSERT INTO public.orders (order_no, placed_by, amount_eur) VALUES ('A-1', 'ann', 12.50)");
                MailroomSchema.DEFAULT.dsl(ds).insertInto(OUTBOX_CONTROL, OUTBOX_CONTROL.SCOPE, OUTBOX_CONTROL.PAUSED)
                        .values("topic:email.welcome", true).execute();
                assertThat(dsl.fetchValue("SELECT count(*) FROM public.orders")).isEqualTo(1L);
                assertThat(dsl.fetchValue("SELECT count(*) FROM mailroom.outbox_control")).isEqualTo(1L);
                // a second run of either applies nothing
                assertThat(Schema.migrate(ds).migrationsExecuted).as("businessFirst=%s", businessFirst).isZero();
                assertThat(business(ds).migrate().migrationsExecuted).isZero();
            }
        }
    }

    /** The business's own Liquibase changelog, run as its application would (history in databasechangelog). */
    @SuppressWarnings("deprecation") // liquibase.Liquibase: the plain embedding API of Liquibase 4
    private static void liquibaseUpdate(DataSource ds) throws Exception {
        try (Connection c = ds.getConnection()) {
            liquibase.database.Database database = liquibase.database.DatabaseFactory.getInstance()
                    .findCorrectDatabaseImplementation(new liquibase.database.jvm.JdbcConnection(c));
            try (liquibase.Liquibase lb = new liquibase.Liquibase("business/liquibase/changelog.sql",
                    new liquibase.resource.ClassLoaderResourceAccessor(), database)) {
                lb.update("");
            }
        }
    }

    @Test
    void aBusinessOnLiquibase_andMailroomMigrateTheSameDatabaseInEitherOrder() throws Exception {
        for (boolean businessFirst : new boolean[]{true, false}) {
            try (TestDatabase db = TestDatabases.createEmpty()) {
                DataSource ds = plain(db);
                if (businessFirst) {
                    liquibaseUpdate(ds);
                    Schema.migrate(ds);
                } else {
                    Schema.migrate(ds);
                    liquibaseUpdate(ds);
                }
                DSLContext dsl = db.dsl();
                assertThat(dsl.fetch("SELECT id FROM public.databasechangelog ORDER BY orderexecuted").getValues(0, String.class))
                        .as("businessFirst=%s", businessFirst).containsExactly("1", "2");
                assertThat(tables(dsl, "public")).containsExactlyInAnyOrder("orders", "invoice", "databasechangelog",
                        "databasechangeloglock");
                Schema.flyway(ds, MailroomSchema.DEFAULT).load().validate();
                liquibaseUpdate(ds); // a second run of the business's changelog finds nothing to do
                assertThat(dsl.fetchValue("SELECT count(*) FROM public.databasechangelog")).isEqualTo(2L);
                assertThat(Schema.migrate(ds).migrationsExecuted).isZero();
            }
        }
    }

    @Test
    void aSchemaOfAnotherName_holdsEverything_andTheGeneratedClassesReachIt() throws Exception {
        try (TestDatabase db = TestDatabases.createEmpty()) {
            MailroomSchema acme = new MailroomSchema("acme_mail");
            Schema.migrate(db.dataSource(), acme);
            DSLContext dsl = db.dsl();
            assertThat(tables(dsl, "acme_mail")).contains("outbox_message", Schema.HISTORY_TABLE);
            assertThat(tables(dsl, "mailroom")).isEmpty();
            acme.dsl(db.dataSource()).insertInto(OUTBOX_CONTROL, OUTBOX_CONTROL.SCOPE, OUTBOX_CONTROL.PAUSED)
                    .values("all", true).execute();
            assertThat(dsl.fetchValue("SELECT count(*) FROM acme_mail.outbox_control")).isEqualTo(1L);
            // the caller's own context, joined: the same connection and settings, our schema
            assertThat(acme.join(db.dsl()).selectCount().from(OUTBOX_CONTROL).fetchOne(0, Integer.class)).isEqualTo(1);
            assertThat(MailroomSchema.of(acme.join(db.dsl()))).isEqualTo(acme);
            assertThat(acme.sql("SELECT 1 FROM {schema}.outbox_message")).isEqualTo("SELECT 1 FROM acme_mail.outbox_message");
        }
    }

    @Test
    void theDeliveryCountTrigger_firesFromASessionWhoseSearchPathLacksMailroom() throws Exception {
        try (TestDatabase db = TestDatabases.createEmpty()) {
            Schema.migrate(db.dataSource());
            try (Connection c = db.newConnection(); Statement st = c.createStatement()) {
                st.execute("SET search_path = public");
                st.execute("INSERT INTO mailroom.delivery_event (source, delivery_id, kind, provider_event, recipient)"
                        + " VALUES ('test', 'w-1', 'delivered', 'email.delivered', 'ann@example.com')");
            }
            assertThat(db.dsl().fetchValue("SELECT sum(events)::int FROM mailroom.delivery_event_count")).isEqualTo(1);
        }
    }

    @Test
    void badSchemaNamesAreRefusedNamingTheRule() {
        assertThatThrownBy(() -> new MailroomSchema("Mail-Room")).hasMessageContaining("lower-case identifier");
        assertThatThrownBy(() -> new MailroomSchema("pg_mail")).hasMessageContaining("reserved");
        assertThatThrownBy(() -> new MailroomSchema("x; DROP TABLE orders")).hasMessageContaining("'x; DROP TABLE orders'");
        assertThat(MailroomSchema.named(" ")).isEqualTo(MailroomSchema.DEFAULT);
    }

    @Test
    void aDatabaseBehindItsMigrations_isNamedWithWhatIsMissing_andNothingIsCreatedByLooking() throws Exception {
        try (TestDatabase db = TestDatabases.createEmpty()) {
            var none = Schema.status(db.dataSource(), MailroomSchema.DEFAULT);
            assertThat(none.upToDate()).isFalse();
            assertThat(none.current()).isNull();
            assertThat(none.describe()).contains("none").contains("V2 (outbox)").contains("MAILROOM_MIGRATE=true");
            assertThat(tables(db.dsl(), "mailroom")).as("looking creates nothing").isEmpty();

            Schema.flyway(db.dataSource(), MailroomSchema.DEFAULT).target(MigrationVersion.fromVersion("12")).load().migrate();
            var behind = Schema.status(db.dataSource(), MailroomSchema.DEFAULT);
            assertThat(behind.current()).hasToString("12");
            assertThat(behind.missing()).extracting(m -> m.version().toString()).containsExactlyElementsOf(
                    SchemaSql.SCRIPTS.subList(SchemaSql.SCRIPTS.indexOf("V13__waiting_for.sql"), SchemaSql.SCRIPTS.size())
                            .stream().map(n -> SchemaSql.version(n).toString()).toList());
            assertThat(behind.describe()).contains("at version 12").contains("V13 (waiting for)")
                    .contains("mailroom schema sql --from 13");
        }
    }

    private static List<String> tables(DSLContext dsl, String schema) {
        return dsl.fetchValues("SELECT c.relname::text FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace"
                + " WHERE n.nspname = ? AND c.relkind IN ('r', 'p') ORDER BY 1", schema).stream().map(String::valueOf).toList();
    }
}
