package io.mailroom.email.dispatch;

import io.mailroom.db.sql.SqlStates;
import io.mailroom.email.resilience.ResilientTransport;
import io.mailroom.outbox.runtime.WaitingMessages;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.ArrayList;
import java.util.Collection;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * Sends the emails a transport's breaker held back as soon as it lets calls through again, instead
 * of when their hand-back's wait is over. An email the breaker refused goes back to the queue for
 * the rest of the open wait, marked as {@link #waitingFor waiting for} that breaker; when the
 * breaker goes HALF_OPEN or CLOSED (or an operator resumes a halted transport), this wakes the
 * dispatcher's claimers at once (the gate lets them claim again) and, on a thread of its own,
 * makes the marked emails of the transport's topics available now and notifies the other
 * dispatchers. In a fleet each dispatcher has its own breaker; the first whose breaker lets calls
 * through releases the emails every dispatcher handed back for that transport, and each claims
 * only while its own breaker allows. A hand-back that commits just after the release keeps its
 * wait, which is then short (the rest of the open wait, or a second while half-open), and the
 * next transition releases it too.
 */
public final class BreakerRecovery {

    private static final Logger log = LoggerFactory.getLogger(BreakerRecovery.class);
    private static final String PREFIX = "breaker:";

    private final String transport;
    private final String waitingFor;
    private final List<String> topics;
    private final WaitingMessages waiting;
    private final Runnable wake;
    private final AtomicBoolean queued = new AtomicBoolean();

    private BreakerRecovery(String transport, Collection<String> topics, WaitingMessages waiting, Runnable wake) {
        this.transport = transport;
        this.waitingFor = waitingFor(transport);
        this.topics = List.copyOf(topics);
        this.waiting = Objects.requireNonNull(waiting, "waiting");
        this.wake = Objects.requireNonNull(wake, "wake");
    }

    /** What an email refused by the breaker of {@code transport} waits for ({@code outbox_message.waiting_for}). */
    public static String waitingFor(String transport) {
        return PREFIX + transport;
    }

    /**
     * Watches the breaker of {@code transport}, which serves {@code topics}; {@code wake} wakes this
     * process's claimers (the dispatcher's {@code wake}).
     */
    public static BreakerRecovery watch(ResilientTransport transport, Collection<String> topics, WaitingMessages waiting,
                                        Runnable wake) {
        BreakerRecovery recovery = new BreakerRecovery(transport.name(), topics, waiting, wake);
        transport.onCallsAllowedAgain(recovery::callsAllowedAgain);
        return recovery;
    }

    /**
     * Watches every transport of {@code transportByTopic} (the map {@link TransportGate} takes), each
     * for the topics it serves.
     */
    public static List<BreakerRecovery> watchAll(Map<String, ResilientTransport> transportByTopic, WaitingMessages waiting,
                                                 Runnable wake) {
        Map<ResilientTransport, List<String>> topicsOf = new IdentityHashMap<>();
        transportByTopic.forEach((topic, t) -> topicsOf.computeIfAbsent(t, k -> new ArrayList<>()).add(topic));
        List<BreakerRecovery> all = new ArrayList<>(topicsOf.size());
        topicsOf.forEach((t, topics) -> all.add(watch(t, topics, waiting, wake)));
        return all;
    }

    /** On the thread that moved the breaker: only wakes, and hands the statement to a thread of its own. */
    private void callsAllowedAgain() {
        wake.run();
        if (!topics.isEmpty() && queued.compareAndSet(false, true)) {
            Thread.ofVirtual().name("mailroom-breaker-recovery-" + transport).start(this::releaseWaiting);
        }
    }

    /** Makes the held-back emails available now; returns how many. Public for a test's single step. */
    public int releaseWaiting() {
        queued.set(false); // first: a transition during the statement runs it once more
        try {
            int released = waiting.availableNow(waitingFor, topics);
            if (released > 0) {
                log.info("Transport {} lets calls through again: {} emails its breaker had held back are available now",
                        transport, released);
                wake.run();
            }
            return released;
        } catch (RuntimeException e) {
            log.warn("Transport {} lets calls through again, but the emails its breaker held back could not be made"
                    + " available now (SQLSTATE {}); they go when their wait is over", transport, SqlStates.sqlState(e));
            return 0;
        }
    }
}
