package io.mailroom.support;

import io.mailroom.email.resilience.BreakerReport;
import io.mailroom.outbox.admin.Dispatchers;
import io.mailroom.outbox.admin.OutboxControl;

import java.time.Instant;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeSet;

/**
 * The running dispatchers and the topics, read at {@code at} (database time): what
 * {@code GET /api/dispatchers}, the console's dispatchers page and {@code support dispatchers} show.
 *
 * @param dispatchers    every process in the registry, the live ones first; one that stopped without
 *                       removing its row stays, not live, for a day
 * @param unservedTopics topics with emails due for over a minute that no live dispatcher serves, with
 *                       how many wait on each (among the oldest due emails: a lower bound on a long queue)
 * @param topics         every topic a dispatcher serves, that has a pause switch, or that emails wait on
 *                       unserved, by name
 * @param pausedAll      the switch pausing everything ({@code *}), or null while sending runs
 */
public record DispatcherList(Instant at, List<DispatcherView> dispatchers, Map<String, Long> unservedTopics,
                             List<Topic> topics, ControlState.Switch pausedAll) {

    public DispatcherList {
        dispatchers = List.copyOf(dispatchers);
        unservedTopics = Collections.unmodifiableMap(new LinkedHashMap<>(unservedTopics));
        topics = List.copyOf(topics);
    }

    /**
     * One dispatcher process, as of its last heartbeat.
     *
     * @param live            whether its last heartbeat is recent enough (three of its heartbeat intervals),
     *                        by the database's clock
     * @param claimsInFlight  the emails it held (sending, or outcome not yet written) at its last heartbeat
     * @param transports      each mail transport's circuit breaker at its last heartbeat; empty when the
     *                        process reports none
     * @param topics          the topics it serves, sorted
     */
    public record DispatcherView(String workerId, String host, String version, Instant startedAt, Instant lastHeartbeatAt,
                                 Instant expiresAt, boolean live, int claimsInFlight,
                                 List<TransportStatus.TransportState> transports, List<String> topics) {
        public DispatcherView {
            transports = List.copyOf(transports);
            topics = List.copyOf(topics);
        }
    }

    /**
     * One topic.
     *
     * @param servedBy        how many live dispatchers serve it
     * @param pause           its own pause switch while paused, else null (everything paused: see {@link #pausedAll})
     * @param waitingUnserved emails due on it that no live dispatcher serves, or null when it is served
     */
    public record Topic(String topic, int servedBy, ControlState.Switch pause, Long waitingUnserved) {
    }

    /** How many dispatchers are live. */
    public long liveCount() {
        return dispatchers.stream().filter(DispatcherView::live).count();
    }

    static DispatcherList of(Dispatchers.Snapshot registry, Map<String, Long> unserved, List<ControlState.Switch> switches) {
        List<DispatcherView> views = new ArrayList<>();
        for (Dispatchers.Entry e : registry.dispatchers()) {
            List<TransportStatus.TransportState> transports = BreakerReport.parse(e.details()).stream()
                    .map(s -> new TransportStatus.TransportState(s.transport(), s.breaker())).toList();
            views.add(new DispatcherView(e.workerId(), e.host(), e.version(), e.startedAt(), e.heartbeatAt(), e.expiresAt(),
                    e.live(), e.claimsInFlight(), transports, e.topics()));
        }
        TreeSet<String> names = new TreeSet<>(unserved.keySet());
        registry.dispatchers().forEach(e -> names.addAll(e.topics()));
        ControlState.Switch all = null;
        Map<String, ControlState.Switch> paused = new LinkedHashMap<>();
        for (ControlState.Switch s : switches) {
            if (s.scope().equals(OutboxControl.ALL)) {
                all = s.paused() ? s : null;
            } else {
                names.add(s.scope()); // a topic once paused stays listed, running
                if (s.paused()) {
                    paused.put(s.scope(), s);
                }
            }
        }
        List<Topic> topics = new ArrayList<>();
        for (String name : names) {
            int servedBy = (int) registry.dispatchers().stream().filter(e -> e.live() && e.topics().contains(name)).count();
            topics.add(new Topic(name, servedBy, paused.get(name), unserved.get(name)));
        }
        return new DispatcherList(registry.at(), views, unserved, topics, all);
    }
}
