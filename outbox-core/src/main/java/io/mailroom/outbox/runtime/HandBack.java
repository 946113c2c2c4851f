package io.mailroom.outbox.runtime;

import io.mailroom.outbox.DispatcherSessions;
import io.mailroom.db.sql.SqlClock;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.time.Instant;
import java.util.List;

/**
 * Returns claims nobody will finish to the queue at once, instead of leaving them to their lease:
 * the claims a graceful stop took from their handlers, and this process's orphans
 * ({@link ClaimLedger#orphans}). The hand-back is fenced by {@code claim_version} and does not
 * count the attempt (no handler ran to an outcome), and leaves a "released" attempt row saying why.
 */
final class HandBack {

    private static final Logger log = LoggerFactory.getLogger(HandBack.class);

    private final DispatcherSessions sessions;
    private final OutboxStore store;
    private final DispatcherConfig config;
    private final SqlClock clock;
    private final ClaimLedger ledger;

    HandBack(DispatcherSessions sessions, OutboxStore store, DispatcherConfig config, SqlClock clock, ClaimLedger ledger) {
        this.sessions = sessions;
        this.store = store;
        this.config = config;
        this.clock = clock;
        this.ledger = ledger;
    }

    /** Graceful stop: hands back (fenced) the claims it took from their handlers ({@link InFlight#handBack}). */
    void unfinished(List<InFlight> unfinished) {
        List<ClaimedMessage> messages = unfinished.stream().map(f -> f.message).toList();
        try {
            int released = releaseClaims(messages, "dispatcher stopped before the handler finished",
                    AttemptDetail.RELEASE_STOPPING);
            log.info("Handed {} unfinished claims back to the queue", released);
        } catch (RuntimeException e) {
            log.error("Could not hand back {} claims; their leases will expire and the rescuer will return them",
                    messages.size(), e);
        }
        unfinished.forEach(ledger::release);
    }

    /** Returns this process's orphaned claims to the queue; returns how many were released. */
    int orphans() {
        List<ClaimedMessage> orphans = ledger.orphans();
        if (orphans.isEmpty()) {
            return 0;
        }
        int released = releaseClaims(orphans, "claim committed while its session was lost; never handled",
                AttemptDetail.RELEASE_ORPHANED);
        if (released > 0) {
            log.warn("Returned {} orphaned claims of {} to the queue (their claim's commit outcome was unknown)",
                    released, config.workerId());
        }
        return released;
    }

    /** Hands claims back (fenced; attempt not counted) with their effects and a "released" attempt row. */
    private int releaseClaims(List<ClaimedMessage> messages, String why, String release) {
        return sessions.inTransaction(tx -> {
            List<ChangedRow> rows = store.leases().release(tx, messages);
            store.history().updateEffects(tx, rows);
            if (config.recordAttempts()) {
                Instant now = clock.instant();
                store.history().insertAttempts(tx, rows.stream().map(r -> new HistoryStore.AttemptRow(r.idempotencyKey(),
                        r.id(), r.attempts() + 1, r.claimVersion(), config.workerId(), r.claimedAt(), now,
                        "released", why, AttemptDetail.released(null, release))).toList());
            }
            return rows.size();
        });
    }
}
