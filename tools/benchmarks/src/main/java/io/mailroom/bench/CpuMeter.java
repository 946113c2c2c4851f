package io.mailroom.bench;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.OptionalLong;
import java.util.Set;

/**
 * CPU spent by one scenario run, split into the client JVM(s) and the PostgreSQL processes serving
 * them. Method: before and after the timed window, read utime + stime ({@link ProcCpu}) of
 * <ul>
 *   <li>the client JVM (this process) and any child JVMs given;</li>
 *   <li>every client backend connected to the benchmark database ({@code pg_stat_activity} where
 *       {@code datname} is that database and {@code backend_type = 'client backend'}), except the
 *       monitoring session itself; a backend first seen after the run counts from zero;</li>
 *   <li>separately, PostgreSQL's shared background processes (WAL writer, checkpointer, background
 *       writer, autovacuum): they also serve other databases on the server, so they are reported
 *       apart and not added to the per-message figure.</li>
 * </ul>
 * The backends are only readable when PostgreSQL runs on this host; otherwise the database side is
 * reported as unavailable, never guessed. A backend that exits inside the window is lost (pools
 * are kept open until after the second sample, so none should).
 */
final class CpuMeter {

    /**
     * One sample.
     *
     * @param jitNanos CPU of this JVM's JIT compiler threads so far (0 when this JVM is not counted)
     */
    record Sample(long jvmNanos, long jitNanos, Map<Long, Long> children, Map<Long, Long> backends,
                  Map<Long, Long> background) {
    }

    /** CPU used between two samples. */
    record Used(long jvmNanos, long jitNanos, long backendNanos, long backgroundNanos, int backends,
                boolean databaseVisible) {

        /** The part of {@link #clientMsPer1000} this JVM's compilers spent compiling, not running the driver. */
        Double jitMsPer1000(long messages) {
            return messages == 0 ? null : jitNanos / 1e6 * 1000.0 / messages;
        }

        Double clientMsPer1000(long messages) {
            return messages == 0 ? null : jvmNanos / 1e6 * 1000.0 / messages;
        }

        Double databaseMsPer1000(long messages) {
            return messages == 0 || !databaseVisible ? null : backendNanos / 1e6 * 1000.0 / messages;
        }

        Double totalMsPer1000(long messages) {
            return messages == 0 || !databaseVisible ? null : (jvmNanos + backendNanos) / 1e6 * 1000.0 / messages;
        }
    }

    private final Connection monitor;
    private final boolean includeSelf;
    private final boolean databaseVisible;

    /**
     * @param monitor     a session on the benchmark database, used only to list its backends
     * @param includeSelf count this JVM (false when the work runs in child processes only)
     */
    CpuMeter(Connection monitor, boolean includeSelf) throws SQLException {
        this.monitor = monitor;
        this.includeSelf = includeSelf;
        this.databaseVisible = ProcCpu.available() && serverIsLocal(monitor);
    }

    boolean databaseVisible() {
        return databaseVisible;
    }

    Sample sample(Collection<Long> childPids) throws SQLException {
        long self = includeSelf ? ProcCpu.selfNanos() : 0;
        long jit = includeSelf ? ProcCpu.selfJitNanos() : 0;
        Map<Long, Long> children = read(childPids);
        Map<Long, Long> backends = Map.of();
        Map<Long, Long> background = Map.of();
        if (databaseVisible) {
            backends = read(clientBackends());
            background = read(pids("""
                    SELECT pid FROM pg_stat_activity
                    WHERE backend_type IN ('walwriter', 'checkpointer', 'background writer',
                                           'autovacuum launcher', 'autovacuum worker')
                    """));
        }
        return new Sample(self, jit, children, backends, background);
    }

    /**
     * For sessions that come and go inside the window (pgbench's): keeps the highest CPU figure seen
     * per process while they run; a process first seen inside the window counts from zero, its
     * connection start-up included.
     */
    static final class Tracker {
        private final Map<Long, Long> last = new HashMap<>();

        void observe(Collection<Long> pids) {
            for (long pid : pids) {
                OptionalLong n = ProcCpu.nanos(pid);
                if (n.isPresent()) {
                    last.merge(pid, n.getAsLong(), Math::max);
                }
            }
        }

        long total() {
            return last.values().stream().mapToLong(Long::longValue).sum();
        }

        int processes() {
            return last.size();
        }
    }

    static Used between(Sample before, Sample after, boolean databaseVisible) {
        long jvm = after.jvmNanos() - before.jvmNanos() + delta(before.children(), after.children());
        return new Used(jvm, after.jitNanos() - before.jitNanos(), delta(before.backends(), after.backends()),
                delta(before.background(), after.background()), after.backends().size(), databaseVisible);
    }

    Used between(Sample before, Sample after) {
        return between(before, after, databaseVisible);
    }

    private static long delta(Map<Long, Long> before, Map<Long, Long> after) {
        long sum = 0;
        for (var e : after.entrySet()) {
            sum += e.getValue() - before.getOrDefault(e.getKey(), 0L);
        }
        return sum;
    }

    /** Client backends connected to the benchmark database now, except the monitoring session. */
    List<Long> clientBackends() throws SQLException {
        return pids("""
                SELECT pid FROM pg_stat_activity
                WHERE datname = current_database() AND backend_type = 'client backend' AND pid <> pg_backend_pid()
                """);
    }

    private List<Long> pids(String sql) throws SQLException {
        List<Long> out = new ArrayList<>();
        try (PreparedStatement ps = monitor.prepareStatement(sql); ResultSet rs = ps.executeQuery()) {
            while (rs.next()) {
                out.add(rs.getLong(1));
            }
        }
        return out;
    }

    private static Map<Long, Long> read(Collection<Long> pids) {
        Map<Long, Long> out = new HashMap<>();
        Set<Long> unique = new HashSet<>(pids);
        for (long pid : unique) {
            OptionalLong n = ProcCpu.nanos(pid);
            if (n.isPresent()) {
                out.put(pid, n.getAsLong());
            }
        }
        return out;
    }

    /** Whether the backend serving {@code monitor} is a process on this host that we can read. */
    private static boolean serverIsLocal(Connection monitor) throws SQLException {
        try (PreparedStatement ps = monitor.prepareStatement("SELECT pg_backend_pid()"); ResultSet rs = ps.executeQuery()) {
            rs.next();
            long pid = rs.getLong(1);
            return ProcCpu.command(pid).startsWith("postgres") && ProcCpu.nanos(pid).isPresent();
        }
    }
}
