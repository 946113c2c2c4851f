package io.mailroom.outbox.runtime;

import io.mailroom.outbox.DispatcherSessions;
import org.jooq.DSLContext;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentSkipListSet;
import java.util.concurrent.Semaphore;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Supplier;

/**
 * Which claims this process holds, and the handler slots they take. A claim is in exactly one of
 * three places while its row is running under it: in a claim round that has not yet ended,
 * {@link #inFlight}, or {@link #leftToLease}. Whatever is in none of them is an orphan
 * ({@link #orphans}). A claim that holds a slot gives it back exactly once, when it leaves flight.
 */
final class ClaimLedger {

    /** How old a running claim of ours must be before, not being in flight, it counts as orphaned. */
    static final Duration ORPHAN_GRACE = Duration.ofSeconds(5);

    private final AtomicLong freedOrderingKeys = new AtomicLong();
    private final DispatcherSessions sessions;
    private final OutboxStore store;
    private final DispatcherConfig config;
    private final DispatcherListener listener;
    private final String incarnation;

    private final Map<Long, InFlight> inFlight = new ConcurrentHashMap<>();
    /**
     * Claims whose outcome the completer gave up writing (the send may have happened): they stay
     * running, attempt counted, until their lease expires and the rescuer returns them; never orphans.
     */
    private final Map<Long, ClaimedMessage> leftToLease = new ConcurrentHashMap<>();
    /** Claim rounds are numbered; those not yet over (rows committed, maybe not yet in flight) are here. */
    private final AtomicLong lastClaimRound = new AtomicLong();
    private final ConcurrentSkipListSet<Long> claimRoundsRunning = new ConcurrentSkipListSet<>();
    /** Running claims of ours seen outside {@link #inFlight} while a claim round that may own them was running. */
    private final Map<Long, Suspect> suspects = new HashMap<>(); // guarded by orphanCheck
    private final Object orphanCheck = new Object();
    private final Semaphore slots;

    ClaimLedger(DispatcherSessions sessions, OutboxStore store, DispatcherConfig config, DispatcherListener listener,
                String incarnation) {
        this.sessions = sessions;
        this.store = store;
        this.config = config;
        this.listener = listener;
        this.incarnation = incarnation;
        this.slots = new Semaphore(config.concurrency());
    }

    /** The free handler slots; a claim that holds one gives it back when it leaves flight. */
    Semaphore slots() {
        return slots;
    }

    Collection<InFlight> inFlight() {
        return inFlight.values();
    }

    int inFlightCount() {
        return inFlight.size();
    }

    /**
     * One claim round: runs {@code claim} and puts every claim in flight before the round is over.
     * Until then its committed claims are in no other place, so the orphan check leaves alone every
     * claim a running round may have made, however slow the round is (see {@link #orphans}).
     */
    List<InFlight> claimRound(boolean holdsSlots, Supplier<List<ClaimedMessage>> claim) {
        long round = lastClaimRound.incrementAndGet();
        claimRoundsRunning.add(round); // before its first claim transaction begins
        try {
            List<ClaimedMessage> claimed = claim.get();
            List<InFlight> held = new ArrayList<>(claimed.size());
            for (ClaimedMessage m : claimed) {
                InFlight f = new InFlight(m);
                f.holdsSlot = holdsSlots;
                inFlight.put(m.id(), f);
                held.add(f);
            }
            return held;
        } finally {
            claimRoundsRunning.remove(round);
        }
    }

    /** Outcomes written: the claims leave flight and their slots come back, all of the batch at once. */
    void settled(List<Completer.Pending> batch) {
        int freed = 0;
        boolean keys = false;
        for (Completer.Pending p : batch) {
            InFlight f = p.claim();
            keys |= f.message.orderingKey() != null;
            listener.finished(f.message, p.outcome(), p.took());
            if (inFlight.remove(f.message.id(), f) && f.holdsSlot) {
                freed++;
            }
        }
        if (keys) {
            freedOrderingKeys.incrementAndGet(); // before the slots: a claimer they wake sees it
        }
        if (freed > 0) {
            slots.release(freed);
        }
    }

    /**
     * How many written batches held a message with an ordering key: each may have freed that key's
     * next message below a claimer's mark ({@link ClaimMarks}).
     */
    long freedOrderingKeys() {
        return freedOrderingKeys.get();
    }

    /**
     * The completer gave up writing the outcome, though the handler ran (the email may be sent): the
     * claim is neither handed back nor an orphan, it stays running with its attempt counted until
     * the lease expires, so the next attempt sees an unknown outcome instead of "never handled".
     */
    void leaveToLease(InFlight f) {
        leftToLease.put(f.message.id(), f.message); // before it leaves inFlight: never in neither
        release(f);
    }

    /** The claim leaves flight (its outcome will not be written by this process). */
    void release(InFlight f) {
        if (inFlight.remove(f.message.id(), f) && f.holdsSlot) {
            slots.release();
        }
    }

    /**
     * This process's orphaned claims: rows it claimed (its worker id and incarnation) that are
     * running but in none of the places a live claim is (see the class comment). They come from a
     * claim whose COMMIT went through while the session was being killed, so the claimer saw an
     * error and never ran them. Claims younger than {@link #ORPHAN_GRACE} are left alone. A claim
     * seen outside {@link #inFlight} is judged only once every claim round that may have made it is
     * over (a round puts its claims in flight before it ends, but it claims topic after topic, each
     * in its own transaction, so its first claims are committed and visible while it is still
     * claiming, for as long as that takes).
     */
    List<ClaimedMessage> orphans() {
        List<ClaimedMessage> orphans = new ArrayList<>();
        synchronized (orphanCheck) {
            List<ClaimedMessage> running = sessions.inTransaction(tx -> {
                forgetSettledLeftToLease(tx);
                return store.rescues().ownRunning(tx, config.workerId(), incarnation, ORPHAN_GRACE, config.rescuePageSize());
            });
            // Read after the query: a round that committed a row the query saw had its number by then.
            // A round counted here but not yet in claimRoundsRunning has not begun claiming.
            long lastRound = lastClaimRound.get();
            Long oldestRunningRound = claimRoundsRunning.ceiling(Long.MIN_VALUE);
            Map<Long, Suspect> stillSuspect = new HashMap<>();
            for (ClaimedMessage m : running) {
                // inFlight first: a claim enters leftToLease before it leaves inFlight
                if (inFlight.containsKey(m.id()) || isLeftToLease(m)) {
                    continue;
                }
                Suspect seen = suspects.get(m.id());
                if (seen == null || seen.claimVersion() != m.claimVersion()) {
                    seen = new Suspect(m.claimVersion(), lastRound);
                }
                if (oldestRunningRound == null || oldestRunningRound > seen.lastRoundBefore()) {
                    orphans.add(m);
                } else {
                    stillSuspect.put(m.id(), seen);
                }
            }
            suspects.clear();
            suspects.putAll(stillSuspect);
        }
        return orphans;
    }

    /** A claim seen outside flight: by the time it was first seen, the claim rounds up to this number had begun. */
    private record Suspect(long claimVersion, long lastRoundBefore) {
    }

    private boolean isLeftToLease(ClaimedMessage m) {
        ClaimedMessage left = leftToLease.get(m.id());
        return left != null && left.claimVersion() == m.claimVersion();
    }

    /** Forgets the claims left to their lease that are no longer running under that claim (rescued, or changed by a person). */
    private void forgetSettledLeftToLease(DSLContext tx) {
        if (leftToLease.isEmpty()) {
            return;
        }
        List<ClaimedMessage> left = List.copyOf(leftToLease.values());
        Set<Long> stillRunning = store.leases().stillClaimed(tx, left);
        for (ClaimedMessage m : left) {
            if (!stillRunning.contains(m.id())) {
                leftToLease.remove(m.id(), m);
            }
        }
    }
}
