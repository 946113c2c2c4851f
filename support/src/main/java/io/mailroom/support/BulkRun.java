package io.mailroom.support;

import java.time.Instant;
import java.util.Map;

/**
 * One bulk action and how far it got.
 *
 * @param filter    the search it applies to, as request parameters
 * @param confirmed how many emails the person confirmed: the run never acts on more
 * @param matched   how many matched when the run started (at most {@code confirmed})
 * @param applied   emails the action changed
 * @param skipped   emails it left alone: they no longer matched, or the action does not apply to them now
 * @param busy      emails a dispatcher held at that moment (left alone; run the action again for them)
 * @param state     running, done, interrupted (the process stopped mid-way) or failed
 */
public record BulkRun(long id, String action, Map<String, String> filter, int confirmed, int matched, int applied,
                      int skipped, int busy, String state, String actor, String reason, String error, Instant createdAt,
                      Instant updatedAt, Instant finishedAt) {

    public BulkRun {
        filter = Map.copyOf(filter);
    }

    /** Emails looked at so far. */
    public int processed() {
        return applied + skipped + busy;
    }

    public boolean finished() {
        return !state.equals("running");
    }
}
