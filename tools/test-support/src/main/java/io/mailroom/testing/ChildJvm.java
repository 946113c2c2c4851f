package io.mailroom.testing;

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
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;

/**
 * A main class of this JVM's class path in a child JVM, for the tools that run the services, fake
 * providers and dispatcher fleets as processes of their own (chaos, benchmarks).
 *
 * <p>The child's environment is this process's without any {@code MAILROOM_*} variable (a service
 * reads its whole configuration from them: nothing of the caller's may leak in) plus the given
 * variables (a null value removes one). Its stdout and stderr go to a log file, or, for a
 * {@linkplain Builder#controlled() controlled} child, only stderr does and stdin/stdout are a line
 * conversation with the parent. Every child ever started is remembered, and a shutdown hook kills
 * those still alive, so a harness that dies (or a test that fails) leaves no process behind.
 */
public final class ChildJvm implements AutoCloseable {

    private static final String OWN_PREFIX = "MAILROOM_";
    private static final Set<Process> ALIVE = ConcurrentHashMap.newKeySet();

    static {
        Runtime.getRuntime().addShutdownHook(new Thread(() -> ALIVE.forEach(Process::destroyForcibly),
                "kill-child-jvms"));
    }

    private final String name;
    private final Process process;
    private final Path log;
    private final long startedAtMillis;
    private final Writer stdin;
    private final BufferedReader stdout;

    private ChildJvm(String name, Process process, Path log, boolean controlled) {
        this.name = name;
        this.process = process;
        this.log = log;
        this.startedAtMillis = System.currentTimeMillis();
        this.stdin = controlled ? new OutputStreamWriter(process.getOutputStream(), StandardCharsets.UTF_8) : null;
        this.stdout = controlled
                ? new BufferedReader(new InputStreamReader(process.getInputStream(), StandardCharsets.UTF_8)) : null;
    }

    /** A child named {@code name} (in messages) that runs {@code mainClass}; nothing starts before {@link Builder#start()}. */
    public static Builder of(String name, String mainClass) {
        return new Builder(name, mainClass);
    }

    /** What to start; every list and map is copied. */
    public static final class Builder {
        private final String name;
        private final String mainClass;
        private List<String> jvmOptions = List.of();
        private List<String> args = List.of();
        private Map<String, String> env = Map.of();
        private Path log;
        private boolean appendLog;
        private boolean controlled;
        private String classPath;
        private List<String> launcher = List.of();

        private Builder(String name, String mainClass) {
            this.name = Objects.requireNonNull(name, "name");
            this.mainClass = Objects.requireNonNull(mainClass, "mainClass");
        }

        /** The child's class path instead of this JVM's (e.g. another build of the same programs, to compare). */
        public Builder classPath(String path) {
            this.classPath = Objects.requireNonNull(path, "path");
            return this;
        }

        /**
         * A command the JVM is started through, which must exec it in place (same pid), e.g.
         * {@code ip netns exec <namespace>}: a dispatcher "host" in a network namespace of its own.
         */
        public Builder launcher(List<String> command) {
            this.launcher = List.copyOf(command);
            return this;
        }

        public Builder jvmOptions(List<String> options) {
            this.jvmOptions = List.copyOf(options);
            return this;
        }

        public Builder args(List<String> arguments) {
            this.args = List.copyOf(arguments);
            return this;
        }

        /** Variables set for the child on top of this process's non-{@code MAILROOM_*} ones; a null value removes one. */
        public Builder env(Map<String, String> variables) {
            this.env = new HashMap<>(variables);
            return this;
        }

        /** The log file; replaced when it exists unless {@link #appendLog()}. Its folder is created. */
        public Builder log(Path file) {
            this.log = file;
            return this;
        }

        /** Appends to the log: for a child restarted under the same name, whose earlier lives must stay readable. */
        public Builder appendLog() {
            this.appendLog = true;
            return this;
        }

        /** Stdin and stdout are a line conversation with the parent ({@link #send}, {@link #expect}); stderr to the log. */
        public Builder controlled() {
            this.controlled = true;
            return this;
        }

        public ChildJvm start() {
            if (log == null) {
                throw new IllegalStateException(name + ": no log file given");
            }
            List<String> command = new ArrayList<>(launcher);
            command.add(ProcessHandle.current().info().command().orElse("java"));
            command.addAll(jvmOptions);
            command.add("-cp");
            command.add(classPath != null ? classPath : System.getProperty("java.class.path"));
            command.add(mainClass);
            command.addAll(args);
            ProcessBuilder pb = new ProcessBuilder(command);
            Map<String, String> childEnv = environment(pb.environment(), env);
            pb.environment().clear();
            pb.environment().putAll(childEnv);
            ProcessBuilder.Redirect toLog = appendLog
                    ? ProcessBuilder.Redirect.appendTo(log.toFile()) : ProcessBuilder.Redirect.to(log.toFile());
            if (controlled) {
                pb.redirectError(toLog);
            } else {
                pb.redirectErrorStream(true);
                pb.redirectOutput(toLog);
            }
            try {
                Path folder = log.toAbsolutePath().getParent();
                if (folder != null) {
                    Files.createDirectories(folder);
                }
                Process p = pb.start();
                ALIVE.add(p);
                p.onExit().thenRun(() -> ALIVE.remove(p));
                return new ChildJvm(name, p, log, controlled);
            } catch (IOException e) {
                throw new UncheckedIOException("cannot start " + name + " (" + mainClass + ")", e);
            }
        }
    }

    /** The child's environment: {@code inherited} less every {@code MAILROOM_*} variable, then {@code env} (null removes). */
    static Map<String, String> environment(Map<String, String> inherited, Map<String, String> env) {
        Map<String, String> result = new HashMap<>(inherited);
        result.keySet().removeIf(k -> k.startsWith(OWN_PREFIX));
        env.forEach((k, v) -> {
            if (v == null) {
                result.remove(k);
            } else {
                result.put(k, v);
            }
        });
        return result;
    }

    public String name() {
        return name;
    }

    public long pid() {
        return process.pid();
    }

    public Path log() {
        return log;
    }

    /** Wall-clock time the process was started, in epoch milliseconds. */
    public long startedAtMillis() {
        return startedAtMillis;
    }

    public boolean isAlive() {
        return process.isAlive();
    }

    /** Sends one line to a controlled child. */
    public void send(String line) throws IOException {
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
    public String expect(String prefix) throws IOException {
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

    /** SIGKILL: no shutdown hook runs, nothing is handed back. Waits until the process is gone. */
    public void kill9() {
        process.destroyForcibly();
        waitFor(10);
    }

    /** SIGTERM (a graceful stop for the services), SIGKILL after {@code seconds}. Returns the exit code, -1 if it would not die. */
    public int stop(int seconds) {
        if (process.isAlive()) {
            process.destroy();
            if (!waitFor(seconds)) {
                process.destroyForcibly();
                waitFor(10);
            }
        }
        return process.isAlive() ? -1 : process.exitValue();
    }

    @Override
    public void close() {
        stop(20);
    }

    private boolean waitFor(int seconds) {
        try {
            return process.waitFor(seconds, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            process.destroyForcibly();
            return false;
        }
    }
}
