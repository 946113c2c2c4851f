package io.mailroom.support;

import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * The model of the console's dispatchers page ({@code dispatchers.peb}): every dispatcher process,
 * live ones first and a dead one marked, each transport's breaker in words, every topic with its
 * pause switch, and the banner of topics no live dispatcher serves.
 */
final class ConsoleDispatchers {

    /** Where the page's forms send the person back to. */
    static final String PATH = "/console/dispatchers";

    private ConsoleDispatchers() {
    }

    /** One dispatcher as a row shows it; {@code heartbeatAgo} is the time since its last heartbeat, in words. */
    public record Row(DispatcherList.DispatcherView dispatcher, String heartbeatAgo, List<ConsolePages.Breaker> transports) {
    }

    /** One topic as a row shows it; {@code served} says by how many live dispatchers, in words. */
    public record TopicRow(DispatcherList.Topic topic, String served) {
    }

    static Map<String, Object> model(DispatcherList list) {
        Map<String, Object> m = new HashMap<>();
        m.put("at", list.at());
        m.put("live", list.liveCount());
        m.put("total", list.dispatchers().size());
        m.put("rows", list.dispatchers().stream().map(d -> new Row(d, ago(list, d),
                d.transports().stream().map(t -> new ConsolePages.Breaker(t.transport(), ConsolePages.breakerWords(t.breaker())))
                        .toList())).toList());
        m.put("topics", list.topics().stream().map(t -> new TopicRow(t, served(t.servedBy()))).toList());
        m.put("unserved", unserved(list.unservedTopics()));
        m.put("pausedAll", list.pausedAll());
        m.put("back", PATH);
        return m;
    }

    /** "3 on email.x" for each topic no live dispatcher serves: the banner's words. */
    static List<String> unserved(Map<String, Long> unserved) {
        return unserved.entrySet().stream().map(e -> e.getValue() + " on " + e.getKey()).toList();
    }

    private static String ago(DispatcherList list, DispatcherList.DispatcherView d) {
        if (list.at() == null || d.lastHeartbeatAt() == null) {
            return "–";
        }
        return ConsolePages.ago(Math.max(0, Duration.between(d.lastHeartbeatAt(), list.at()).toSeconds()));
    }

    private static String served(int n) {
        return switch (n) {
            case 0 -> "no live dispatcher";
            case 1 -> "1 dispatcher";
            default -> n + " dispatchers";
        };
    }
}
