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
 * <p>An ordering key's next message, freed when its predecessor's outcome is written, usually sits
 * below the mark by then (the claimer took later rows meanwhile). So that a key's chain does not
 * wait up to {@code fullScanInterval} per step, the dispatcher counts the written outcomes of
 * messages with an ordering key ({@code freedKeys}), and a topic set whose last claim from the head
 * started before the count last moved is claimed from the head again. A workload where every
 * message has an ordering key therefore claims from the head as it did before the marks.
 */
final class ClaimMarks {

    /** The most topic sets remembered (they change as topics are paused and gated): past it, all are forgotten. */
    private static final int MAX_TOPIC_SETS = 64;

    private final long fullScanNanos;
    private final LongSupplier ticker;
    private final LongSupplier freedKeys;
    private final Map<List<String>, Entry> byTopics = new HashMap<>();
    /** {@link #freedKeys} as read by the last {@link #next}, recorded by a claim from the head. */
    private long freedAtNext;

    private static final class Entry {
        ClaimMark mark;
        long lastHeadClaim;
        long freedAtHeadClaim;
    }

    /**
     * @param fullScanInterval zero: every claim from the head (no marks)
     * @param freedKeys        a count that moves whenever a message with an ordering key gets its outcome written
     */
    ClaimMarks(Duration fullScanInterval, LongSupplier ticker, LongSupplier freedKeys) {
        this.fullScanNanos = fullScanInterval.toNanos();
        this.ticker = ticker;
        this.freedKeys = freedKeys;
    }

    ClaimMarks(Duration fullScanInterval, LongSupplier ticker) {
        this(fullScanInterval, ticker, () -> 0L);
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
        freedAtNext = freedKeys.getAsLong();
        Entry e = byTopics.get(topics);
        if (e == null || e.mark == null || ticker.getAsLong() - e.lastHeadClaim >= fullScanNanos
                || freedAtNext != e.freedAtHeadClaim) {
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
            e.freedAtHeadClaim = freedAtNext; // read before the claim: a key freed during it is seen next time
        }
        if (lowest != null) {
            e.mark = lowest;
        }
    }
}
