package io.mailroom.bench;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.OutputStreamWriter;
import java.io.UncheckedIOException;
import java.io.Writer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;

/**
 * A main class of this class path in a child JVM: the services of scenarios 3 to 5 (order service,
 * dispatcher service) and the loopback provider they send to, each in a process of its own so that
 * its CPU is read from its own {@code /proc/<pid>/stat} and no JIT, GC or scheduler is shared with
 * the load generator.
 *
 * <p>The child's environment is this process's without any {@code MAILROOM_*} variable (a service
 * reads its whole configuration from them: nothing of the caller's may leak in) plus {@code env}.
 * Its stderr goes to {@code log} (replaced if it exists); its stdout too, unless it is {@link #controlled} (then stdout and
 * stdin are a line conversation with the parent, as with {@link DispatcherWorkerMain}). A shutdown
 * hook kills whatever is still running, so a failed run leaves no service behind holding a port.
 */
final class ChildJvm implements AutoCloseable {

    private static final Set<Process> ALIVE = ConcurrentHashMap.newKeySet();

    static {
        Runtime.getRuntime().addShutdownHook(new Thread(() -> ALIVE.forEach(Process::destroyForcibly),
                "bench-kill-children"));
    }

    private final String name;
    private final Process process;
    private final Path log;
    private final Writer stdin;
    private final BufferedReader stdout;

    private ChildJvm(String name, Process process, Path log, boolean controlled) {
        this.name = name;
        this.process = process;
        this.log = log;
        this.stdin = controlled ? new OutputStreamWriter(process.getOutputStream(), StandardCharsets.UTF_8) : null;
        this.stdout = controlled
                ? new BufferedReader(new InputStreamReader(process.getInputStream(), StandardCharsets.UTF_8)) : null;
    }

    /** A service: output to {@code log}, no conversation. */
    static ChildJvm start(String name, List<String> jvmOptions, String mainClass, List<String> args,
                          Map<String, String> env, Path log) {
        return start(name, jvmOptions, mainClass, args, env, log, false);
    }

    /** A child that talks with the parent in lines on stdin/stdout; stderr to {@code log}. */
    static ChildJvm controlled(String name, List<String> jvmOptions, String mainClass, List<String> args,
                               Map<String, String> env, Path log) {
        return start(name, jvmOptions, mainClass, args, env, log, true);
    }

    private static ChildJvm start(String name, List<String> jvmOptions, String mainClass, List<String> args,
                                  Map<String, String> env, Path log, boolean controlled) {
        List<String> command = new ArrayList<>();
        command.add(ProcessHandle.current().info().command().orElse("java"));
        command.addAll(jvmOptions);
        // warnings only, to stderr: the services' own logback.xml would log a line per order and per email
        command.add("-D" + Logging.CONFIG_PROPERTY + "=" + Logging.CONFIG_RESOURCE);
        command.add("-cp");
        command.add(System.getProperty("java.class.path"));
        command.add(mainClass);
        command.addAll(args);
        ProcessBuilder pb = new ProcessBuilder(command);
        pb.environment().keySet().removeIf(k -> k.startsWith("MAILROOM_"));
        pb.environment().putAll(env);
        try {
            Files.createDirectories(log.toAbsolutePath().getParent());
            if (controlled) {
                pb.redirectError(ProcessBuilder.Redirect.to(log.toFile()));
            } else {
                pb.redirectErrorStream(true);
                pb.redirectOutput(ProcessBuilder.Redirect.to(log.toFile()));
            }
            Process p = pb.start();
            ALIVE.add(p);
            p.onExit().thenRun(() -> ALIVE.remove(p));
            return new ChildJvm(name, p, log, controlled);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot start " + name + " (" + mainClass + ")", e);
        }
    }

    String name() {
        return name;
    }

    long pid() {
        return process.pid();
    }

    Path log() {
        return log;
    }

    boolean isAlive() {
        return process.isAlive();
    }

    /** Sends one line to a controlled child. */
    void send(String line) throws IOException {
        if (stdin == null) {
            throw new IllegalStateException(name + " is not a controlled child");
        }
        stdin.write(line + "\n");
        stdin.flush();
    }

    /**
     * The next line of a controlled child starting with {@code prefix}; anything else a library
     * prints on stdout is skipped.
     */
    String expect(String prefix) throws IOException {
        if (stdout == null) {
            throw new IllegalStateException(name + " is not a controlled child");
        }
        String line;
        do {
            line = stdout.readLine();
        } while (line != null && !line.startsWith(prefix));
        if (line == null) {
            throw new IllegalStateException(name + " ended before answering " + prefix + "; see its log " + log);
        }
        return line;
    }

    /** SIGTERM (a graceful stop for the services), SIGKILL after {@code seconds}. */
    void stop(int seconds) {
        if (!process.isAlive()) {
            return;
        }
        process.destroy();
        try {
            if (!process.waitFor(seconds, TimeUnit.SECONDS)) {
                process.destroyForcibly();
                process.waitFor(10, TimeUnit.SECONDS);
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            process.destroyForcibly();
        }
    }

    @Override
    public void close() {
        stop(20);
    }
}
