package io.mailroom.chaos;

import io.mailroom.email.service.MailroomCli;
import io.mailroom.testing.ChildJvm;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;

/**
 * The dispatcher processes of a run: {@code mailroom dispatcher run} in child JVMs, one per slot.
 * A slot keeps its health port across restarts; each incarnation has its own worker id and
 * {@code application_name} ({@code chaos-d2.r3}: slot 2, third start) and its own log, so claims,
 * sessions and breaker transitions can be traced to the process that made them.
 */
final class DispatcherFleet implements AutoCloseable {

    /** Every dispatcher session's {@code application_name} starts with this. */
    static final String APPLICATION_PREFIX = "chaos-d";

    /** One process of one slot, from start to death. */
    static final class Incarnation {
        final int slot;
        final int number;
        final String workerId;
        final ChildJvm jvm;
        final long startedAtMillis;
        volatile long endedAtMillis = Long.MAX_VALUE;
        volatile boolean killed;

        Incarnation(int slot, int number, String workerId, ChildJvm jvm) {
            this.slot = slot;
            this.number = number;
            this.workerId = workerId;
            this.jvm = jvm;
            this.startedAtMillis = jvm.startedAtMillis();
        }
    }

    /** A place for one dispatcher; its process may be dead between a kill and the restart. */
    static final class Slot {
        final int index;
        final int healthPort;
        final List<Incarnation> history = new CopyOnWriteArrayList<>();
        volatile Incarnation current;

        Slot(int index, int healthPort) {
            this.index = index;
            this.healthPort = healthPort;
        }

        boolean alive() {
            Incarnation c = current;
            return c != null && c.jvm.isAlive();
        }
    }

    private final List<Slot> slots = new ArrayList<>();
    private final String jdbcUrl;
    private final Map<String, String> env;
    private final Path dir;
    private final HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(1)).build();

    /**
     * @param jdbcUrl JDBC URL with credentials; each incarnation adds its {@code ApplicationName}
     * @param env     the transport's and the policies' MAILROOM_* settings
     */
    DispatcherFleet(int size, String jdbcUrl, Map<String, String> env, Path dir) {
        this.jdbcUrl = jdbcUrl;
        this.env = new HashMap<>(env); // null values remove a variable from the child's environment
        this.dir = dir;
        for (int i = 1; i <= size; i++) {
            slots.add(new Slot(i, freePort()));
        }
    }

    List<Slot> slots() {
        return slots;
    }

    List<Incarnation> incarnations() {
        List<Incarnation> all = new ArrayList<>();
        slots.forEach(s -> all.addAll(s.history));
        return all;
    }

    synchronized Incarnation start(Slot slot) {
        int number = slot.history.size() + 1;
        String worker = APPLICATION_PREFIX + slot.index + ".r" + number;
        Map<String, String> childEnv = new HashMap<>(env);
        childEnv.put("MAILROOM_DB_URL", jdbcUrl + (jdbcUrl.contains("?") ? "&" : "?") + "ApplicationName=" + worker);
        childEnv.put("MAILROOM_WORKER_ID", worker);
        childEnv.put("MAILROOM_DISPATCHER_HOST", "127.0.0.1");
        childEnv.put("MAILROOM_DISPATCHER_PORT", Integer.toString(slot.healthPort));
        childEnv.put("MAILROOM_MIGRATE", "false");
        ChildJvm jvm = ChildJvm.of(worker, MailroomCli.class.getName())
                .jvmOptions(List.of("-Xmx192m", "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1",
                        "--enable-native-access=ALL-UNNAMED", "-Dlogback.configurationFile=chaos-dispatcher-logback.xml"))
                .args(List.of("dispatcher", "run")).env(childEnv).log(dir.resolve(worker + ".log")).appendLog().start();
        Incarnation inc = new Incarnation(slot.index, number, worker, jvm);
        slot.history.add(inc);
        slot.current = inc;
        return inc;
    }

    /** {@code kill -9} of the slot's process; returns it, or null if the slot had none alive. */
    Incarnation kill9(Slot slot) {
        Incarnation inc = slot.current;
        if (inc == null || !inc.jvm.isAlive()) {
            return null;
        }
        inc.killed = true;
        inc.jvm.kill9();
        inc.endedAtMillis = System.currentTimeMillis();
        return inc;
    }

    /** Waits until every slot's current process answers {@code /health/live}. */
    void awaitLive(Duration max) throws InterruptedException {
        long deadline = System.nanoTime() + max.toNanos();
        for (Slot s : slots) {
            while (!live(s)) {
                if (s.current != null && !s.current.jvm.isAlive()) {
                    throw new IllegalStateException("dispatcher " + s.current.workerId + " exited during start-up; see "
                            + s.current.jvm.log());
                }
                if (System.nanoTime() > deadline) {
                    throw new IllegalStateException("dispatcher " + (s.current == null ? s.index : s.current.workerId)
                            + " did not answer /health/live within " + max);
                }
                Thread.sleep(200);
            }
        }
    }

    boolean live(Slot s) {
        return get(s, "/health/live", Duration.ofSeconds(1)) != null;
    }

    /** The body of {@code path} on the slot's health port, or null if it did not answer 200/503 in time. */
    String get(Slot s, String path, Duration timeout) {
        try {
            HttpResponse<String> r = http.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + s.healthPort + path))
                    .timeout(timeout).GET().build(), HttpResponse.BodyHandlers.ofString());
            return r.statusCode() == 200 || r.statusCode() == 503 ? r.body() : null;
        } catch (IOException e) {
            return null;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return null;
        }
    }

    /** SIGTERM to every process (graceful stop), SIGKILL after {@code seconds}. */
    void stopAll(int seconds) {
        List<Thread> stoppers = new ArrayList<>();
        for (Slot s : slots) {
            Incarnation inc = s.current;
            if (inc != null && inc.jvm.isAlive()) {
                stoppers.add(Thread.ofPlatform().start(() -> {
                    inc.jvm.stop(seconds);
                    inc.endedAtMillis = System.currentTimeMillis();
                }));
            }
        }
        for (Thread t : stoppers) {
            try {
                t.join();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
    }

    @Override
    public void close() {
        for (Slot s : slots) {
            for (Incarnation inc : s.history) {
                if (inc.jvm.isAlive()) {
                    inc.jvm.kill9();
                    inc.endedAtMillis = System.currentTimeMillis();
                }
            }
        }
        http.close();
    }

    static int freePort() {
        try (ServerSocket s = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            return s.getLocalPort();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
