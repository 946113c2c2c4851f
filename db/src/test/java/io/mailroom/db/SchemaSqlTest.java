package io.mailroom.db;

import io.mailroom.testing.PostgresExtension;
import io.mailroom.testing.TestDatabase;
import io.mailroom.testing.TestDatabases;
import org.flywaydb.core.api.MigrationInfo;
import org.flywaydb.core.api.MigrationVersion;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import java.sql.Connection;
import java.sql.Statement;
import java.util.Arrays;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** {@code mailroom schema sql}: the DDL a business applies with its own tool, recorded as Flyway would. */
class SchemaSqlTest {

    @RegisterExtension
    static final PostgresExtension pg = new PostgresExtension();

    @Test
    void theScriptListAndChecksumsAreFlywaysOwn() {
        MigrationInfo[] applied = Arrays.stream(Schema.flyway(pg.dataSource(), MailroomSchema.DEFAULT).load().info().applied())
                .filter(m -> m.getVersion() != null && m.getScript().endsWith(".sql")).toArray(MigrationInfo[]::new);
        assertThat(Arrays.stream(applied).map(MigrationInfo::getScript)).containsExactlyElementsOf(SchemaSql.SCRIPTS);
        for (MigrationInfo info : applied) {
            SchemaSql.Script ours = SchemaSql.scripts(info.getVersion(), info.getVersion()).getFirst();
            assertThat(ours.checksum()).as(info.getScript()).isEqualTo(info.getChecksum());
            assertThat(ours.description()).isEqualTo(info.getDescription());
        }
    }

    @Test
    void theWholeTextAppliedByHand_isASchemaThatFlywayAndTheStatusCheckAccept() throws Exception {
        try (TestDatabase db = TestDatabases.createEmpty()) {
            MailroomSchema schema = new MailroomSchema("shop_mail");
            apply(db, SchemaSql.render(schema, null, null));
            var status = Schema.status(db.dataSource(), schema);
            assertThat(status.upToDate()).as(status.describe()).isTrue();
            assertThat(status.current()).isEqualTo(SchemaSql.latest());
            Schema.flyway(db.dataSource(), schema).load().validate();
            assertThat(Schema.migrate(db.dataSource(), schema).migrationsExecuted).isZero();
        }
    }

    @Test
    void aRangeBringsABehindSchemaUpToDate() throws Exception {
        try (TestDatabase db = TestDatabases.createEmpty()) {
            Schema.flyway(db.dataSource(), MailroomSchema.DEFAULT).target(MigrationVersion.fromVersion("12")).load().migrate();
            String sql = SchemaSql.render(MailroomSchema.DEFAULT, MigrationVersion.fromVersion("13"), null);
            assertThat(sql).contains("-- V13__waiting_for.sql").doesNotContain("-- V12__");
            apply(db, sql);
            assertThat(Schema.status(db.dataSource(), MailroomSchema.DEFAULT).upToDate()).isTrue();
            Schema.flyway(db.dataSource(), MailroomSchema.DEFAULT).load().validate();
        }
    }

    @Test
    void anEmptyRangeIsRefusedNamingTheVersions() {
        assertThatThrownBy(() -> SchemaSql.render(MailroomSchema.DEFAULT, MigrationVersion.fromVersion("99"), null))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("99").hasMessageContaining("[2, 3, 4");
    }

    private static void apply(TestDatabase db, String sql) throws Exception {
        try (Connection c = db.newConnection(); Statement st = c.createStatement()) {
            c.setAutoCommit(false);
            st.execute(sql);
            c.commit();
        }
    }
}
