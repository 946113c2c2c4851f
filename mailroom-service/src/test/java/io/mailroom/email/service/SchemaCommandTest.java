package io.mailroom.email.service;

import io.mailroom.db.MailroomSchema;
import io.mailroom.db.Schema;
import io.mailroom.testing.PostgresExtension;
import io.mailroom.testing.TestDatabase;
import io.mailroom.testing.TestDatabases;
import org.flywaydb.core.api.MigrationVersion;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * {@code mailroom schema sql|status|migrate} as a business's DBA uses them: the printed SQL applied
 * with psql in one transaction gives a schema that {@code status} (what MAILROOM_MIGRATE=false checks)
 * accepts; a database behind is named with what it misses.
 */
class SchemaCommandTest {

    @RegisterExtension
    static final PostgresExtension pg = new PostgresExtension();

    private record Run(int code, String out, String err) {
    }

    private static Run mailroom(String... args) {
        StringWriter out = new StringWriter();
        StringWriter err = new StringWriter();
        var cli = MailroomCli.commandLine();
        cli.setOut(new PrintWriter(out, true));
        cli.setErr(new PrintWriter(err, true));
        return new Run(cli.execute(args), out.toString(), err.toString());
    }

    @Test
    void theSqlAppliedWithPsql_isWhatStatusAccepts_inAnySchemaName() throws Exception {
        try (TestDatabase db = TestDatabases.createEmpty()) {
            Run sql = mailroom("schema", "sql", "--schema", "billing_mail");
            assertThat(sql.code()).isZero();
            assertThat(sql.out()).contains("CREATE SCHEMA IF NOT EXISTS billing_mail").contains("-- V14__own_schema.sql");

            Run before = mailroom("schema", "status", "--schema", "billing_mail", "--db-url", db.jdbcUrlWithCredentials());
            assertThat(before.code()).isEqualTo(SchemaCommand.EX_BEHIND);
            assertThat(before.err()).contains("none").contains("V2 (outbox)");

            psql(db, sql.out());

            Run after = mailroom("schema", "status", "--schema", "billing_mail", "--db-url", db.jdbcUrlWithCredentials());
            assertThat(after.code()).as(after.err()).isZero();
            assertThat(after.out()).contains("billing_mail is at version " + io.mailroom.db.SchemaSql.latest());
            Run migrate = mailroom("schema", "migrate", "--schema", "billing_mail", "--db-url", db.jdbcUrlWithCredentials());
            assertThat(migrate.out()).contains("(0 migrations applied now)");
        }
    }

    @Test
    void aDatabaseBehind_isNamedWithTheMissingVersions_andARangeBringsItUp() throws Exception {
        try (TestDatabase db = TestDatabases.createEmpty()) {
            Schema.flyway(db.dataSource(), MailroomSchema.DEFAULT).target(MigrationVersion.fromVersion("12")).load().migrate();
            Run behind = mailroom("schema", "status", "--db-url", db.jdbcUrlWithCredentials());
            assertThat(behind.code()).isEqualTo(SchemaCommand.EX_BEHIND);
            assertThat(behind.err()).contains("at version 12").contains("V13 (waiting for)").contains("V14 (own schema)")
                    .contains("mailroom schema sql --from 13");
            Run range = mailroom("schema", "sql", "--from", "13");
            assertThat(range.out()).contains("-- V13__waiting_for.sql").doesNotContain("-- V12__");
            psql(db, range.out());
            assertThat(mailroom("schema", "status", "--db-url", db.jdbcUrlWithCredentials()).code()).isZero();
        }
    }

    @Test
    void badInputIsRefusedNamingTheOption() {
        Run badVersion = mailroom("schema", "sql", "--from", "thirteen");
        assertThat(badVersion.code()).isEqualTo(2);
        assertThat(badVersion.err()).contains("--from must be a version");
        Run badName = mailroom("schema", "sql", "--schema", "Bad-Name");
        assertThat(badName.code()).isEqualTo(2);
        assertThat(badName.err()).contains("--schema").contains("lower-case identifier");
        Run nothing = mailroom("schema", "sql", "--from", "99");
        assertThat(nothing.err()).contains("no Mailroom migration between 99");
    }

    /** Applies {@code sql} as a DBA would: psql, one transaction, stop at the first error. */
    private static void psql(TestDatabase db, String sql) throws Exception {
        Path file = Files.createTempFile("mailroom-schema", ".sql");
        Files.writeString(file, sql, StandardCharsets.UTF_8);
        ProcessBuilder pb;
        try {
            pb = new ProcessBuilder("psql", db.jdbcUrlWithCredentials().substring("jdbc:".length()), "-X", "-q",
                    "-v", "ON_ERROR_STOP=1", "-1", "-f", file.toString()).redirectErrorStream(true);
            Process p = pb.start();
            String output = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
            assertThat(p.waitFor(60, TimeUnit.SECONDS)).isTrue();
            assertThat(p.exitValue()).as(output).isZero();
        } catch (java.io.IOException e) {
            Assumptions.abort("psql is not installed: " + e.getMessage());
        }
    }
}
