package io.mailroom.bench;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import io.mailroom.outbox.JdbcUrls;
import io.mailroom.testing.TestDatabase;
import io.mailroom.testing.TestDatabases;

import java.sql.Connection;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.List;

/**
 * One freshly migrated database for one run (a template copy: tens of milliseconds), so that every
 * run, ours and the reference's, starts from an identically loaded table. Closing drops it.
 */
final class BenchDb implements AutoCloseable {

    private final TestDatabase db;
    private final List<HikariDataSource> pools = new ArrayList<>();

    private BenchDb(TestDatabase db) {
        this.db = db;
    }

    static BenchDb create() {
        return new BenchDb(TestDatabases.create());
    }

    String name() {
        return db.name();
    }

    /** JDBC URL with credentials, for child processes and pgbench. */
    String url() {
        return db.jdbcUrlWithCredentials();
    }

    /** A new unpooled session. */
    Connection connect() throws SQLException {
        return db.newConnection();
    }

    /**
     * A pool of exactly {@code size} sessions, all opened before this returns, so that the CPU
     * meter sees every backend in its first sample.
     */
    HikariDataSource pool(String name, int size) throws SQLException {
        HikariConfig config = new HikariConfig();
        config.setJdbcUrl(JdbcUrls.withKeepAlive(db.jdbcUrlWithCredentials()));
        config.setMaximumPoolSize(size);
        config.setMinimumIdle(size);
        config.setPoolName(name);
        HikariDataSource pool = new HikariDataSource(config);
        pools.add(pool);
        List<Connection> held = new ArrayList<>();
        try {
            for (int i = 0; i < size; i++) {
                held.add(pool.getConnection());
            }
        } finally {
            for (Connection c : held) {
                c.close();
            }
        }
        return pool;
    }

    @Override
    public void close() {
        pools.forEach(HikariDataSource::close);
        db.close();
    }
}
