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
 * <p>Rows can appear below a mark: an enqueue whose transaction started before the mark's time and
 * committed after it, a row skipped while another claimer held it (and rolled back), an ordering
 * key's follower whose predecessor ran, a message rescheduled to an earlier time or retried now by a
 * person. So every {@code fullScanInterval} (real time, from {@link System#nanoTime}: an injected
 * clock that stands still must not stop it) a claim reaches below the mark: it starts {@code
 * lookback} before the mark's time, where nearly all of those rows are (an enqueue's available_at is
 * its transaction's start, so a late commit lands below the mark by about its transaction's
 * length). Every {@value #HEAD_EVERY}th such claim, and whenever a topic set has no mark, starts
 * from the head of the index instead. Invariant: nothing waits below a mark for longer than {@code
 * fullScanInterval} when it lies within {@code lookback} of the mark, and for longer than {@value
 * #HEAD_EVERY} x {@code fullScanInterval} in any case.
 *
 * <p>Why not from the head every time: while a transaction holds the xmin horizon, the head of the
 * index is where the dead entries of everything claimed since pile up, and a claim from the head
 * walks them all (160 ms a claim after five minutes of a hold at 2,000 messages a second). Those
 * claims, one a second per claimer, were the claims' 99th percentile during the hold and for
 * minutes after it (BENCHMARKS.md, issue 28, "the claim that reaches below the mark"). From {@code
 * lookback} before the mark a claim walks the dead entries of {@code lookback} of traffic. Every
 * claim that takes rows moves the mark to the lowest of them; a notification does not make a claim reach below
 * the mark (at load they come with nearly every commit). An empty claim keeps the mark. Not
 * thread-safe: each claimer thread holds its own.
 *
 * <p>An ordering key's next message, freed when its predecessor's outcome is written, usually sits
 * below the mark by then (the claimer took later rows meanwhile), possibly far below it. So that a
 * key's chain does not wait up to {@code fullScanInterval} per step, the dispatcher counts the
 * written outcomes of messages with an ordering key ({@code freedKeys}), and a topic set whose last
 * claim from the head started before the count last moved is claimed from the head again. A
 * workload where every message has an ordering key therefore claims from the head as it did before
 * the marks.
 */
final class ClaimMarks {

    /** The most topic sets remembered (they change as topics are paused and gated): past it, all are forgotten. */
    private static final int MAX_TOPIC_SETS = 64;

    /** Every this many claims that reach below the mark, one starts from the index's head. */
    static final int HEAD_EVERY = 30;

    private final long fullScanNanos;
    private final Duration lookback;
    private final LongSupplier ticker;
    private final LongSupplier freedKeys;
    private final Map<List<String>, Entry> byTopics = new HashMap<>();
    /** {@link #freedKeys} as read by the last {@link #next}, recorded by a claim from the head. */
    private long freedAtNext;

    private static final class Entry {
        ClaimMark mark;
        long lastHeadClaim;
        /** When a claim last reached below the mark (from the head, or from lookback before it). */
        long lastReach;
        long freedAtHeadClaim;
    }

    /**
     * @param fullScanInterval zero: every claim from the head (no marks)
     * @param lookback         how far below the mark (in available_at) a claim that reaches below it starts
     * @param freedKeys        a count that moves whenever a message with an ordering key gets its outcome written
     */
    ClaimMarks(Duration fullScanInterval, Duration lookback, LongSupplier ticker, LongSupplier freedKeys) {
        this.fullScanNanos = fullScanInterval.toNanos();
        this.lookback = lookback;
        this.ticker = ticker;
        this.freedKeys = freedKeys;
    }

    ClaimMarks(Duration fullScanInterval, LongSupplier ticker, LongSupplier freedKeys) {
        this(fullScanInterval, DispatcherConfig.DEFAULT_MARK_LOOKBACK, ticker, freedKeys);
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

    /**
     * Where the next claim of {@code topics} starts: the mark; {@code lookback} before it when a
     * claim has not reached below it for {@code fullScanInterval}; null (the index's head) when
     * there is no mark, an ordering key was freed, or no claim started from the head for {@value
     * #HEAD_EVERY} x {@code fullScanInterval}.
     */
    ClaimMark next(List<String> topics) {
        if (fullScanNanos == 0) {
            return null;
        }
        freedAtNext = freedKeys.getAsLong();
        Entry e = byTopics.get(topics);
        long now = ticker.getAsLong();
        if (e == null || e.mark == null || now - e.lastHeadClaim >= fullScanNanos * HEAD_EVERY
                || freedAtNext != e.freedAtHeadClaim) {
            return null;
        }
        if (now - e.lastReach >= fullScanNanos) {
            return new ClaimMark(e.mark.availableAt().minus(lookback), Long.MIN_VALUE);
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
            e.lastReach = e.lastHeadClaim;
            e.freedAtHeadClaim = freedAtNext; // read before the claim: a key freed during it is seen next time
        } else if (e.mark != null && from.compareTo(e.mark) < 0) {
            e.lastReach = ticker.getAsLong();
        }
        if (lowest != null) {
            e.mark = lowest;
        }
    }
}
