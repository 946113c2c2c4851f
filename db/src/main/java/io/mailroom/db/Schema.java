package io.mailroom.db;

import org.flywaydb.core.Flyway;
import org.flywaydb.core.api.MigrationInfo;
import org.flywaydb.core.api.MigrationVersion;
import org.flywaydb.core.api.configuration.FluentConfiguration;
import org.flywaydb.core.api.output.MigrateResult;

import javax.sql.DataSource;
import java.util.Arrays;
import java.util.List;

/**
 * Mailroom's migrations: Flyway scripts at {@value #MIGRATIONS}, applied into Mailroom's own schema
 * with a history table of its own ({@value #HISTORY_TABLE} in that schema). Neither is a default of
 * Flyway or Spring Boot, so a business's own Flyway (at {@code classpath:db/migration}, history in
 * {@code flyway_schema_history}) or Liquibase history in the same database never sees Mailroom's
 * scripts, nor Mailroom the business's.
 */
public final class Schema {

    /** Where Mailroom's Flyway scripts live on the class path. */
    public static final String MIGRATIONS = "classpath:io/mailroom/db/migration";
    /** Mailroom's Flyway history table, in Mailroom's schema. */
    public static final String HISTORY_TABLE = "mailroom_schema_history";

    private Schema() {
    }

    /**
     * The schema's version after {@code result}: Flyway reports a target version only when it applied
     * something, so an up-to-date schema is at its initial version ("empty" for none at all).
     */
    public static String versionAfter(MigrateResult result) {
        String version = result.targetSchemaVersion != null ? result.targetSchemaVersion : result.initialSchemaVersion;
        return version == null ? "empty" : version;
    }

    /** Applies every pending migration into the default schema ({@value MailroomSchema#DEFAULT_NAME}). */
    public static MigrateResult migrate(DataSource dataSource) {
        return migrate(dataSource, MailroomSchema.DEFAULT);
    }

    /**
     * Applies every pending migration into {@code schema}, creating it when missing. A database that
     * an earlier Mailroom migrated into {@code public} is first moved into {@code schema}
     * ({@link PublicSchemaMove}), its rows and history kept.
     */
    public static MigrateResult migrate(DataSource dataSource, MailroomSchema schema) {
        PublicSchemaMove.moveIfNeeded(dataSource, schema);
        return flyway(dataSource, schema).load().migrate();
    }

    /** Flyway set up for Mailroom's scripts, schema and history table, for callers that need more (info, validate). */
    public static FluentConfiguration flyway(DataSource dataSource, MailroomSchema schema) {
        return Flyway.configure()
                .dataSource(dataSource)
                .locations(MIGRATIONS)
                .schemas(schema.name())
                .defaultSchema(schema.name())
                .createSchemas(true)
                .table(HISTORY_TABLE)
                .baselineOnMigrate(false)
                .validateMigrationNaming(true);
    }

    /**
     * What a database holds against what this build needs, for a service that does not migrate
     * ({@code MAILROOM_MIGRATE=false}): read-only, it creates nothing.
     */
    public static Status status(DataSource dataSource, MailroomSchema schema) {
        Flyway flyway = flyway(dataSource, schema).createSchemas(false).load();
        MigrationInfo current = flyway.info().current();
        MigrationInfo[] pending = flyway.info().pending();
        return new Status(schema, current == null ? null : current.getVersion(),
                Arrays.stream(pending).map(Missing::of).toList());
    }

    /** One migration the database has not had. */
    public record Missing(MigrationVersion version, String description) {
        static Missing of(MigrationInfo info) {
            return new Missing(info.getVersion(), info.getDescription());
        }

        @Override
        public String toString() {
            return "V" + version + " (" + description + ")";
        }
    }

    /**
     * @param current the highest version applied, null for none (no schema or no history)
     * @param missing the migrations this build has that the database has not had, in order
     */
    public record Status(MailroomSchema schema, MigrationVersion current, List<Missing> missing) {
        public Status {
            missing = List.copyOf(missing);
        }

        public boolean upToDate() {
            return missing.isEmpty();
        }

        /** The version this build needs. */
        public MigrationVersion required() {
            return missing.isEmpty() ? current : missing.getLast().version();
        }

        /** One sentence for an operator: where the schema is, what is missing, how to apply it. */
        public String describe() {
            if (upToDate()) {
                return "schema " + schema + " is at version " + current;
            }
            return "schema " + schema + " is at version " + (current == null ? "none (no Mailroom schema or history yet)" : current)
                    + "; this Mailroom needs " + required() + ", missing " + missing.stream().map(Missing::toString).toList()
                    + ": migrate it (MAILROOM_MIGRATE=true on one service, or `mailroom schema migrate`),"
                    + " or apply `mailroom schema sql --from " + missing.getFirst().version() + "` with your own tool";
        }
    }
}
