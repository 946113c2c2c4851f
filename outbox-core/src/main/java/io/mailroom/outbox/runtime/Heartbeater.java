package io.mailroom.outbox.runtime;

import io.mailroom.outbox.DispatcherSessions;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Set;

/**
 * Keeps the leases of running handlers alive: one fenced UPDATE for all of them per interval. A
 * claim the update does not return is lost (its lease expired and someone else took the message,
 * or a person changed it); the handler is told through {@link ClaimContext#isClaimLost()} and its
 * outcome will not be recorded. Claims whose outcome is already queued for the {@link Completer}
 * are left out (see {@link InFlight#completing}).
 */
final class Heartbeater {

    private static final Logger log = LoggerFactory.getLogger(Heartbeater.class);

    private final DispatcherSessions sessions;
    private final OutboxStore store;
    private final DispatcherConfig config;
    private final DispatcherListener listener;

    Heartbeater(DispatcherSessions sessions, OutboxStore store, DispatcherConfig config, DispatcherListener listener) {
        this.sessions = sessions;
        this.store = store;
        this.config = config;
        this.listener = listener;
    }

    /** Extends every held lease once; returns how many claims were found lost. */
    int beat(Collection<InFlight> inFlight) {
        List<InFlight> held = new ArrayList<>();
        for (InFlight f : inFlight) {
            if (!f.lost && !f.completing) {
                held.add(f);
            }
        }
        if (held.isEmpty()) {
            return 0;
        }
        List<ClaimedMessage> messages = held.stream().map(f -> f.message).toList();
        Set<Long> kept = sessions.inTransaction(tx -> store.leases().heartbeat(tx, messages, config.lease()));
        int lost = 0;
        for (InFlight f : held) {
            if (!kept.contains(f.message.id())) {
                f.lost = true;
                lost++;
                log.debug("Heartbeat found the claim of message {} (version {}) lost", f.message.id(),
                        f.message.claimVersion());
                listener.claimLost(f.message, "heartbeat");
            }
        }
        return lost;
    }
}
