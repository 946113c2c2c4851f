package io.mailroom.testing;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import org.jooq.DSLContext;
import org.jooq.SQLDialect;
import org.jooq.impl.DSL;

import javax.sql.DataSource;
import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;

/** One migrated database that belongs to one test class; {@link #close()} drops it. */
public final class TestDatabase implements AutoCloseable {

    /**
     * The search path of {@link #dataSource()}, {@link #dsl()} and {@link #newConnection()}: public
     * first (the shop's tables, and where a test's own helper tables are created, as a child process
     * without this path finds them), then Mailroom's schema, so that a test's own SQL may name tables
     * unqualified. Mailroom's code
     * never relies on it (it qualifies every table); the URLs handed to child processes carry no
     * search path, so everything they run proves that.
     */
    public static final String SEARCH_PATH = "public," + MigrationScripts.SCHEMA;

    private final PostgresServer server;
    private final String name;
    private HikariDataSource pool;
    private DSLContext dsl;

    TestDatabase(PostgresServer server, String name) {
        this.server = server;
        this.name = name;
    }

    public String name() {
        return name;
    }

    /** JDBC URL without credentials; pair it with {@link #user()} and {@link #password()}. */
    public String jdbcUrl() {
        return server.jdbcUrl(name);
    }

    /** JDBC URL that carries the credentials too, for a child process or a tool. */
    public String jdbcUrlWithCredentials() {
        return server.jdbcUrlWithCredentials(name);
    }

    public String user() {
        return server.user();
    }

    public String password() {
        return server.password();
    }

    /** A small pool (10 connections) over this database, created on first use. */
    public synchronized DataSource dataSource() {
        if (pool == null) {
            HikariConfig config = new HikariConfig();
            config.setJdbcUrl(jdbcUrl());
            if (user() != null) {
                config.setUsername(user());
            }
            if (password() != null) {
                config.setPassword(password());
            }
            config.setMaximumPoolSize(10);
            config.addDataSourceProperty("currentSchema", SEARCH_PATH);
            config.setPoolName("test-" + name);
            pool = new HikariDataSource(config);
        }
        return pool;
    }

    /** A jOOQ context over {@link #dataSource()}. */
    public synchronized DSLContext dsl() {
        if (dsl == null) {
            dsl = DSL.using(dataSource(), SQLDialect.POSTGRES);
        }
        return dsl;
    }

    /** A new connection outside the pool, for tests that hold locks across sessions; the caller closes it. */
    public Connection newConnection() throws SQLException {
        Connection c = server.connect(name);
        try (Statement st = c.createStatement()) {
            st.execute("SET search_path = " + SEARCH_PATH);
        }
        return c;
    }

    @Override
    public synchronized void close() {
        if (pool != null) {
            pool.close();
            pool = null;
            dsl = null;
        }
        try (Connection admin = server.connect(server.adminDatabase());
             Statement st = admin.createStatement()) {
            st.execute("DROP DATABASE IF EXISTS " + TestDatabases.quote(name) + " WITH (FORCE)");
        } catch (SQLException e) {
            throw new IllegalStateException("Could not drop test database " + name + ": " + e.getMessage(), e);
        }
    }
}
