package io.mailroom.outbox.runtime;

import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.function.LongSupplier;

/**
 * One claimer's low-water marks: for each topic set it claims, the lowest (available_at, id) its
 * last claim took, where its next claim starts instead of the claim index's head.
 *
 * <p>Why: each claim takes its rows out of the partial index {@code (available_at, id) WHERE status
 * = 'pending'} but leaves their entries, which VACUUM removes and {@code kill_prior_tuple} marks
 * only once no snapshot may still see them. While a long transaction holds the xmin horizon, the
 * entries of every row claimed since pile up at the index's head and a claim from the head walks
 * them all: the cost of each claim grows with the hold's age (BENCHMARKS.md, issue 28). From the
 * mark, a claim walks only what was claimed since the claimer's previous claim.
 *
 * <p>Why the lowest row of the last claim and not the highest: the rows that claim skipped above
 * its lowest one (locked by another claimer, or an ordering key's follower) stay in reach.
 *
 * <p>Invariant: nothing waits below a mark for longer than {@code fullScanInterval}. Rows can
 * appear below it: an enqueue whose transaction started before the mark's time and committed after
 * it, a row skipped while another claimer held it (and rolled back), an ordering key's follower
 * whose predecessor ran, a message rescheduled to an earlier time or retried now by a person. So a
 * topic set is claimed from the head when it has no mark and whenever its last claim from the head
 * is {@code fullScanInterval} old (real time, from {@link System#nanoTime}: an injected clock that
 * stands still must not stop it); a claim from the head resets the mark to what it took. A
 * notification does not force a claim from the head: at load they come with nearly every commit.
 * An empty claim keeps the mark. Not thread-safe: each claimer thread holds its own.
 *
 * <p>The price: an ordering key's next message, freed when its predecessor's outcome is written,
 * usually sits below the mark by then (the claimer took later rows meanwhile), so under load each
 * step of a key's chain may wait up to {@code fullScanInterval} more; with no other traffic the
 * mark stays at the predecessor and the next message is found at once.
 */
final class ClaimMarks {

    /** The most topic sets remembered (they change as topics are paused and gated): past it, all are forgotten. */
    private static final int MAX_TOPIC_SETS = 64;

    private final long fullScanNanos;
    private final LongSupplier ticker;
    private final Map<List<String>, Entry> byTopics = new HashMap<>();

    private static final class Entry {
        ClaimMark mark;
        long lastHeadClaim;
    }

    /** @param fullScanInterval zero: every claim from the head (no marks) */
    ClaimMarks(Duration fullScanInterval, LongSupplier ticker) {
        this.fullScanNanos = fullScanInterval.toNanos();
        this.ticker = ticker;
    }

    ClaimMarks(Duration fullScanInterval) {
        this(fullScanInterval, System::nanoTime);
    }

    /** Marks that are never used: every claim from the head (single steps, a zero interval). */
    static ClaimMarks none() {
        return new ClaimMarks(Duration.ZERO, () -> 0L);
    }

    /** Where the next claim of {@code topics} starts: a mark, or null for the index's head. */
    ClaimMark next(List<String> topics) {
        if (fullScanNanos == 0) {
            return null;
        }
        Entry e = byTopics.get(topics);
        if (e == null || e.mark == null || ticker.getAsLong() - e.lastHeadClaim >= fullScanNanos) {
            return null;
        }
        return e.mark;
    }

    /**
     * Records a claim of {@code topics} that started {@code from} (null: the head) and whose lowest
     * row was {@code lowest} (null: it took nothing).
     */
    void claimed(List<String> topics, ClaimMark from, ClaimMark lowest) {
        if (fullScanNanos == 0) {
            return;
        }
        Entry e = byTopics.get(topics);
        if (e == null) {
            if (byTopics.size() >= MAX_TOPIC_SETS) {
                byTopics.clear();
            }
            e = new Entry();
            byTopics.put(List.copyOf(topics), e);
        }
        if (from == null) {
            e.lastHeadClaim = ticker.getAsLong();
        }
        if (lowest != null) {
            e.mark = lowest;
        }
    }
}
