package io.mailroom.chaos;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;

/**
 * A Java main class in a child JVM with this JVM's class path, its output in a log file. Every child
 * ever started is remembered, and a shutdown hook kills those still alive, so a harness that dies
 * (or a test that fails) leaves no orphan dispatcher behind.
 */
final class ChildJvm {

    private static final Set<Process> ALIVE = ConcurrentHashMap.newKeySet();

    static {
        Runtime.getRuntime().addShutdownHook(new Thread(() -> ALIVE.forEach(Process::destroyForcibly), "kill-chaos-children"));
    }

    private final String name;
    private final Process process;
    private final Path log;
    private final long startedAtMillis;

    private ChildJvm(String name, Process process, Path log, long startedAtMillis) {
        this.name = name;
        this.process = process;
        this.log = log;
        this.startedAtMillis = startedAtMillis;
    }

    /**
     * Starts {@code mainClass} with {@code args}; the environment is this process's plus {@code env}
     * (a null value removes a variable).
     */
    static ChildJvm start(String name, List<String> jvmOptions, String mainClass, List<String> args,
                          Map<String, String> env, Path log) {
        String java = ProcessHandle.current().info().command().orElse("java");
        List<String> command = new ArrayList<>();
        command.add(java);
        command.addAll(jvmOptions);
        command.add("-cp");
        command.add(System.getProperty("java.class.path"));
        command.add(mainClass);
        command.addAll(args);
        ProcessBuilder pb = new ProcessBuilder(command);
        env.forEach((k, v) -> {
            if (v == null) {
                pb.environment().remove(k);
            } else {
                pb.environment().put(k, v);
            }
        });
        pb.redirectErrorStream(true);
        pb.redirectOutput(ProcessBuilder.Redirect.appendTo(log.toFile()));
        try {
            Process p = pb.start();
            ALIVE.add(p);
            p.onExit().thenRun(() -> ALIVE.remove(p));
            return new ChildJvm(name, p, log, System.currentTimeMillis());
        } catch (IOException e) {
            throw new UncheckedIOException("cannot start " + name, e);
        }
    }

    String name() {
        return name;
    }

    Path log() {
        return log;
    }

    long pid() {
        return process.pid();
    }

    long startedAtMillis() {
        return startedAtMillis;
    }

    boolean isAlive() {
        return process.isAlive();
    }

    /** SIGKILL: no shutdown hook runs, nothing is handed back. Waits until the process is gone. */
    void kill9() {
        process.destroyForcibly();
        waitFor(10);
    }

    /** SIGTERM, then SIGKILL if it has not stopped within {@code seconds}. Returns the exit code. */
    int stop(int seconds) {
        process.destroy();
        if (!waitFor(seconds)) {
            process.destroyForcibly();
            waitFor(10);
        }
        return process.isAlive() ? -1 : process.exitValue();
    }

    private boolean waitFor(int seconds) {
        try {
            return process.waitFor(seconds, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return false;
        }
    }
}
