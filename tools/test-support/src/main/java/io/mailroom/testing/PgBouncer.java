package io.mailroom.testing;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Optional;
import java.util.stream.Stream;

/**
 * A PgBouncer process of its own (transaction pooling) in front of one database of the test
 * server: its own port, config and auth file in a temporary directory, never the system's
 * pgbouncer. Trust auth towards the clients, the test server's user towards PostgreSQL.
 * {@link #close()} stops the process and removes the directory.
 */
public final class PgBouncer implements AutoCloseable {

    private static final List<String> BINARIES = List.of("/usr/sbin/pgbouncer", "/usr/bin/pgbouncer", "/usr/local/bin/pgbouncer");

    private final Process process;
    private final Path dir;
    private final int port;
    private final String database;
    private final String user;

    private PgBouncer(Process process, Path dir, int port, String database, String user) {
        this.process = process;
        this.dir = dir;
        this.port = port;
        this.database = database;
        this.user = user;
    }

    /** The pgbouncer binary, if this machine has one (Debian: {@code apt-get install pgbouncer}). */
    public static Optional<Path> binary() {
        return BINARIES.stream().map(Path::of).filter(Files::isExecutable).findFirst();
    }

    /**
     * Starts PgBouncer in transaction mode in front of {@code database} on {@code host:pgPort}, with
     * at most {@code serverConnections} server sessions for it (the pool size the clients share).
     */
    public static PgBouncer start(String host, int pgPort, String database, String user, int serverConnections)
            throws IOException {
        Path binary = binary().orElseThrow(() -> new IllegalStateException(
                "pgbouncer is not installed (apt-get install pgbouncer)"));
        Path dir = Files.createTempDirectory("mailroom-pgbouncer-");
        // pgbouncer refuses to run as root; it drops to the postgres user (-u), who must read the files
        Files.setPosixFilePermissions(dir, PosixFilePermissions.fromString("rwxrwxrwx"));
        int port = freePort();
        Path auth = dir.resolve("users.txt");
        Files.writeString(auth, "\"" + user + "\" \"\"\n");
        Path ini = dir.resolve("pgbouncer.ini");
        Files.writeString(ini, String.join("\n",
                "[databases]",
                database + " = host=" + host + " port=" + pgPort + " dbname=" + database,
                "[pgbouncer]",
                "listen_addr = 127.0.0.1",
                "listen_port = " + port,
                "unix_socket_dir =",
                "auth_type = trust",
                "auth_file = " + auth,
                "pool_mode = transaction",
                "default_pool_size = " + serverConnections,
                "max_client_conn = 1000",
                "server_reset_query =",
                // pgjdbc sends it at start-up; pgbouncer would refuse the client otherwise
                "ignore_startup_parameters = extra_float_digits",
                "logfile = " + dir.resolve("pgbouncer.log"),
                "pidfile = " + dir.resolve("pgbouncer.pid"),
                "admin_users = " + user,
                ""));
        for (Path f : List.of(auth, ini)) {
            Files.setPosixFilePermissions(f, PosixFilePermissions.fromString("rw-r--r--"));
        }
        List<String> command = new ArrayList<>(List.of(binary.toString()));
        if ("root".equals(System.getProperty("user.name"))) {
            command.addAll(List.of("-u", "postgres"));
        }
        command.add(ini.toString());
        Process process = new ProcessBuilder(command).redirectErrorStream(true)
                .redirectOutput(dir.resolve("stdout.txt").toFile()).start();
        PgBouncer bouncer = new PgBouncer(process, dir, port, database, user);
        bouncer.awaitListening(Duration.ofSeconds(15));
        return bouncer;
    }

    public int port() {
        return port;
    }

    /** JDBC URL through the pooler, with {@code prepareThreshold=0} (no named server-side statements). */
    public String jdbcUrl() {
        return "jdbc:postgresql://127.0.0.1:" + port + "/" + database + "?user=" + user + "&prepareThreshold=0";
    }

    /** JDBC URL through the pooler with pgjdbc's defaults (named statements after 5 executions). */
    public String jdbcUrlDefaults() {
        return "jdbc:postgresql://127.0.0.1:" + port + "/" + database + "?user=" + user;
    }

    /** The process id, for kill. */
    public long pid() {
        return process.pid();
    }

    /** PgBouncer's own log, for a failure message. */
    public String log() {
        try {
            Path log = dir.resolve("pgbouncer.log");
            return Files.exists(log) ? Files.readString(log) : Files.readString(dir.resolve("stdout.txt"));
        } catch (IOException e) {
            return "(log unreadable: " + e + ")";
        }
    }

    private void awaitListening(Duration timeout) throws IOException {
        Instant deadline = Instant.now().plus(timeout);
        while (Instant.now().isBefore(deadline)) {
            if (!process.isAlive()) {
                String log = log();
                close();
                throw new IOException("pgbouncer exited with " + process.exitValue() + ": " + log);
            }
            try (Socket s = new Socket()) {
                s.connect(new InetSocketAddress("127.0.0.1", port), 200);
                return;
            } catch (IOException notYet) {
                try {
                    process.waitFor(100, java.util.concurrent.TimeUnit.MILLISECONDS);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    throw new IOException("interrupted while pgbouncer started", e);
                }
            }
        }
        String log = log();
        close();
        throw new IOException("pgbouncer did not listen on " + port + " within " + timeout + ": " + log);
    }

    private static int freePort() throws IOException {
        try (ServerSocket s = new ServerSocket(0, 1, java.net.InetAddress.getLoopbackAddress())) {
            return s.getLocalPort();
        }
    }

    @Override
    public void close() {
        process.destroy();
        try {
            if (!process.waitFor(5, java.util.concurrent.TimeUnit.SECONDS)) {
                process.destroyForcibly().waitFor(5, java.util.concurrent.TimeUnit.SECONDS);
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        try (Stream<Path> files = Files.walk(dir)) {
            files.sorted(Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
        } catch (IOException ignored) {
            // a temp directory left behind
        }
    }
}
