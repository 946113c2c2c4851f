package io.mailroom.outbox;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.time.Instant;
import java.util.List;

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
        int total = 0;
        for (int page = 0; page < LeaseRescuer.MAX_PAGES_PER_RUN; page++) {
            List<OutboxStore.ChangedRow> rows = sessions.inTransaction(tx -> {
                List<OutboxStore.ChangedRow> changed = store.interruptPredecessors(tx, config.workerId(), incarnation,
                        config.rescuePageSize());
                store.updateEffects(tx, changed);
                if (config.recordAttempts()) {
                    Instant now = config.clock() == null ? Instant.now() : config.clock().instant();
                    store.insertAttempts(tx, changed.stream().map(r -> new OutboxStore.AttemptRow(r.idempotencyKey(),
                            r.id(), r.attempts(), r.claimVersion(), r.claimedBy(),
                            r.claimedAt() == null ? now : r.claimedAt(), now, "interrupted", r.lastError(), null)).toList());
                }
                return changed;
            });
            total += rows.size();
            for (OutboxStore.ChangedRow r : rows) {
                log.warn("Message {} ({}) was claimed by an earlier process of worker {} that stopped while holding it;"
                        + " attempt {}/{} counted as interrupted: now {}", r.id(), r.idempotencyKey(), r.claimedBy(),
                        r.attempts(), r.maxAttempts(), r.status());
                if (r.ended()) {
                    listener.ended(r.idempotencyKey(), r.topic(), r.status(), r.lastError(), r.payloadJson());
                }
            }
            if (rows.size() < config.rescuePageSize()) {
                break;
            }
        }
        if (total > 0) {
            listener.rescued(total);
        }
        return total;
    }
}
