package io.mailroom.bench;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/** What the figures were measured on: CPU, memory, JVM, PostgreSQL version and the settings that bound a queue. */
final class Machine {

    static final List<String> PG_SETTINGS = List.of("synchronous_commit", "fsync", "wal_sync_method", "full_page_writes",
            "commit_delay", "shared_buffers", "wal_buffers", "max_wal_size", "checkpoint_timeout", "max_connections",
            "plan_cache_mode", "jit", "shared_preload_libraries", "autovacuum");

    private Machine() {
    }

    static void describe(Map<String, Object> out, Connection c) throws SQLException {
        out.put("cpu_model", cpuModel());
        out.put("logical_cpus", logicalCpus());
        out.put("jvm_available_processors", Runtime.getRuntime().availableProcessors());
        out.put("memory_total_mb", memTotalMb());
        out.put("kernel", readFirstLine("/proc/sys/kernel/osrelease"));
        out.put("java", System.getProperty("java.vm.name") + " " + Runtime.version());
        out.put("load_average_at_start", readFirstLine("/proc/loadavg"));
        try (Statement st = c.createStatement()) {
            try (ResultSet rs = st.executeQuery("SELECT version()")) {
                rs.next();
                out.put("postgresql", rs.getString(1));
            }
            Map<String, String> settings = new LinkedHashMap<>();
            for (String name : PG_SETTINGS) {
                try (ResultSet rs = st.executeQuery("SELECT current_setting('" + name + "', true)")) {
                    rs.next();
                    settings.put(name, rs.getString(1));
                }
            }
            out.put("postgresql_settings", settings);
            try (ResultSet rs = st.executeQuery(
                    "SELECT EXISTS (SELECT 1 FROM pg_available_extensions WHERE name = 'pg_stat_statements'),"
                            + " current_setting('shared_preload_libraries') LIKE '%pg_stat_statements%'")) {
                rs.next();
                out.put("pg_stat_statements", rs.getBoolean(2) ? "loaded" : rs.getBoolean(1)
                        ? "installed but not in shared_preload_libraries (needs a server restart): not used" : "not installed");
            }
        }
        out.put("postgresql_on_this_host_cpu_visible", new CpuMeter(c, false).databaseVisible());
    }

    /** {@code pg_test_fsync -s <secs>}: ops/s of each sync method for one 8 kB write, or empty if unavailable. */
    static Optional<Map<String, Object>> fsyncSpeed(int seconds, Path workDir, Connection c) {
        Optional<Path> tool = PgbenchReference.findTool("pg_test_fsync");
        if (tool.isEmpty()) {
            return Optional.empty();
        }
        try {
            Files.createDirectories(workDir);
            Path file = workDir.resolve("pg_test_fsync.out");
            Process p = new ProcessBuilder(tool.get().toString(), "-s", Integer.toString(seconds), "-f", file.toString())
                    .redirectErrorStream(true).start();
            String output = new String(p.getInputStream().readAllBytes());
            if (!p.waitFor(5, TimeUnit.MINUTES) || p.exitValue() != 0) {
                return Optional.empty();
            }
            Files.deleteIfExists(file);
            Map<String, Object> out = new LinkedHashMap<>();
            out.put("command", "pg_test_fsync -s " + seconds + " -f " + file);
            out.put("same_filesystem_as_postgresql_data", sameFileStore(workDir, c));
            // first section: one 8 kB write per sync, i.e. one small commit's WAL flush
            String first = output.split("Compare file sync methods using two")[0];
            Matcher m = Pattern.compile("(?m)^\\s+(\\S+)\\s+([0-9.]+) ops/sec\\s+(\\d+) usecs/op").matcher(first);
            Map<String, Object> methods = new LinkedHashMap<>();
            while (m.find()) {
                methods.put(m.group(1), Map.of("ops_per_s", Double.parseDouble(m.group(2)), "usecs_per_op",
                        Integer.parseInt(m.group(3))));
            }
            out.put("one_8kB_write", methods);
            return Optional.of(out);
        } catch (IOException | RuntimeException e) {
            return Optional.empty();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return Optional.empty();
        }
    }

    /** Whether {@code dir} is on the file system of the server's data directory: yes, no, or why unknown. */
    private static String sameFileStore(Path dir, Connection c) {
        try (Statement st = c.createStatement(); ResultSet rs = st.executeQuery("SELECT current_setting('data_directory')")) {
            rs.next();
            Path data = Path.of(rs.getString(1));
            return Files.getFileStore(data).equals(Files.getFileStore(dir)) ? "yes" : "no";
        } catch (SQLException | IOException | RuntimeException e) {
            return "unknown (" + e.getClass().getSimpleName() + ")";
        }
    }

    private static String cpuModel() {
        try {
            for (String line : Files.readAllLines(Path.of("/proc/cpuinfo"))) {
                if (line.startsWith("model name")) {
                    return line.substring(line.indexOf(':') + 1).trim();
                }
            }
        } catch (IOException e) {
            // not Linux
        }
        return System.getProperty("os.arch");
    }

    private static Integer logicalCpus() {
        try {
            return (int) Files.readAllLines(Path.of("/proc/cpuinfo")).stream().filter(l -> l.startsWith("processor")).count();
        } catch (IOException e) {
            return null;
        }
    }

    private static Long memTotalMb() {
        try {
            for (String line : Files.readAllLines(Path.of("/proc/meminfo"))) {
                if (line.startsWith("MemTotal:")) {
                    return Long.parseLong(line.replaceAll("\\D", "")) / 1024;
                }
            }
        } catch (IOException | RuntimeException e) {
            // not Linux
        }
        return null;
    }

    private static String readFirstLine(String path) {
        try {
            return Files.readAllLines(Path.of(path)).getFirst().trim();
        } catch (IOException | RuntimeException e) {
            return null;
        }
    }
}
