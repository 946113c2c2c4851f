package io.mailroom.bench;

import java.io.IOException;
import java.lang.management.ManagementFactory;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.OptionalLong;
import java.util.concurrent.TimeUnit;

/**
 * CPU time of a process from {@code /proc/<pid>/stat} (user + system, fields 14 and 15, in clock
 * ticks), the same way for this JVM, a child JVM and a PostgreSQL backend. Resolution is one tick
 * (10 ms at the usual 100 Hz), so a figure is only as good as the run is long; the scenarios run
 * long enough for thousands of ticks.
 */
final class ProcCpu {

    private static final long TICKS_PER_SECOND = ticksPerSecond();

    private ProcCpu() {
    }

    static boolean available() {
        return Files.isReadable(Path.of("/proc/self/stat"));
    }

    /** CPU nanoseconds used so far by {@code pid}, or empty if it is gone or not readable. */
    static OptionalLong nanos(long pid) {
        return statNanos(Path.of("/proc", Long.toString(pid), "stat"));
    }

    /** CPU nanoseconds in a process's or thread's {@code stat} file, or empty if it is gone or not readable. */
    private static OptionalLong statNanos(Path statFile) {
        try {
            String stat = Files.readString(statFile);
            // the command name (field 2) may contain spaces and parentheses: parse after the last ')'
            String[] f = stat.substring(stat.lastIndexOf(')') + 2).split(" ");
            long ticks = Long.parseLong(f[11]) + Long.parseLong(f[12]); // utime, stime
            return OptionalLong.of(ticks * 1_000_000_000L / TICKS_PER_SECOND);
        } catch (IOException | RuntimeException e) {
            return OptionalLong.empty();
        }
    }

    /** Command name of {@code pid} ({@code /proc/<pid>/comm}), or empty. */
    static String command(long pid) {
        try {
            return Files.readString(Path.of("/proc", Long.toString(pid), "comm")).trim();
        } catch (IOException e) {
            return "";
        }
    }

    /** This JVM's CPU nanoseconds: from /proc when there is one, else from the platform MXBean. */
    static long selfNanos() {
        OptionalLong fromProc = nanos(ProcessHandle.current().pid());
        if (fromProc.isPresent()) {
            return fromProc.getAsLong();
        }
        if (ManagementFactory.getOperatingSystemMXBean() instanceof com.sun.management.OperatingSystemMXBean os) {
            return os.getProcessCpuTime();
        }
        return -1;
    }

    /**
     * CPU nanoseconds this JVM's JIT compiler threads ({@code C1 CompilerThread*}, {@code C2
     * CompilerThread*}) have used so far, from {@code /proc/self/task/<tid>/stat}; 0 without /proc.
     * A compiler thread that HotSpot retires while idle takes its count with it, so across such an
     * exit the figure is a lower bound. A fresh JVM spends most of its first seconds' CPU here,
     * whichever code it happens to run.
     */
    static long selfJitNanos() {
        Path tasks = Path.of("/proc/self/task");
        if (!Files.isDirectory(tasks)) {
            return 0;
        }
        long nanos = 0;
        try (var threads = Files.list(tasks)) {
            for (Path task : (Iterable<Path>) threads::iterator) {
                String name;
                try {
                    name = Files.readString(task.resolve("comm")).trim();
                } catch (IOException e) {
                    continue; // the thread ended between the listing and the read
                }
                if (name.startsWith("C1 Compiler") || name.startsWith("C2 Compiler")) {
                    nanos += statNanos(task.resolve("stat")).orElse(0);
                }
            }
        } catch (IOException e) {
            return 0;
        }
        return nanos;
    }

    static long ticksPerSecond() {
        try {
            Process p = new ProcessBuilder("getconf", "CLK_TCK").redirectErrorStream(true).start();
            String out = new String(p.getInputStream().readAllBytes()).trim();
            if (p.waitFor(5, TimeUnit.SECONDS) && p.exitValue() == 0) {
                return Long.parseLong(out);
            }
        } catch (IOException | RuntimeException e) {
            // fall through to the Linux default
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        return 100;
    }
}
