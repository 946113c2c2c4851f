package io.mailroom.orders;

import io.zonky.test.db.postgres.embedded.EmbeddedPostgres;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * The embedded default for a first run: when no {@code MAILROOM_DB_URL} is configured, a PostgreSQL
 * server (zonky's embedded binaries) runs inside this process with its data under
 * {@code .mailroom/pg17} in the working directory, so orders survive a restart. Port
 * {@value #DEFAULT_PORT} unless {@code MAILROOM_EMBEDDED_PG_PORT} says otherwise, so that
 * {@code psql -h 127.0.0.1 -p 54329 -U postgres} can look at the rows.
 */
public final class EmbeddedDatabase implements AutoCloseable {

    static final int DEFAULT_PORT = 54329;
    static final String ENV_PORT = "MAILROOM_EMBEDDED_PG_PORT";
    /**
     * One folder per PostgreSQL major: a server refuses the data files of another major, so the
     * demo's move to a new embedded major starts a new database instead of failing at start.
     */
    static final Path DATA = Path.of(".mailroom", "pg" + io.mailroom.db.PostgresVersions.NEWEST_SUPPORTED);
    /** Where the embedded PostgreSQL 14 of earlier versions kept its data. */
    static final Path EARLIER_DATA = Path.of(".mailroom", "pg");

    private static final Logger log = LoggerFactory.getLogger(EmbeddedDatabase.class);

    private final EmbeddedPostgres postgres;

    private EmbeddedDatabase(EmbeddedPostgres postgres) {
        this.postgres = postgres;
    }

    public static EmbeddedDatabase start(java.util.Map<String, String> env) {
        int port = DEFAULT_PORT;
        String configured = env.get(ENV_PORT);
        if (configured != null && !configured.isBlank()) {
            try {
                port = Integer.parseInt(configured.trim());
            } catch (NumberFormatException e) {
                throw new IllegalArgumentException(ENV_PORT + " must be a port number, got '" + configured + "'");
            }
            if (port < 1 || port > 65535) {
                throw new IllegalArgumentException(ENV_PORT + " must be 1..65535, got " + port);
            }
        }
        try {
            if (!Files.exists(DATA) && Files.exists(EARLIER_DATA.resolve("PG_VERSION"))) {
                log.info("The embedded PostgreSQL is now {}: it starts a new database in {}; the earlier one ({}) stays in {}",
                        io.mailroom.db.PostgresVersions.NEWEST_SUPPORTED, DATA.toAbsolutePath(),
                        Files.readString(EARLIER_DATA.resolve("PG_VERSION")).strip(), EARLIER_DATA.toAbsolutePath());
            }
            Files.createDirectories(DATA);
            EmbeddedPostgres pg = EmbeddedPostgres.builder()
                    .setDataDirectory(DATA)
                    .setCleanDataDirectory(false)
                    .setPort(port)
                    .start();
            log.info("Embedded PostgreSQL on 127.0.0.1:{} with its data in {} (set MAILROOM_DB_URL to use your own)",
                    port, DATA.toAbsolutePath());
            return new EmbeddedDatabase(pg);
        } catch (IOException e) {
            throw new UncheckedIOException("Could not start the embedded PostgreSQL in " + DATA.toAbsolutePath()
                    + " on port " + port + ": " + e.getMessage(), e);
        }
    }

    public String jdbcUrl() {
        return "jdbc:postgresql://127.0.0.1:" + postgres.getPort() + "/postgres?user=postgres";
    }

    @Override
    public void close() {
        try {
            postgres.close();
        } catch (IOException e) {
            log.warn("Embedded PostgreSQL did not stop cleanly: {}", e.getMessage());
        }
    }
}
