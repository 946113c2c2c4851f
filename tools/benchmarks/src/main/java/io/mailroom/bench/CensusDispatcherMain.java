package io.mailroom.bench;

import io.mailroom.email.service.MailroomCli;

import java.io.BufferedReader;
import java.io.BufferedWriter;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.Driver;
import java.sql.DriverManager;
import java.sql.DriverPropertyInfo;
import java.sql.SQLException;
import java.sql.SQLFeatureNotSupportedException;
import java.util.Map;
import java.util.Properties;
import java.util.logging.Logger;

/**
 * {@code mailroom dispatcher run} with a {@link StatementCensus} under every session it opens, for
 * the untimed census run of the dispatcher-only scenario. The service builds its own pools from
 * {@code MAILROOM_DB_URL}, so the census goes in at the JDBC driver: PostgreSQL's driver is taken
 * out of {@link DriverManager} and replaced by one that delegates to it and wraps each connection.
 *
 * <p>Talks with the parent on stdin/stdout: {@code CENSUS <file>} writes one line
 * {@code count TAB sql} per statement text executed so far and is answered
 * {@code CENSUS <executions> <commits>}; {@code STOP} or the end of input stops the service.
 */
public final class CensusDispatcherMain {

    private CensusDispatcherMain() {
    }

    public static void main(String[] args) throws Exception {
        Logging.configure();
        StatementCensus census = new StatementCensus(null);
        Driver real = DriverManager.getDriver("jdbc:postgresql://127.0.0.1/postgres");
        DriverManager.deregisterDriver(real);
        DriverManager.registerDriver(new CountingDriver(real, census));
        Thread.ofPlatform().name("dispatcher-run").start(() -> {
            int code = MailroomCli.commandLine().execute("dispatcher", "run");
            System.err.println("mailroom dispatcher run ended: " + code);
            System.exit(code);
        });
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        String line;
        while ((line = in.readLine()) != null && !line.equals("STOP")) {
            if (line.startsWith("CENSUS ")) {
                Map<String, Long> executions = census.executions();
                try (BufferedWriter w = Files.newBufferedWriter(Path.of(line.substring(7).trim()), StandardCharsets.UTF_8)) {
                    for (var e : executions.entrySet()) {
                        w.write(e.getValue() + "\t" + e.getKey() + "\n");
                    }
                }
                System.out.println("CENSUS " + census.totalExecutions() + " " + census.commits());
            } else {
                System.out.println("UNKNOWN " + line);
            }
            System.out.flush();
        }
        System.exit(0); // the service's shutdown hook closes it
    }

    /** PostgreSQL's driver, its connections counted. */
    private record CountingDriver(Driver real, StatementCensus census) implements Driver {
        @Override
        public Connection connect(String url, Properties info) throws SQLException {
            Connection c = real.connect(url, info);
            return c == null ? null : census.wrap(c);
        }

        @Override
        public boolean acceptsURL(String url) throws SQLException {
            return real.acceptsURL(url);
        }

        @Override
        public DriverPropertyInfo[] getPropertyInfo(String url, Properties info) throws SQLException {
            return real.getPropertyInfo(url, info);
        }

        @Override
        public int getMajorVersion() {
            return real.getMajorVersion();
        }

        @Override
        public int getMinorVersion() {
            return real.getMinorVersion();
        }

        @Override
        public boolean jdbcCompliant() {
            return real.jdbcCompliant();
        }

        @Override
        public Logger getParentLogger() throws SQLFeatureNotSupportedException {
            return real.getParentLogger();
        }
    }
}
