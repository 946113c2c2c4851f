package io.mailroom.chaos;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.json.JsonMapper;
import org.jooq.DSLContext;
import org.jooq.SQLDialect;
import org.jooq.impl.DSL;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import javax.sql.DataSource;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Polls every dispatcher's {@code /health/ready} (field {@code breaker}) a few times a second.
 *
 * <p>While <em>every</em> live dispatcher reports its breaker {@code OPEN}, nobody may claim, so no
 * message's {@code attempts} may grow: on the first such poll the watch snapshots
 * {@code (id, attempts)} of every outbox row into its own table, and on every later poll of the same
 * stretch counts the rows whose attempts grew since (new rows with attempts above zero included).
 * {@link ChaosCheck} takes the last count before any breaker of the stretch changed state (from the
 * logs: a half-open probe may claim, legitimately) as the comparison "at open and at close".
 */
final class BreakerWatch implements AutoCloseable {

    private static final Logger log = LoggerFactory.getLogger(BreakerWatch.class);
    private static final JsonMapper JSON = JsonMapper.builder().build();

    /** One stretch during which every live dispatcher reported OPEN. */
    static final class Stretch {
        final long startMillis;
        /** Each comparison with the snapshot: {time the query had finished, messages whose attempts grew}. */
        final List<long[]> checks = new java.util.concurrent.CopyOnWriteArrayList<>();
        volatile List<String> grownKeys = List.of();

        Stretch(long startMillis) {
            this.startMillis = startMillis;
        }
    }

    private final DispatcherFleet fleet;
    private final DSLContext dsl;
    private final Duration every;
    /** Workers seen with their breaker OPEN, and when first. */
    private final Map<String, Long> seenOpen = new ConcurrentHashMap<>();
    private final Map<String, Integer> observations = new ConcurrentHashMap<>();
    private final List<Stretch> stretches = new ArrayList<>();
    private volatile boolean running = true;
    private final Thread thread;
    private Stretch current;
    private long allOpenSince = -1;

    BreakerWatch(DispatcherFleet fleet, DataSource dataSource, Duration every) {
        this.fleet = fleet;
        this.dsl = DSL.using(dataSource, SQLDialect.POSTGRES);
        this.every = every;
        this.thread = Thread.ofPlatform().name("chaos-breaker-watch").start(this::loop);
    }

    private void loop() {
        while (running) {
            long tick = System.currentTimeMillis();
            try {
                poll(tick);
            } catch (RuntimeException e) {
                log.debug("Breaker poll failed: {}", e.toString());
                allOpenSince = -1;
                endStretch();
            }
            long sleep = every.toMillis() - (System.currentTimeMillis() - tick);
            if (sleep > 0) {
                try {
                    Thread.sleep(sleep);
                } catch (InterruptedException e) {
                    return;
                }
            }
        }
    }

    private void poll(long tick) {
        int live = 0;
        int open = 0;
        for (DispatcherFleet.Slot s : fleet.slots()) {
            DispatcherFleet.Incarnation inc = s.current;
            if (inc == null || !inc.jvm.isAlive()) {
                continue;
            }
            live++;
            String body = fleet.get(s, "/health/ready", Duration.ofMillis(800));
            String breaker = breaker(body);
            if (breaker == null) {
                continue; // no answer: unknown, so not known to be open
            }
            observations.merge(inc.workerId + " " + breaker, 1, Integer::sum);
            if (breaker.equals("OPEN")) {
                open++;
                seenOpen.putIfAbsent(inc.workerId, tick);
            }
        }
        if (live > 0 && open == live) {
            if (allOpenSince < 0) {
                allOpenSince = tick;
            }
            // A claim that passed the gate just before the last breaker opened may still commit
            // (and count its attempt) a moment later: snapshot only once every breaker has been
            // open for the grace period.
            if (tick - allOpenSince < ChaosCheck.BREAKER_GRACE_MILLIS) {
                return;
            }
            if (current == null) {
                dsl.execute("DROP TABLE IF EXISTS chaos_attempts_at_open");
                dsl.execute("CREATE TABLE chaos_attempts_at_open AS SELECT id, created_at, idempotency_key, attempts FROM mailroom.outbox_message");
                current = new Stretch(tick);
                synchronized (stretches) {
                    stretches.add(current);
                }
            } else {
                List<String> grown = dsl.fetch("""
                        SELECT m.idempotency_key FROM mailroom.outbox_message m
                        LEFT JOIN chaos_attempts_at_open s ON s.id = m.id AND s.created_at = m.created_at
                        WHERE m.attempts > coalesce(s.attempts, 0)
                        LIMIT 20""").getValues(0, String.class);
                current.checks.add(new long[]{System.currentTimeMillis(), grown.size()});
                if (!grown.isEmpty()) {
                    current.grownKeys = grown;
                }
            }
        } else {
            allOpenSince = -1;
            endStretch();
        }
    }

    private void endStretch() {
        current = null;
    }

    static String breaker(String readyBody) {
        if (readyBody == null) {
            return null;
        }
        try {
            JsonNode b = JSON.readTree(readyBody).get("breaker");
            return b == null || !b.isTextual() ? null : b.textValue();
        } catch (java.io.IOException e) {
            return null;
        }
    }

    Map<String, Long> seenOpen() {
        return Map.copyOf(seenOpen);
    }

    Map<String, Integer> observations() {
        return Map.copyOf(observations);
    }

    List<Stretch> stretches() {
        synchronized (stretches) {
            return List.copyOf(stretches);
        }
    }

    @Override
    public void close() {
        running = false;
        thread.interrupt();
        try {
            thread.join(5000);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
