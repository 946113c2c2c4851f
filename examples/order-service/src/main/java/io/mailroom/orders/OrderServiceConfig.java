package io.mailroom.orders;

import io.mailroom.outbox.DbTimeouts;
import io.mailroom.outbox.Durations;
import io.mailroom.outbox.InvalidSettingException;

import java.time.Duration;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Everything the runnable order service needs, immutable and checked on construction: a bad value
 * is rejected with a message that names the setting and its environment variable, never clamped.
 * {@link #toString()} masks the password (also a {@code password=} parameter in the JDBC URL), so
 * the configuration can be logged.
 *
 * <p>Environment variables read by {@link #fromEnvironment(Map)} (unset or empty means the default):
 * <table>
 *   <tr><th>variable</th><th>default</th><th>meaning</th></tr>
 *   <tr><td>{@code MAILROOM_DB_URL}</td><td>{@value #DEFAULT_JDBC_URL}</td><td>PostgreSQL JDBC URL, with a database name</td></tr>
 *   <tr><td>{@code MAILROOM_DB_USER}</td><td>(from the URL)</td><td>database user; a {@code user=} in the URL wins (pgjdbc's rule)</td></tr>
 *   <tr><td>{@code MAILROOM_DB_PASSWORD}</td><td>(from the URL)</td><td>database password, never logged; a {@code password=} in the URL wins</td></tr>
 *   <tr><td>{@code MAILROOM_DB_CREATE}</td><td>false</td><td>create the URL's database if it does not exist</td></tr>
 *   <tr><td>{@code MAILROOM_MIGRATE}</td><td>true</td><td>apply the Flyway migrations at start-up</td></tr>
 *   <tr><td>{@code MAILROOM_DB_POOL_SIZE}</td><td>{@value #DEFAULT_POOL_SIZE}</td><td>HikariCP maximum pool size</td></tr>
 *   <tr><td>{@code MAILROOM_ORDERS_HOST}</td><td>{@value HttpSettings#DEFAULT_HOST}</td><td>HTTP bind address</td></tr>
 *   <tr><td>{@code MAILROOM_ORDERS_PORT}</td><td>{@value HttpSettings#DEFAULT_PORT}</td><td>HTTP port, 0 for any free one</td></tr>
 *   <tr><td>{@code MAILROOM_ORDERS_MAX_BODY_BYTES}</td><td>{@value HttpSettings#DEFAULT_MAX_BODY_BYTES}</td><td>largest request body</td></tr>
 *   <tr><td>{@code MAILROOM_ORDERS_HTTP_THREADS}</td><td>{@value HttpSettings#DEFAULT_MAX_THREADS}</td><td>HTTP worker threads</td></tr>
 *   <tr><td>{@code MAILROOM_DB_STARTUP_TIMEOUT}</td><td>0 (as long as it takes)</td><td>how long start-up waits for the database to answer</td></tr>
 *   <tr><td>{@code MAILROOM_DB_CONNECT_TIMEOUT}, {@code _LOGIN_TIMEOUT}, {@code _SOCKET_TIMEOUT},
 *   {@code _ACQUIRE_TIMEOUT}, {@code _KEEPALIVE}, {@code _MAX_LIFETIME}, {@code _MIGRATION_SOCKET_TIMEOUT}</td>
 *   <td>see {@link DbTimeouts}</td><td>network timeouts of the pool, as the dispatcher reads them</td></tr>
 * </table>
 *
 * @param jdbcUrl        {@code jdbc:postgresql://host[:port]/database[?params]}
 * @param dbUser         user, or null to use the URL's
 * @param dbPassword     password, or null to use the URL's (or none)
 * @param createDatabase whether to create the URL's database when it is missing
 * @param migrate        whether to apply the Flyway migrations at start-up
 * @param dbPoolSize     maximum pool size
 * @param http           how the HTTP server listens
 * @param dbTimeouts     how long the pool waits on the network ({@link DbTimeouts})
 * @param dbStartupTimeout how long start-up waits for the database to answer; null: as long as it takes
 */
public record OrderServiceConfig(String jdbcUrl, String dbUser, String dbPassword, boolean createDatabase,
                                 boolean migrate, int dbPoolSize, HttpSettings http, DbTimeouts dbTimeouts,
                                 Duration dbStartupTimeout) {

    public static final String DEFAULT_JDBC_URL = "jdbc:postgresql://127.0.0.1:5432/mailroom?user=postgres";
    public static final boolean DEFAULT_CREATE_DATABASE = false;
    public static final boolean DEFAULT_MIGRATE = true;
    public static final int DEFAULT_POOL_SIZE = 10;
    public static final int MAX_POOL_SIZE = 200;

    public static final String ENV_DB_URL = "MAILROOM_DB_URL";
    public static final String ENV_DB_USER = "MAILROOM_DB_USER";
    public static final String ENV_DB_PASSWORD = "MAILROOM_DB_PASSWORD";
    public static final String ENV_DB_CREATE = "MAILROOM_DB_CREATE";
    public static final String ENV_MIGRATE = "MAILROOM_MIGRATE";
    public static final String ENV_DB_POOL_SIZE = "MAILROOM_DB_POOL_SIZE";
    public static final String ENV_HOST = "MAILROOM_ORDERS_HOST";
    public static final String ENV_PORT = "MAILROOM_ORDERS_PORT";
    public static final String ENV_MAX_BODY_BYTES = "MAILROOM_ORDERS_MAX_BODY_BYTES";
    public static final String ENV_HTTP_THREADS = "MAILROOM_ORDERS_HTTP_THREADS";
    public static final String ENV_DB_STARTUP_TIMEOUT = "MAILROOM_DB_STARTUP_TIMEOUT";

    /** The variable of each of {@link DbTimeouts}' settings, the names the dispatcher service reads too. */
    static final Map<String, String> ENV_DB_TIMEOUTS = Map.of(DbTimeouts.SETTING_CONNECT, "MAILROOM_DB_CONNECT_TIMEOUT",
            DbTimeouts.SETTING_LOGIN, "MAILROOM_DB_LOGIN_TIMEOUT", DbTimeouts.SETTING_SOCKET, "MAILROOM_DB_SOCKET_TIMEOUT",
            DbTimeouts.SETTING_ACQUIRE, "MAILROOM_DB_ACQUIRE_TIMEOUT", DbTimeouts.SETTING_KEEPALIVE, "MAILROOM_DB_KEEPALIVE",
            DbTimeouts.SETTING_MAX_LIFETIME, "MAILROOM_DB_MAX_LIFETIME",
            DbTimeouts.SETTING_MIGRATION, "MAILROOM_DB_MIGRATION_SOCKET_TIMEOUT", DbTimeouts.SETTING_URL, ENV_DB_URL);

    /** host[:port] (or several, comma-separated), database, optional parameters. */
    private static final Pattern JDBC_URL = Pattern.compile("^jdbc:postgresql://([^/?]+)/([^/?]+)(\\?.*)?$");
    private static final Pattern URL_PASSWORD = Pattern.compile("(?i)([?&]password=)[^&]*");
    private static final String MASK = "****";

    public OrderServiceConfig {
        if (jdbcUrl == null || !JDBC_URL.matcher(jdbcUrl).matches()) {
            throw new IllegalArgumentException("jdbcUrl (" + ENV_DB_URL + ") must look like "
                    + "jdbc:postgresql://host:port/database[?params], got " + maskUrl(jdbcUrl));
        }
        if (dbUser != null && dbUser.isBlank()) {
            throw new IllegalArgumentException("dbUser (" + ENV_DB_USER + ") must not be blank; leave it unset to use the URL's");
        }
        if (dbPoolSize < 1 || dbPoolSize > MAX_POOL_SIZE) {
            throw new IllegalArgumentException("dbPoolSize (" + ENV_DB_POOL_SIZE + ") must be between 1 and "
                    + MAX_POOL_SIZE + ", got " + dbPoolSize);
        }
        Objects.requireNonNull(http, "http");
        Objects.requireNonNull(dbTimeouts, "dbTimeouts");
        if (dbStartupTimeout != null && dbStartupTimeout.compareTo(Duration.ofSeconds(1)) < 0) {
            throw new IllegalArgumentException("dbStartupTimeout (" + ENV_DB_STARTUP_TIMEOUT + ") must be 0 (wait as long"
                    + " as it takes) or at least 1s, got " + Durations.format(dbStartupTimeout));
        }
    }

    /** With the default network timeouts, waiting for the database as long as it takes. */
    public OrderServiceConfig(String jdbcUrl, String dbUser, String dbPassword, boolean createDatabase,
                              boolean migrate, int dbPoolSize, HttpSettings http) {
        this(jdbcUrl, dbUser, dbPassword, createDatabase, migrate, dbPoolSize, http, DbTimeouts.DEFAULTS, null);
    }

    /** Every default: the local {@code mailroom} database, migrations on, port {@value HttpSettings#DEFAULT_PORT}. */
    public static OrderServiceConfig defaults() {
        return new OrderServiceConfig(DEFAULT_JDBC_URL, null, null, DEFAULT_CREATE_DATABASE, DEFAULT_MIGRATE,
                DEFAULT_POOL_SIZE, HttpSettings.defaults());
    }

    /**
     * The configuration the environment describes (pass {@code System.getenv()}).
     *
     * @throws IllegalArgumentException naming the variable whose value is wrong
     */
    public static OrderServiceConfig fromEnvironment(Map<String, String> env) {
        HttpSettings http = new HttpSettings(
                text(env, ENV_HOST, HttpSettings.DEFAULT_HOST),
                integer(env, ENV_PORT, HttpSettings.DEFAULT_PORT),
                integer(env, ENV_MAX_BODY_BYTES, HttpSettings.DEFAULT_MAX_BODY_BYTES),
                integer(env, ENV_HTTP_THREADS, HttpSettings.DEFAULT_MAX_THREADS));
        return new OrderServiceConfig(
                text(env, ENV_DB_URL, DEFAULT_JDBC_URL),
                text(env, ENV_DB_USER, null),
                password(env),
                bool(env, ENV_DB_CREATE, DEFAULT_CREATE_DATABASE),
                bool(env, ENV_MIGRATE, DEFAULT_MIGRATE),
                integer(env, ENV_DB_POOL_SIZE, DEFAULT_POOL_SIZE),
                http, dbTimeouts(env), startupTimeout(env));
    }

    private static DbTimeouts dbTimeouts(Map<String, String> env) {
        try {
            return DbTimeouts.of(setting -> {
                String value = text(env, ENV_DB_TIMEOUTS.get(setting), null);
                return value == null || value.isBlank() ? null : Durations.parse(ENV_DB_TIMEOUTS.get(setting), value);
            });
        } catch (InvalidSettingException e) {
            throw e.renamed(ENV_DB_TIMEOUTS);
        }
    }

    private static Duration startupTimeout(Map<String, String> env) {
        String value = text(env, ENV_DB_STARTUP_TIMEOUT, null);
        Duration d = value == null ? Duration.ZERO : Durations.parse(ENV_DB_STARTUP_TIMEOUT, value);
        return d.isZero() ? null : d;
    }

    public OrderServiceConfig withJdbcUrl(String url) {
        return new OrderServiceConfig(url, dbUser, dbPassword, createDatabase, migrate, dbPoolSize, http, dbTimeouts, dbStartupTimeout);
    }

    public OrderServiceConfig withCredentials(String user, String password) {
        return new OrderServiceConfig(jdbcUrl, user, password, createDatabase, migrate, dbPoolSize, http, dbTimeouts, dbStartupTimeout);
    }

    public OrderServiceConfig withCreateDatabase(boolean create) {
        return new OrderServiceConfig(jdbcUrl, dbUser, dbPassword, create, migrate, dbPoolSize, http, dbTimeouts, dbStartupTimeout);
    }

    public OrderServiceConfig withMigrate(boolean migrateAtStart) {
        return new OrderServiceConfig(jdbcUrl, dbUser, dbPassword, createDatabase, migrateAtStart, dbPoolSize, http, dbTimeouts, dbStartupTimeout);
    }

    public OrderServiceConfig withHttp(HttpSettings settings) {
        return new OrderServiceConfig(jdbcUrl, dbUser, dbPassword, createDatabase, migrate, dbPoolSize, settings, dbTimeouts, dbStartupTimeout);
    }

    public OrderServiceConfig withDbTimeouts(DbTimeouts timeouts) {
        return new OrderServiceConfig(jdbcUrl, dbUser, dbPassword, createDatabase, migrate, dbPoolSize, http, timeouts, dbStartupTimeout);
    }

    /** How long start-up waits for the database; null: as long as it takes. */
    public OrderServiceConfig withDbStartupTimeout(Duration timeout) {
        return new OrderServiceConfig(jdbcUrl, dbUser, dbPassword, createDatabase, migrate, dbPoolSize, http, dbTimeouts, timeout);
    }

    /** The database named in {@link #jdbcUrl()}. */
    public String databaseName() {
        return urlPart(2);
    }

    /** {@link #jdbcUrl()} pointing at another database of the same server, with the same parameters. */
    public String jdbcUrlFor(String database) {
        String params = urlPart(3);
        return "jdbc:postgresql://" + urlPart(1) + "/" + database + (params == null ? "" : params);
    }

    private String urlPart(int group) {
        Matcher m = JDBC_URL.matcher(jdbcUrl);
        if (!m.matches()) {
            throw new IllegalStateException("checked in the constructor");
        }
        return m.group(group);
    }

    @Override
    public String toString() {
        return "OrderServiceConfig[jdbcUrl=" + maskUrl(jdbcUrl)
                + ", dbUser=" + (dbUser == null ? "(from URL)" : dbUser)
                + ", dbPassword=" + (dbPassword == null ? "(from URL or none)" : MASK)
                + ", createDatabase=" + createDatabase
                + ", migrate=" + migrate
                + ", dbPoolSize=" + dbPoolSize
                + ", http=" + http + ", dbTimeouts[" + dbTimeouts + "], dbStartupTimeout="
                + (dbStartupTimeout == null ? "none" : Durations.format(dbStartupTimeout)) + "]";
    }

    static String maskUrl(String url) {
        return url == null ? null : URL_PASSWORD.matcher(url).replaceAll("$1" + MASK);
    }

    private static String text(Map<String, String> env, String name, String fallback) {
        String value = env.get(name);
        return value == null || value.isEmpty() ? fallback : value.trim();
    }

    /** Not trimmed: a password may well start or end with a space. */
    private static String password(Map<String, String> env) {
        String value = env.get(ENV_DB_PASSWORD);
        return value == null || value.isEmpty() ? null : value;
    }

    private static int integer(Map<String, String> env, String name, int fallback) {
        String value = text(env, name, null);
        if (value == null) {
            return fallback;
        }
        try {
            return Integer.parseInt(value);
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException(name + " must be an integer, got '" + value + "'");
        }
    }

    private static boolean bool(Map<String, String> env, String name, boolean fallback) {
        String value = text(env, name, null);
        if (value == null) {
            return fallback;
        }
        return switch (value.toLowerCase(Locale.ROOT)) {
            case "true" -> true;
            case "false" -> false;
            default -> throw new IllegalArgumentException(name + " must be true or false, got '" + value + "'");
        };
    }
}
