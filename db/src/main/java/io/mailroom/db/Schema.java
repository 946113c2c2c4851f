package io.mailroom.db;

import org.flywaydb.core.Flyway;
import org.flywaydb.core.api.output.MigrateResult;

import javax.sql.DataSource;

/**
 * Entry point to the schema that this module owns. The Flyway scripts are under
 * {@code classpath:db/migration}; the jOOQ classes generated from them are in
 * {@code io.mailroom.db.jooq}.
 */
public final class Schema {

    /** Where the Flyway scripts live on the class path. */
    public static final String MIGRATIONS = "classpath:db/migration";

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

    /** Applies every pending migration to the database behind {@code dataSource}. */
    public static MigrateResult migrate(DataSource dataSource) {
        return Flyway.configure()
                .dataSource(dataSource)
                .locations(MIGRATIONS)
                .load()
                .migrate();
    }
}
