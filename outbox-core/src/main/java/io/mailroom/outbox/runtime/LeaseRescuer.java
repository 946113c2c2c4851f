package io.mailroom.outbox.runtime;

import io.mailroom.outbox.DispatcherSessions;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import org.jooq.DSLContext;

import java.time.Instant;
import java.util.List;
import java.util.function.Consumer;
import java.util.function.Function;

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
        return endInPages(sessions, store, config, listener, tx -> store.rescues().rescueExpired(tx, config.rescuePageSize()),
                "lease_expired", r -> log.info("Rescued message {} from {} after its lease expired (attempt {}/{}): now {}",
                        r.id(), r.claimedBy(), r.attempts(), r.maxAttempts(), r.status()));
    }

    /**
     * Ends running claims page by page, each page its own short transaction: {@code statement} moves
     * a page of them (to pending with backoff, or failed), their effects follow, and each attempt is
     * recorded with {@code outcome}; {@code logLine} is told of every row after its page commits.
     * Stops at a short page or after {@link #MAX_PAGES_PER_RUN}; returns how many claims it ended.
     */
    static int endInPages(DispatcherSessions sessions, OutboxStore store, DispatcherConfig config, DispatcherListener listener,
                          Function<DSLContext, List<ChangedRow>> statement, String outcome,
                          Consumer<ChangedRow> logLine) {
        int total = 0;
        for (int page = 0; page < MAX_PAGES_PER_RUN; page++) {
            List<ChangedRow> rows = sessions.inTransaction(tx -> {
                List<ChangedRow> changed = statement.apply(tx);
                store.history().updateEffects(tx, changed);
                if (config.recordAttempts()) {
                    Instant now = config.clock() == null ? Instant.now() : config.clock().instant();
                    store.history().insertAttempts(tx, changed.stream().map(r -> new HistoryStore.AttemptRow(r.idempotencyKey(),
                            r.id(), r.attempts(), r.claimVersion(), r.claimedBy(),
                            r.claimedAt() == null ? now : r.claimedAt(), now, outcome, r.lastError(), null)).toList());
                }
                return changed;
            });
            total += rows.size();
            for (ChangedRow r : rows) {
                logLine.accept(r);
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
