package io.mailroom.email.service;

import io.mailroom.db.MailroomSchema;
import io.mailroom.db.Schema;
import io.mailroom.db.SchemaSql;
import org.flywaydb.core.api.MigrationVersion;
import org.postgresql.ds.PGSimpleDataSource;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

import javax.sql.DataSource;
import java.io.PrintWriter;
import java.util.Map;
import java.util.concurrent.Callable;

/**
 * {@code mailroom schema}: Mailroom's own schema for the people who run a business's migrations.
 * {@code sql} prints the DDL of a version range (with the history rows that Flyway would write), for a
 * business that applies every migration with its own tool; {@code status} says whether a database has
 * what this build needs (exit 3 when it does not, naming the missing versions); {@code migrate}
 * applies what is missing.
 */
@Command(name = "schema", mixinStandardHelpOptions = true, description = "Mailroom's schema: print its DDL, check or migrate a database.",
        subcommands = {SchemaCommand.Sql.class, SchemaCommand.Status.class, SchemaCommand.Migrate.class})
final class SchemaCommand implements Callable<Integer> {

    /** Exit status of {@code status} when the database lacks migrations this build needs. */
    static final int EX_BEHIND = 3;

    @CommandLine.Spec
    CommandLine.Model.CommandSpec spec;

    @Override
    public Integer call() {
        spec.commandLine().usage(spec.commandLine().getOut());
        return 0;
    }

    /** Options every subcommand shares: which schema, and where the database is. */
    static final class Target {
        @Option(names = "--schema", paramLabel = "NAME", description = "Mailroom's schema (default: $MAILROOM_SCHEMA, else mailroom)")
        String schema;

        @Option(names = "--db-url", description = "JDBC URL of the database (default: $MAILROOM_DB_URL; user and password from $MAILROOM_DB_USER, $MAILROOM_DB_PASSWORD)")
        String dbUrl;

        Map<String, String> env = System.getenv();

        MailroomSchema schema() {
            String name = schema != null ? schema : env.get("MAILROOM_SCHEMA");
            try {
                return MailroomSchema.named(name);
            } catch (IllegalArgumentException e) {
                throw new IllegalArgumentException((schema != null ? "--schema: " : "MAILROOM_SCHEMA: ") + e.getMessage(), e);
            }
        }

        DataSource dataSource() {
            String url = dbUrl != null ? dbUrl : env.get("MAILROOM_DB_URL");
            if (url == null || !url.startsWith("jdbc:postgresql:")) {
                throw new IllegalArgumentException("no database given: pass --db-url jdbc:postgresql://host:5432/db or set MAILROOM_DB_URL");
            }
            PGSimpleDataSource ds = new PGSimpleDataSource();
            ds.setURL(DbTopology.timeouts(env).jdbcUrl(url));
            if (env.get("MAILROOM_DB_USER") != null) {
                ds.setUser(env.get("MAILROOM_DB_USER"));
            }
            if (env.get("MAILROOM_DB_PASSWORD") != null) {
                ds.setPassword(env.get("MAILROOM_DB_PASSWORD"));
            }
            ds.setApplicationName("mailroom-schema");
            return ds;
        }
    }

    @Command(name = "sql", mixinStandardHelpOptions = true,
            description = "Print the SQL of Mailroom's migrations FROM..TO (all by default), history rows included; needs no database."
                    + " Apply it in one transaction: psql -1 -f FILE")
    static final class Sql implements Callable<Integer> {
        @CommandLine.Mixin
        Target target = new Target();

        @Option(names = "--from", paramLabel = "VERSION", description = "first version to include (default: the first)")
        String from;

        @Option(names = "--to", paramLabel = "VERSION", description = "last version to include (default: the latest)")
        String to;

        @CommandLine.Spec
        CommandLine.Model.CommandSpec spec;

        @Override
        public Integer call() {
            PrintWriter out = spec.commandLine().getOut();
            out.print(SchemaSql.render(target.schema(), version("--from", from), version("--to", to)));
            out.flush();
            return 0;
        }

        private static MigrationVersion version(String option, String value) {
            if (value == null) {
                return null;
            }
            if (!value.matches("\\d+(\\.\\d+)*")) {
                throw new IllegalArgumentException(option + " must be a version such as 13, got '" + value + "'");
            }
            return MigrationVersion.fromVersion(value);
        }
    }

    @Command(name = "status", mixinStandardHelpOptions = true,
            description = "Say whether the database's Mailroom schema is what this build needs (exit 3, naming what is missing, when not).")
    static final class Status implements Callable<Integer> {
        @CommandLine.Mixin
        Target target = new Target();

        @CommandLine.Spec
        CommandLine.Model.CommandSpec spec;

        @Override
        public Integer call() {
            Schema.Status status = Schema.status(target.dataSource(), target.schema());
            (status.upToDate() ? spec.commandLine().getOut() : spec.commandLine().getErr()).println(status.describe());
            return status.upToDate() ? 0 : EX_BEHIND;
        }
    }

    @Command(name = "migrate", mixinStandardHelpOptions = true,
            description = "Apply Mailroom's missing migrations to its schema (created if missing).")
    static final class Migrate implements Callable<Integer> {
        @CommandLine.Mixin
        Target target = new Target();

        @CommandLine.Spec
        CommandLine.Model.CommandSpec spec;

        @Override
        public Integer call() {
            MailroomSchema schema = target.schema();
            var result = Schema.migrate(target.dataSource(), schema);
            spec.commandLine().getOut().println("schema " + schema + " at version " + Schema.versionAfter(result) + " ("
                    + result.migrationsExecuted + " migrations applied now)");
            return 0;
        }
    }
}
