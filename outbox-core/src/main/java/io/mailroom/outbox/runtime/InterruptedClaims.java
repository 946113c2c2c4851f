package io.mailroom.outbox.runtime;

import io.mailroom.outbox.DispatcherSessions;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;


/**
 * Ends the running claims of this dispatcher's worker id that another process made (see
 * {@link Dispatcher#interruptPredecessorsClaims}): page by page, each its own short transaction,
 * the attempt counted and recorded as {@code interrupted}.
 */
final class InterruptedClaims {

    private static final Logger log = LoggerFactory.getLogger(InterruptedClaims.class);

    private final DispatcherSessions sessions;
    private final OutboxStore store;
    private final DispatcherConfig config;
    private final DispatcherListener listener;
    private final String incarnation;

    InterruptedClaims(DispatcherSessions sessions, OutboxStore store, DispatcherConfig config,
                      DispatcherListener listener, String incarnation) {
        this.sessions = sessions;
        this.store = store;
        this.config = config;
        this.listener = listener;
        this.incarnation = incarnation;
    }

    /** Returns how many claims it ended. */
    int end() {
        return LeaseRescuer.endInPages(sessions, store, config, listener,
                tx -> store.rescues().interruptPredecessors(tx, config.workerId(), incarnation, config.rescuePageSize()),
                "interrupted", r -> log.warn("Message {} ({}) was claimed by an earlier process of worker {} that stopped"
                        + " while holding it; attempt {}/{} counted as interrupted: now {}", r.id(), r.idempotencyKey(),
                        r.claimedBy(), r.attempts(), r.maxAttempts(), r.status()));
    }
}
