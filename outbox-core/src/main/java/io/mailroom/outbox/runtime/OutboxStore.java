package io.mailroom.outbox.runtime;

import io.mailroom.db.sql.HotSql;
import io.mailroom.db.sql.SqlClock;

/**
 * The outbox runtime's SQL, one class per role: the claim ({@link ClaimStore}), the completion
 * ({@link CompletionStore}), the statements on held claims ({@link LeaseStore}), the rescue of
 * claims nobody works on ({@link RescueStore}), effects and attempt history ({@link HistoryStore})
 * and the pause switches ({@link ControlStore}). Statements that change a claimed row are fenced by
 * {@code claim_version} (see {@link ChangedRow}).
 *
 * <p>Batched statements take their rows as arrays ({@code unnest}), so the SQL text is the same
 * whatever the batch size and the server reuses one plan. The statements of the hot path (claim,
 * completion, heartbeat, release, rescue) are finished texts run through {@link HotSql}; the claim's
 * text is rendered by jOOQ from the generated classes.
 */
final class OutboxStore {

    private final ClaimStore claims;
    private final CompletionStore completions;
    private final LeaseStore leases;
    private final RescueStore rescues;
    private final HistoryStore history;
    private final ControlStore control;

    OutboxStore(SqlClock clock, Backoff backoff) {
        this.claims = new ClaimStore(clock);
        this.completions = new CompletionStore(clock);
        this.leases = new LeaseStore(clock);
        this.rescues = new RescueStore(clock, backoff);
        this.history = new HistoryStore(clock);
        this.control = new ControlStore(clock);
    }

    ClaimStore claims() {
        return claims;
    }

    CompletionStore completions() {
        return completions;
    }

    LeaseStore leases() {
        return leases;
    }

    RescueStore rescues() {
        return rescues;
    }

    HistoryStore history() {
        return history;
    }

    ControlStore control() {
        return control;
    }
}
