package io.mailroom.testing;

import org.flywaydb.core.Flyway;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ThreadLocalRandom;

/**
 * Hands out freshly migrated databases. The Flyway scripts are applied once per server and script
 * content to a template database ({@code mailroom_tpl_<fingerprint>}); every test database is then
 * a {@code CREATE DATABASE ... TEMPLATE} copy, which takes tens of milliseconds instead of a full
 * migration. Several JVMs (parallel builds) may share one server: the template is built under an
 * advisory lock and named after the scripts, so different schemas never collide.
 */
public final class TestDatabases {

    private static final Logger log = LoggerFactory.getLogger(TestDatabases.class);
    private static final String PREFIX = "mt_";
    /** Test databases left behind by a killed JVM are dropped once they are this old. */
    private static final Duration STALE_AFTER = Duration.ofHours(3);
    private static final long TEMPLATE_LOCK = 0x6d61696c726f6f6dL; // "mailroom"

    private static String template;

    private TestDatabases() {
    }

    /** A new database migrated to the latest schema; close it to drop it. */
    public static TestDatabase create() {
        PostgresServer server = PostgresServer.get();
        return createFrom(server, template(server));
    }

    /**
     * A new database with nothing in it (from {@code template0}): for tests of the migrations
     * themselves, or of an application under test that migrates its own schema and Mailroom's (a
     * business beside Mailroom, a Spring Boot application with the starter); close it to drop it.
     */
    public static TestDatabase createEmpty() {
        return createFrom(PostgresServer.get(), "template0");
    }

    private static TestDatabase createFrom(PostgresServer server, String tpl) {
        String name = PREFIX + (System.currentTimeMillis() / 1000) + "_"
                + Long.toHexString(ThreadLocalRandom.current().nextLong() & 0xffffffffL);
        try (Connection admin = server.connect(server.adminDatabase());
             Statement st = admin.createStatement()) {
            st.execute("CREATE DATABASE " + quote(name) + " TEMPLATE " + quote(tpl)
                    + (tpl.equals("template0") ? " ENCODING 'UTF8'" : ""));
        } catch (SQLException e) {
            throw new IllegalStateException("Could not create test database " + name + " from " + tpl
                    + " on " + server.origin() + " (SQLSTATE " + e.getSQLState() + "): " + e.getMessage(), e);
        }
        return new TestDatabase(server, name);
    }

    /** Name of the migrated template database, building it if this JVM has not yet. */
    public static synchronized String template(PostgresServer server) {
        if (template != null) {
            return template;
        }
        String name = "mailroom_tpl_" + MigrationScripts.fingerprint();
        try (Connection admin = server.connect(server.adminDatabase())) {
            try (Statement st = admin.createStatement()) {
                st.execute("SELECT pg_advisory_lock(" + TEMPLATE_LOCK + ")");
            }
            try {
                dropStale(admin);
                if (!exists(admin, name)) {
                    build(server, admin, name);
                }
            } finally {
                try (Statement st = admin.createStatement()) {
                    st.execute("SELECT pg_advisory_unlock(" + TEMPLATE_LOCK + ")");
                }
            }
        } catch (SQLException e) {
            throw new IllegalStateException("Could not prepare the template database " + name + " on "
                    + server.origin() + " (SQLSTATE " + e.getSQLState() + "): " + e.getMessage(), e);
        }
        template = name;
        return name;
    }

    /** Migrates a work-in-progress copy and renames it only when complete, so a crash leaves no half template. */
    private static void build(PostgresServer server, Connection admin, String name) throws SQLException {
        String wip = name + "_wip";
        long started = System.nanoTime();
        try (Statement st = admin.createStatement()) {
            st.execute("DROP DATABASE IF EXISTS " + quote(wip) + " WITH (FORCE)");
            st.execute("CREATE DATABASE " + quote(wip) + " TEMPLATE template0 ENCODING 'UTF8'");
        }
        Flyway.configure()
                .dataSource(server.jdbcUrl(wip), server.user(), server.password())
                .locations("classpath:" + MigrationScripts.LOCATION)
                .schemas(MigrationScripts.SCHEMA)
                .defaultSchema(MigrationScripts.SCHEMA)
                .createSchemas(true)
                .table(MigrationScripts.HISTORY_TABLE)
                .load()
                .migrate();
        if (MigrationScripts.hasShop()) {
            Flyway.configure()
                    .dataSource(server.jdbcUrl(wip), server.user(), server.password())
                    .locations("classpath:" + MigrationScripts.SHOP_LOCATION)
                    .table(MigrationScripts.SHOP_HISTORY_TABLE)
                    .load()
                    .migrate();
        }
        try (Statement st = admin.createStatement()) {
            st.execute("SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = '" + wip + "'");
            st.execute("ALTER DATABASE " + quote(wip) + " RENAME TO " + quote(name));
        }
        log.info("Built template database {} in {} ms", name, (System.nanoTime() - started) / 1_000_000);
    }

    private static boolean exists(Connection admin, String name) throws SQLException {
        try (PreparedStatement ps = admin.prepareStatement("SELECT 1 FROM pg_database WHERE datname = ?")) {
            ps.setString(1, name);
            try (ResultSet rs = ps.executeQuery()) {
                return rs.next();
            }
        }
    }

    private static void dropStale(Connection admin) throws SQLException {
        long cutoff = System.currentTimeMillis() / 1000 - STALE_AFTER.toSeconds();
        List<String> stale = new ArrayList<>();
        try (Statement st = admin.createStatement();
             ResultSet rs = st.executeQuery("SELECT datname FROM pg_database WHERE datname LIKE 'mt\\_%'")) {
            while (rs.next()) {
                String db = rs.getString(1);
                String[] parts = db.split("_");
                if (parts.length == 3 && parts[1].chars().allMatch(Character::isDigit)
                        && Long.parseLong(parts[1]) < cutoff) {
                    stale.add(db);
                }
            }
        }
        for (String db : stale) {
            try (Statement st = admin.createStatement()) {
                st.execute("DROP DATABASE IF EXISTS " + quote(db) + " WITH (FORCE)");
                log.info("Dropped stale test database {}", db);
            }
        }
    }

    static String quote(String identifier) {
        return '"' + identifier.replace("\"", "\"\"") + '"';
    }
}
