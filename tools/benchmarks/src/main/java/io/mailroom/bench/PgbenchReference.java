package io.mailroom.bench;

import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.util.Comparator;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

/**
 * Scenario 2 without Java: {@code pgbench} runs {@code benchmarks/pgbench/claim_complete.sql} (the
 * runtime's statements, see that file) with the same batch size and number of sessions on an
 * identically loaded database. The clock covers the pgbench process from start to exit; its CPU
 * counts as the client side. The script file is read from the classpath, so the tool needs no
 * checkout to run it.
 */
final class PgbenchReference {

    static final String SCRIPT_RESOURCE = "/pgbench/claim_complete.sql";

    private PgbenchReference() {
    }

    /** The pgbench binary: {@code explicit} if given, else on the PATH, else under /usr/lib/postgresql/<v>/bin. */
    static Optional<Path> find(String explicit) {
        if (explicit != null && !explicit.isBlank() && !explicit.equals("auto")) {
            Path p = Path.of(explicit);
            return Files.isExecutable(p) ? Optional.of(p) : Optional.empty();
        }
        return findTool("pgbench");
    }

    /** A PostgreSQL client tool on the PATH, else under /usr/lib/postgresql/<newest>/bin. */
    static Optional<Path> findTool(String name) {
        String path = System.getenv("PATH");
        if (path != null) {
            for (String dir : path.split(java.io.File.pathSeparator)) {
                Path p = Path.of(dir, name);
                if (Files.isExecutable(p)) {
                    return Optional.of(p);
                }
            }
        }
        Path pgRoot = Path.of("/usr/lib/postgresql");
        if (Files.isDirectory(pgRoot)) {
            try (Stream<Path> versions = Files.list(pgRoot)) {
                return versions.map(v -> v.resolve("bin").resolve(name)).filter(Files::isExecutable)
                        .max(Comparator.comparing(Path::toString));
            } catch (IOException e) {
                return Optional.empty();
            }
        }
        return Optional.empty();
    }

    static DrainResult run(Path pgbench, BenchDb db, QueueLoader.Loaded loaded, int batch, int clients,
                           boolean recordAttempts, Path workDir) throws Exception {
        Path script = workDir.resolve("claim_complete.sql");
        Files.createDirectories(workDir);
        try (InputStream in = PgbenchReference.class.getResourceAsStream(SCRIPT_RESOURCE)) {
            if (in == null) {
                throw new IllegalStateException("missing resource " + SCRIPT_RESOURCE);
            }
            Files.write(script, in.readAllBytes());
        }
        int n = loaded.count();
        PgConnInfo conn = PgConnInfo.parse(db.url());
        try (Connection monitor = db.connect()) {
            CpuMeter meter = new CpuMeter(monitor, false);
            // pgbench's sessions live only while it runs: track their CPU (and pgbench's) during the run
            CpuMeter.Tracker client = new CpuMeter.Tracker();
            CpuMeter.Tracker backends = new CpuMeter.Tracker();
            CpuMeter.Sample before = meter.sample(List.of());
            long t0 = System.nanoTime();
            String error = null;
            // Claims of several sessions may come back short at the tail; run again for what is left.
            for (int round = 0; round < 5; round++) {
                long left = round == 0 ? n : QueueLoader.remaining(monitor);
                if (left == 0) {
                    break;
                }
                long perClient = (left + (long) batch * clients - 1) / ((long) batch * clients) + 1;
                ProcessBuilder pb = new ProcessBuilder(pgbench.toString(), "-n", "-M", "prepared",
                        "-c", Integer.toString(clients), "-j", Integer.toString(clients),
                        "-t", Long.toString(perClient), "-D", "batch=" + batch,
                        "-D", "record_attempts=" + (recordAttempts ? 1 : 0), "-f", script.toString());
                pb.environment().putAll(conn.environment());
                pb.redirectErrorStream(true);
                Path log = workDir.resolve("pgbench-b" + batch + "-a" + (recordAttempts ? 1 : 0) + ".log");
                pb.redirectOutput(log.toFile());
                Process p = pb.start();
                List<Long> sessions = List.of();
                while (!p.waitFor(20, TimeUnit.MILLISECONDS)) {
                    client.observe(List.of(p.pid()));
                    if (sessions.size() < clients && meter.databaseVisible()) {
                        sessions = meter.clientBackends(); // SQL only until every session is connected
                    }
                    backends.observe(sessions);
                }
                if (p.exitValue() != 0) {
                    error = "pgbench exited " + p.exitValue() + ": " + tail(log);
                    break;
                }
            }
            long t1 = System.nanoTime();
            CpuMeter.Sample after = meter.sample(List.of());
            CpuMeter.Used background = meter.between(before, after);
            // what ran after the last sample (at most 20 ms per process) is missed
            CpuMeter.Used used = new CpuMeter.Used(client.total(), 0, backends.total(), background.backgroundNanos(),
                    backends.processes(), meter.databaseVisible());
            QueueLoader.Counts counts = QueueLoader.counts(monitor);
            long handled = counts.done();
            long duplicates = duplicateClaims(monitor);
            return new DrainResult(n, handled, duplicates, t1 - t0, used, counts, error);
        }
    }

    /** Messages claimed more than once (claim_version above 1): none, when nothing was lost or retried. */
    static long duplicateClaims(Connection c) throws java.sql.SQLException {
        try (var st = c.createStatement(); var rs = st.executeQuery(
                "SELECT count(*) FROM mailroom.outbox_message WHERE claim_version > 1")) {
            rs.next();
            return rs.getLong(1);
        }
    }

    private static String tail(Path log) throws IOException {
        List<String> lines = Files.readAllLines(log, StandardCharsets.UTF_8);
        return String.join(" | ", lines.subList(Math.max(0, lines.size() - 4), lines.size()));
    }
}
