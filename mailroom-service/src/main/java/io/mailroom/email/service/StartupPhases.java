package io.mailroom.email.service;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.lang.management.ManagementFactory;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentSkipListMap;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * Where a dispatcher's start-up time goes, measured from the JVM's own start: each phase's
 * duration (phases may overlap: the templates are checked while the database is awaited), one
 * line at ready, and one at the first claim. Restarted dispatchers took a median 8 s to be ready
 * under load; this line says which phase to look at.
 */
final class StartupPhases {

    private static final Logger log = LoggerFactory.getLogger(StartupPhases.class);

    private final long jvmStartMillis = ManagementFactory.getRuntimeMXBean().getStartTime();
    private final long createdMillis = System.currentTimeMillis();
    private final Map<String, Long> started = new ConcurrentHashMap<>();
    /** The phases by the order they ended in (their durations are in {@link #took}). */
    private final Map<Long, String> endedInOrder = new ConcurrentSkipListMap<>();
    private final Map<String, Long> took = new ConcurrentHashMap<>();
    private final AtomicBoolean firstClaimSeen = new AtomicBoolean();
    private final java.util.concurrent.atomic.AtomicLong order = new java.util.concurrent.atomic.AtomicLong();

    void begin(String phase) {
        started.put(phase, System.nanoTime());
    }

    void end(String phase) {
        Long at = started.get(phase);
        if (at != null) {
            took.put(phase, (System.nanoTime() - at) / 1_000_000);
            endedInOrder.put(order.incrementAndGet(), phase);
        }
    }

    /** Milliseconds since the JVM started. */
    long sinceJvmStart() {
        return System.currentTimeMillis() - jvmStartMillis;
    }

    /** The line logged at ready: the JVM's own start (class loading before main), then each phase. */
    String summary() {
        StringBuilder s = new StringBuilder("Start-up took ").append(sinceJvmStart()).append(" ms from the JVM's start: JVM until start() ")
                .append(createdMillis - jvmStartMillis).append(" ms");
        for (String phase : endedInOrder.values()) {
            s.append(", ").append(phase).append(' ').append(took.get(phase)).append(" ms");
        }
        return s.toString();
    }

    void ready() {
        log.info("{}", summary());
    }

    /** Once: the first claim statement ran. */
    void claimed() {
        if (firstClaimSeen.compareAndSet(false, true)) {
            log.info("First claim {} ms after the JVM's start", sinceJvmStart());
        }
    }
}
