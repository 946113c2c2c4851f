package io.mailroom.email.service;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import io.mailroom.outbox.DbTimeouts;

/**
 * The service's HikariCP pools, every one with the network timeouts of {@link DbTimeouts} (pgjdbc's
 * in the URL, the pool's on the pool), TCP keepalive on, and named sessions
 * ({@code ApplicationName}) so that the connection budget and an operator can tell them apart.
 */
final class ServicePools {

    private ServicePools() {
    }

    /**
     * A pool of up to {@code size} sessions over {@code MAILROOM_DB_URL}, empty until {@link #fill}:
     * it never fails in the constructor, {@link DatabaseStartup} waits for the database, logging
     * each attempt, and the pool connects in the background as soon as the database answers.
     */
    static HikariDataSource pool(ServiceConfig config, int size, String name, String applicationName) {
        HikariConfig hc = base(config, config.jdbcUrl(), name, applicationName);
        if (config.db().pooled()) {
            // unnamed statements only: a named one lives on one server session, the next transaction may get another
            hc.addDataSourceProperty("prepareThreshold", "0");
        }
        hc.setMaximumPoolSize(size);
        return bound(config, new HikariDataSource(hc));
    }

    /** One session straight to the server (no pooler in between), for LISTEN. */
    static HikariDataSource direct(ServiceConfig config, String url, String name, String applicationName) {
        HikariConfig hc = base(config, url, name, applicationName);
        hc.setMaximumPoolSize(1);
        return bound(config, new HikariDataSource(hc));
    }

    /** Every pool reaches Mailroom's tables in the configured schema (MAILROOM_SCHEMA). */
    private static HikariDataSource bound(ServiceConfig config, HikariDataSource pool) {
        config.db().schema().bind(pool);
        return pool;
    }

    /** Opens the pool's sessions now (pools start empty, so that the budget is checked before they take slots). */
    static void fill(HikariDataSource pool) {
        pool.getHikariConfigMXBean().setMinimumIdle(pool.getMaximumPoolSize());
    }

    /** The pool's share of {@code timeouts}: waiting for a session, validating one, checking idle ones, replacing old ones. */
    static void applyTimeouts(HikariConfig hc, DbTimeouts timeouts) {
        hc.setConnectionTimeout(timeouts.acquire().toMillis());
        hc.setValidationTimeout(timeouts.validation().toMillis());
        hc.setKeepaliveTime(timeouts.keepalive().toMillis());
        hc.setMaxLifetime(timeouts.maxLifetime().toMillis());
    }

    private static HikariConfig base(ServiceConfig config, String url, String name, String applicationName) {
        DbTimeouts timeouts = config.db().timeouts();
        HikariConfig hc = new HikariConfig();
        hc.setJdbcUrl(timeouts.jdbcUrl(url));
        hc.addDataSourceProperty("ApplicationName", applicationName);
        hc.setMinimumIdle(0);
        if (config.dbUser() != null) {
            hc.setUsername(config.dbUser());
        }
        if (config.dbPassword() != null) {
            hc.setPassword(config.dbPassword());
        }
        hc.setPoolName(name);
        applyTimeouts(hc, timeouts);
        hc.setInitializationFailTimeout(-1);
        return hc;
    }
}
