package io.mailroom.outbox;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.ArrayList;
import java.util.List;

/**
 * Returns messages whose lease expired (their worker died or hung) to the queue with backoff, or to
 * failed after their last attempt. Works in bounded pages, each its own short transaction, so it
 * never holds many row locks; several dispatchers may run it at once (SKIP LOCKED keeps them apart).
 * Only an expired lease counts as proof of death, never "running for a long time".
 */
final class LeaseRescuer {

    private static final Logger log = LoggerFactory.getLogger(LeaseRescuer.class);
    /** Most pages one run takes, so a huge backlog of expired leases cannot starve the other duties. */
    static final int MAX_PAGES_PER_RUN = 20;

    private final DispatcherSessions sessions;
    private final OutboxStore store;
    private final DispatcherConfig config;
    private final DispatcherListener listener;

    LeaseRescuer(DispatcherSessions sessions, OutboxStore store, DispatcherConfig config, DispatcherListener listener) {
        this.sessions = sessions;
        this.store = store;
        this.config = config;
        this.listener = listener;
    }

    /** Rescues expired leases page by page until a page comes back short; returns how many. */
    int rescue() {
        int total = 0;
        for (int page = 0; page < MAX_PAGES_PER_RUN; page++) {
            List<OutboxStore.ChangedRow> rows = sessions.inTransaction(tx -> {
                List<OutboxStore.ChangedRow> changed = store.rescueExpired(tx, config.rescuePageSize());
                store.updateEffects(tx, changed);
                if (config.recordAttempts()) {
                    List<OutboxStore.AttemptRow> attempts = new ArrayList<>(changed.size());
                    var now = java.time.Instant.now();
                    for (OutboxStore.ChangedRow r : changed) {
                        attempts.add(new OutboxStore.AttemptRow(r.idempotencyKey(), r.id(), r.attempts(),
                                r.claimVersion(), r.claimedBy(), r.claimedAt() == null ? now : r.claimedAt(),
                                config.clock() == null ? now : config.clock().instant(),
                                "lease_expired", r.lastError(), null));
                    }
                    store.insertAttempts(tx, attempts);
                }
                return changed;
            });
            total += rows.size();
            for (OutboxStore.ChangedRow r : rows) {
                log.info("Rescued message {} from {} after its lease expired (attempt {}/{}): now {}",
                        r.id(), r.claimedBy(), r.attempts(), r.maxAttempts(), r.status());
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
