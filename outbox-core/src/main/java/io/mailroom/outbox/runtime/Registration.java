package io.mailroom.outbox.runtime;

import io.mailroom.db.sql.SqlStates;
import io.mailroom.outbox.DispatcherSessions;
import io.mailroom.outbox.Durations;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.IntSupplier;
import java.util.function.Supplier;

/**
 * This dispatcher's row in the {@link DispatcherRegistry}, renewed at every heartbeat interval,
 * and the watch on unserved topics that comes with it: emails waiting on a topic no live
 * dispatcher serves are logged when first seen, every {@link #LOG_AGAIN_EVERY} while it lasts,
 * and once when it ends. Each beat writes the claims held at that moment and the details the
 * embedding process supplies ({@link Dispatcher#registrationDetails}); details that cannot be
 * stored (too long, not a JSON object, a supplier that throws) are left out of the row, with a
 * warning, and never cost the beat itself.
 */
final class Registration {

    private static final Logger log = LoggerFactory.getLogger(Registration.class);
    /** How often a topic that stays unserved is logged again. */
    static final Duration LOG_AGAIN_EVERY = Duration.ofMinutes(10);
    /** This host, as the registry shows it. */
    static final String HOST = hostName();
    /** This build's version, as the registry shows it ("dev" outside a packaged jar). */
    static final String VERSION = Objects.requireNonNullElse(Dispatcher.class.getPackage().getImplementationVersion(), "dev");
    /** The most details one row carries (its text as given; the database bounds the stored form at twice this). */
    static final int MAX_DETAILS_BYTES = 4096;

    private final DispatcherSessions sessions;
    private final DispatcherConfig config;
    private final Set<String> topics;
    private final String incarnation;
    private final IntSupplier claimsInFlight;
    /** The embedding process's details, read at every beat; null: none. */
    private volatile Supplier<String> details;
    /** Whether unusable details were already warned about (later ones are logged at debug). */
    private volatile boolean detailsWarned;
    /** Topics seen unserved, and when each was last logged. */
    private final Map<String, Instant> logged = new ConcurrentHashMap<>();

    Registration(DispatcherSessions sessions, DispatcherConfig config, Set<String> topics, String incarnation,
                 IntSupplier claimsInFlight) {
        this.sessions = sessions;
        this.config = config;
        this.topics = Set.copyOf(topics);
        this.incarnation = incarnation;
        this.claimsInFlight = claimsInFlight;
    }

    /** What each beat reports as details from now on; null: nothing. */
    void details(Supplier<String> json) {
        this.details = json;
    }

    /** One heartbeat: the row renewed, then the unserved topics looked for. */
    void beat() {
        String json = details();
        try {
            write(json);
        } catch (RuntimeException e) {
            String state = SqlStates.sqlState(e);
            if (json == null || state == null
                    || !(state.startsWith(SqlStates.DATA_EXCEPTION_CLASS) || state.equals("23514"))) {
                throw e;
            }
            unusable("the database refused them (SQLSTATE " + state + ")", e);
            write(null);
        }
        Map<String, Long> unserved = sessions.inTransaction(DispatcherRegistry::unservedTopics);
        Instant now = Instant.now();
        unserved.forEach((topic, waiting) -> {
            Instant last = logged.get(topic);
            if (last == null || Duration.between(last, now).compareTo(LOG_AGAIN_EVERY) >= 0) {
                log.warn("{}{} emails on topic {} have waited more than {} and no running dispatcher serves it (this one,"
                                + " {}, serves {}): start one that does (its template in MAILROOM_TEMPLATES_DIR, or a line"
                                + " in MAILROOM_TOPICS), or cancel them",
                        waiting >= DispatcherRegistry.DEFAULT_SCAN_LIMIT ? "At least " : "", waiting, topic,
                        Durations.format(DispatcherRegistry.DEFAULT_UNSERVED_AFTER), config.workerId(),
                        topics.stream().sorted().toList());
                logged.put(topic, now);
            }
        });
        for (String topic : List.copyOf(logged.keySet())) {
            if (!unserved.containsKey(topic)) {
                logged.remove(topic);
                log.info("Topic {} no longer has emails waiting without a dispatcher", topic);
            }
        }
    }

    private void write(String json) {
        int claims = claimsInFlight.getAsInt();
        sessions.inTransaction(tx -> {
            DispatcherRegistry.beat(tx, config.workerId(), incarnation, HOST, VERSION, topics, config.heartbeatInterval(),
                    claims, json);
            return null;
        });
    }

    /** The details to write now: the supplier's JSON if it gives one that fits, else null. */
    String details() {
        Supplier<String> supplier = details;
        if (supplier == null) {
            return null;
        }
        String json;
        try {
            json = supplier.get();
        } catch (RuntimeException e) {
            unusable("their supplier failed", e);
            return null;
        }
        if (json == null || json.isBlank()) {
            return null;
        }
        int bytes = json.getBytes(StandardCharsets.UTF_8).length;
        if (bytes > MAX_DETAILS_BYTES) {
            unusable(bytes + " bytes is more than " + MAX_DETAILS_BYTES, null);
            return null;
        }
        return json;
    }

    private void unusable(String why, Exception e) {
        if (detailsWarned) {
            log.debug("Registry details of {} left out: {}", config.workerId(), why, e);
            return;
        }
        detailsWarned = true;
        log.warn("The details dispatcher {} reports in the registry are left out of its row ({}); the row itself is"
                + " written. Said once; later ones are logged at debug", config.workerId(), why, e);
    }

    /** A graceful stop: the row goes at once rather than when it expires. */
    void remove() {
        try {
            sessions.inTransaction(tx -> {
                DispatcherRegistry.remove(tx, config.workerId(), incarnation);
                return null;
            });
        } catch (RuntimeException e) {
            log.debug("Could not remove {} from the dispatcher registry; its row expires by itself", config.workerId(), e);
        }
    }

    private static String hostName() {
        try {
            return java.net.InetAddress.getLocalHost().getHostName();
        } catch (java.io.IOException | RuntimeException e) {
            return "unknown";
        }
    }
}
