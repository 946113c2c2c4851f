package io.mailroom.testing;

import org.jooq.DSLContext;
import org.junit.jupiter.api.extension.AfterAllCallback;
import org.junit.jupiter.api.extension.BeforeAllCallback;
import org.junit.jupiter.api.extension.ExtensionContext;

import javax.sql.DataSource;
import java.sql.Connection;
import java.sql.SQLException;

/**
 * Gives a test class its own freshly migrated PostgreSQL database, dropped after the class.
 *
 * <pre>{@code
 * @RegisterExtension
 * static final PostgresExtension pg = new PostgresExtension();
 * }</pre>
 *
 * See {@link PostgresServer} for where the server comes from.
 */
public final class PostgresExtension implements BeforeAllCallback, AfterAllCallback {

    private TestDatabase database;

    @Override
    public void beforeAll(ExtensionContext context) {
        database = TestDatabases.create();
    }

    @Override
    public void afterAll(ExtensionContext context) {
        if (database != null) {
            database.close();
            database = null;
        }
    }

    public TestDatabase database() {
        if (database == null) {
            throw new IllegalStateException("PostgresExtension must be a static @RegisterExtension field");
        }
        return database;
    }

    public DSLContext dsl() {
        return database().dsl();
    }

    public DataSource dataSource() {
        return database().dataSource();
    }

    public String jdbcUrl() {
        return database().jdbcUrl();
    }

    public Connection newConnection() throws SQLException {
        return database().newConnection();
    }
}
