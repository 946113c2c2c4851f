package io.mailroom.orders;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import io.mailroom.db.Schema;
import io.mailroom.outbox.runtime.ConnectionBudget;
import io.mailroom.outbox.DatabaseWait;
import io.mailroom.outbox.DbTimeouts;
import io.mailroom.db.sql.SqlStates;
import org.jooq.CloseableDSLContext;
import org.jooq.exception.DataAccessException;
import org.jooq.impl.DSL;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import javax.sql.DataSource;
import java.security.SecureRandom;
import java.util.HexFormat;
import java.util.Properties;

/**
 * The runnable order service: reads {@link OrderServiceConfig} from the environment, optionally
 * creates the database ({@code MAILROOM_DB_CREATE=true}; off by default, because creating
 * databases is usually an operator's decision), builds a HikariCP pool, applies the Flyway
 * migrations ({@code MAILROOM_MIGRATE}, on by default), starts the {@link OrderServer} and stops
 * everything cleanly on SIGTERM or Ctrl-C.
 *
 * <pre>
 * MAILROOM_DB_CREATE=true java -cp ... io.mailroom.orders.OrderServiceApp
 * curl -X POST localhost:8081/orders -H 'Content-Type: application/json' -d @order.json
 * </pre>
 *
 * Other modules (the one-command demo) embed it with {@link #start(OrderServiceConfig)} and
 * {@link #close()}; a caller that already has a pool uses {@link OrderServer} directly.
 */
public final class OrderServiceApp implements AutoCloseable {

    private static final Logger log = LoggerFactory.getLogger(OrderServiceApp.class);
    /** SQLSTATE duplicate_database: another instance created it between our check and our CREATE. */
    private static final String DUPLICATE_DATABASE = "42P04";

    private final HikariDataSource pool;
    private final OrderServer server;
    private boolean closed;

    private OrderServiceApp(HikariDataSource pool, OrderServer server) {
        this.pool = pool;
        this.server = server;
    }

    public static void main(String[] args) {
        io.mailroom.db.PostgresVersions.replaceJooqVersionCheck();
        OrderServiceConfig config;
        OrderPooler pooler;
        EmbeddedDatabase embedded = null;
        try {
            config = OrderServiceConfig.fromEnvironment(System.getenv());
            pooler = OrderPooler.fromEnvironment(System.getenv(), config.migrate());
            String url = System.getenv(OrderServiceConfig.ENV_DB_URL);
            if (url == null || url.isBlank()) {
                embedded = EmbeddedDatabase.start(System.getenv());
                config = config.withJdbcUrl(embedded.jdbcUrl());
            }
        } catch (IllegalArgumentException e) {
            log.error("Invalid configuration: {}", e.getMessage());
            System.exit(2);
            return;
        }
        OrderServiceApp app;
        try {
            app = start(config, pooler);
        } catch (DatabaseWait.Failed e) {
            log.error("Order service failed to start: {}", e.getMessage()); // the message says it all: no stack trace
            if (embedded != null) {
                embedded.close();
            }
            System.exit(1);
            return;
        } catch (RuntimeException e) {
            log.error("Order service failed to start", e);
            if (embedded != null) {
                embedded.close();
            }
            System.exit(1);
            return;
        }
        EmbeddedDatabase database = embedded;
        Runtime.getRuntime().addShutdownHook(new Thread(() -> {
            app.close();
            if (database != null) {
                database.close();
            }
        }, "orders-shutdown"));
        log.info("Order service ready: POST http://localhost:{}/orders (Ctrl-C stops it)", app.server().port());
        // Jetty's non-daemon threads keep the JVM running until the hook has stopped them
    }

    /**
     * Waits for the database to answer (as long as {@code MAILROOM_DB_STARTUP_TIMEOUT} allows, one
     * log line per attempt naming the URL with the password masked; {@link DatabaseWait.Failed} past
     * it or on a refusal waiting will not change), creates the database if asked to, opens the pool,
     * migrates if asked to, and starts the HTTP server. On failure, whatever was opened is closed
     * again before the exception propagates.
     */
    public static OrderServiceApp start(OrderServiceConfig config) {
        return start(config, OrderPooler.DIRECT);
    }

    /** As {@link #start(OrderServiceConfig)}, through a transaction-mode pooler when {@code pooler} says so. */
    public static OrderServiceApp start(OrderServiceConfig config, OrderPooler pooler) {
        log.info("Starting order service with {} ({})", config, pooler);
        long started = System.nanoTime();
        // a database that is not there yet (a pooler or server restarting) is waited for, as the dispatcher does
        DatabaseWait wait = new DatabaseWait(log, OrderServiceConfig.maskUrl(config.jdbcUrl()), config.dbStartupTimeout(),
                OrderServiceConfig.ENV_DB_STARTUP_TIMEOUT, "the order service", DatabaseWait.FIRST_PAUSE, DatabaseWait.MAX_PAUSE);
        wait.announce();
        if (config.createDatabase()) {
            awaitInterruptibly(wait, direct(config.jdbcUrlFor("postgres"), config), started); // the server, before its database exists
            createDatabaseIfMissing(config);
        }
        String applicationName = "mailroom-orders-" + HexFormat.of().toHexDigits(new SecureRandom().nextInt());
        HikariDataSource pool = newPool(config, applicationName, pooler.pooled());
        try {
            awaitInterruptibly(wait, pool, started);
            if (pooler.pooled()) {
                // PostgreSQL sees the pooler's server sessions, not this pool: the budget is the pooler's
                log.info("Behind a transaction-mode pooler: {} client sessions to it; the server sessions are its"
                        + " default_pool_size (docs/OPERATIONS.md, \"Through PgBouncer\")", config.dbPoolSize());
            } else {
                requireConnectionSlots(config, pool, applicationName);
            }
            // opened only now, so that a service that does not fit takes no slot from the other clients
            pool.getHikariConfigMXBean().setMinimumIdle(config.dbPoolSize());
            if (config.migrate()) {
                // an index build may take minutes: the migration's reads get a bound of their own
                var migrations = DbTimeouts.withSocketTimeout(pooler.migrateUrl() == null ? pool
                        : direct(pooler.migrateUrl(), config), config.dbTimeouts().migration());
                // Mailroom's schema first: an upgrade from a Mailroom that kept the shop's tables in its
                // own history hands them over there, and the shop's migration then adopts them
                var mailroom = Schema.migrate(migrations);
                var shop = ShopSchema.migrate(migrations);
                // Flyway reports no target version when there was nothing to apply
                log.info("Mailroom's schema at version {} ({} migrations applied now); the shop's at version {} ({})",
                        Schema.versionAfter(mailroom), mailroom.migrationsExecuted, Schema.versionAfter(shop),
                        shop.migrationsExecuted);
            }
            return new OrderServiceApp(pool, OrderServer.start(pool, config.http()));
        } catch (RuntimeException e) {
            pool.close();
            throw e;
        }
    }

    public OrderServer server() {
        return server;
    }

    /** The pool the service runs on; closed by {@link #close()}. */
    public DataSource dataSource() {
        return pool;
    }

    /** Stops the HTTP server, then closes the pool; safe to call more than once. */
    @Override
    public synchronized void close() {
        if (closed) {
            return;
        }
        closed = true;
        try {
            server.stop();
        } finally {
            pool.close();
        }
    }

    /** Fails, naming the numbers, when the server has fewer free connection slots than the pool asks for. */
    private static void requireConnectionSlots(OrderServiceConfig config, DataSource pool, String applicationName) {
        ConnectionBudget.Slots slots = ConnectionBudget.require(pool, applicationName, config.dbPoolSize(),
                "the order service (" + OrderServiceConfig.ENV_DB_POOL_SIZE + "=" + config.dbPoolSize() + ")",
                "raise max_connections, or lower " + OrderServiceConfig.ENV_DB_POOL_SIZE + " here or the pools of the other"
                        + " clients (docs/OPERATIONS.md, \"Connection budget\")");
        log.info("Connection budget: {} sessions for the order service; PostgreSQL has {}", config.dbPoolSize(), slots);
    }

    private static void awaitInterruptibly(DatabaseWait wait, DataSource db, long startedNanos) {
        try {
            wait.untilAnswers(db, startedNanos);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted while waiting for the database", e);
        }
    }

    private static DataSource direct(String url, OrderServiceConfig config) {
        org.postgresql.ds.PGSimpleDataSource ds = new org.postgresql.ds.PGSimpleDataSource();
        ds.setURL(config.dbTimeouts().jdbcUrl(url));
        if (config.dbUser() != null) {
            ds.setUser(config.dbUser());
        }
        if (config.dbPassword() != null) {
            ds.setPassword(config.dbPassword());
        }
        return ds;
    }

    private static HikariDataSource newPool(OrderServiceConfig config, String applicationName, boolean pooled) {
        HikariConfig hikari = new HikariConfig();
        if (pooled) {
            // unnamed statements only: a named one lives on one server session, the next transaction may get another
            hikari.addDataSourceProperty("prepareThreshold", "0");
        }
        hikari.setPoolName("orders");
        // its sessions by name in pg_stat_activity, and opened only once the budget is checked
        hikari.addDataSourceProperty("ApplicationName", applicationName);
        hikari.setMinimumIdle(0);
        // network timeouts and keepalive (unless the URL sets its own): a half-open session fails instead of hanging
        DbTimeouts timeouts = config.dbTimeouts();
        hikari.setJdbcUrl(timeouts.jdbcUrl(config.jdbcUrl()));
        if (config.dbUser() != null) {
            hikari.setUsername(config.dbUser());
        }
        if (config.dbPassword() != null) {
            hikari.setPassword(config.dbPassword());
        }
        hikari.setMaximumPoolSize(config.dbPoolSize());
        // a request should fail fast with 503 rather than hang while the database is away
        hikari.setConnectionTimeout(timeouts.acquire().toMillis());
        hikari.setValidationTimeout(timeouts.validation().toMillis());
        hikari.setKeepaliveTime(timeouts.keepalive().toMillis());
        hikari.setMaxLifetime(timeouts.maxLifetime().toMillis());
        // never fail in the constructor: start() waits for the database, logging each attempt
        hikari.setInitializationFailTimeout(-1);
        return new HikariDataSource(hikari);
    }

    /**
     * Creates the database named in the URL unless it exists, connecting to the server's
     * {@code postgres} database with the same parameters and credentials.
     */
    static void createDatabaseIfMissing(OrderServiceConfig config) {
        String name = config.databaseName();
        Properties props = new Properties();
        if (config.dbUser() != null) {
            props.setProperty("user", config.dbUser());
        }
        if (config.dbPassword() != null) {
            props.setProperty("password", config.dbPassword());
        }
        try (CloseableDSLContext dsl = DSL.using(config.dbTimeouts().jdbcUrl(config.jdbcUrlFor("postgres")), props)) {
            boolean exists = dsl.fetchExists(DSL.selectOne()
                    .from(DSL.table(DSL.name("pg_catalog", "pg_database")))
                    .where(DSL.field(DSL.name("datname"), String.class).eq(name)));
            if (exists) {
                log.info("Database {} exists", name);
                return;
            }
            dsl.createDatabase(DSL.name(name)).execute();
            log.info("Created database {}", name);
        } catch (DataAccessException e) {
            if (SqlStates.is(e, DUPLICATE_DATABASE)) {
                log.info("Database {} was created concurrently", name);
                return;
            }
            throw e;
        }
    }
}
