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

    /** Applies every pending migration to the database behind {@code dataSource}. */
    public static MigrateResult migrate(DataSource dataSource) {
        return Flyway.configure()
                .dataSource(dataSource)
                .locations(MIGRATIONS)
                .load()
                .migrate();
    }
}
