package io.mailroom.db;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.sql.Connection;
import java.sql.DatabaseMetaData;
import java.sql.SQLException;
import java.util.Optional;

/**
 * The PostgreSQL versions Mailroom supports, and the check that says so at start. Supported: 15 to
 * 17 (every test runs on 15, the oldest; the demo's and the tests' embedded server is 17, the
 * newest). jOOQ's open-source edition checks the server against its own support matrix (3.21: the
 * newest PostgreSQL only) and warns "Version mismatch" on every supported version; that check is
 * about jOOQ's editions, not about what Mailroom's SQL needs, so {@link #replaceJooqVersionCheck()}
 * mutes it (the way jOOQ documents for libraries built on it, a system property) and
 * {@link #check(Connection)} says instead what is true for Mailroom.
 */
public final class PostgresVersions {

    public static final int OLDEST_SUPPORTED = 15;
    public static final int NEWEST_SUPPORTED = 17;
    /** jOOQ's logger of its version check, by the system property that sets its threshold. */
    static final String JOOQ_VERSION_LOGGER_PROPERTY = "org.jooq.log.org.jooq.impl.DefaultExecuteContext.logVersionSupport";

    private static final Logger log = LoggerFactory.getLogger(PostgresVersions.class);

    private PostgresVersions() {
    }

    /** Mutes jOOQ's own version check, unless the operator set its threshold already. Call before the first query. */
    public static void replaceJooqVersionCheck() {
        if (System.getProperty(JOOQ_VERSION_LOGGER_PROPERTY) == null) {
            System.setProperty(JOOQ_VERSION_LOGGER_PROPERTY, "ERROR");
        }
    }

    /** What is wrong with a server of this major version for Mailroom, if anything. */
    public static Optional<String> problem(int major) {
        if (major < OLDEST_SUPPORTED) {
            return Optional.of("PostgreSQL " + major + " is older than the oldest Mailroom supports ("
                    + OLDEST_SUPPORTED + "); upgrade the server");
        }
        if (major > NEWEST_SUPPORTED) {
            return Optional.of("PostgreSQL " + major + " is newer than the newest Mailroom is tested on ("
                    + NEWEST_SUPPORTED + ")");
        }
        return Optional.empty();
    }

    /** Logs the server's version once: info when supported, a warning naming the range otherwise. */
    public static void check(Connection connection) throws SQLException {
        DatabaseMetaData meta = connection.getMetaData();
        int major = meta.getDatabaseMajorVersion();
        Optional<String> problem = problem(major);
        if (problem.isPresent()) {
            log.warn("{} (server {}; supported {} to {})", problem.get(), meta.getDatabaseProductVersion(),
                    OLDEST_SUPPORTED, NEWEST_SUPPORTED);
        } else {
            log.info("PostgreSQL {} (supported: {} to {})", meta.getDatabaseProductVersion(), OLDEST_SUPPORTED,
                    NEWEST_SUPPORTED);
        }
    }
}
