package io.mailroom.outbox.runtime;

import io.mailroom.outbox.DispatcherSessions;
import io.mailroom.outbox.Durations;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

/**
 * This dispatcher's row in the {@link DispatcherRegistry}, renewed at every heartbeat interval,
 * and the watch on unserved topics that comes with it: emails waiting on a topic no live
 * dispatcher serves are logged when first seen, every {@link #LOG_AGAIN_EVERY} while it lasts,
 * and once when it ends.
 */
final class Registration {

    private static final Logger log = LoggerFactory.getLogger(Registration.class);
    /** How often a topic that stays unserved is logged again. */
    static final Duration LOG_AGAIN_EVERY = Duration.ofMinutes(10);
    /** This host, as the registry shows it. */
    static final String HOST = hostName();
    /** This build's version, as the registry shows it ("dev" outside a packaged jar). */
    static final String VERSION = Objects.requireNonNullElse(Dispatcher.class.getPackage().getImplementationVersion(), "dev");

    private final DispatcherSessions sessions;
    private final DispatcherConfig config;
    private final Set<String> topics;
    private final String incarnation;
    /** Topics seen unserved, and when each was last logged. */
    private final Map<String, Instant> logged = new ConcurrentHashMap<>();

    Registration(DispatcherSessions sessions, DispatcherConfig config, Set<String> topics, String incarnation) {
        this.sessions = sessions;
        this.config = config;
        this.topics = Set.copyOf(topics);
        this.incarnation = incarnation;
    }

    /** One heartbeat: the row renewed, then the unserved topics looked for. */
    void beat() {
        sessions.inTransaction(tx -> {
            DispatcherRegistry.beat(tx, config.workerId(), incarnation, HOST, VERSION, topics, config.heartbeatInterval());
            return null;
        });
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
