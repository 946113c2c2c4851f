package io.mailroom.support;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.time.Duration;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The queue's figures for operators, read in one consistent transaction: counts by status, the
 * oldest pending age, outcome windows and a per-minute series of the last hour, the pause switches
 * and the transports' breaker states (unknown, never an error, when they cannot be read).
 */
final class QueueStatistics {

    private static final Logger log = LoggerFactory.getLogger(QueueStatistics.class);

    static final int CHART_MINUTES = 60;

    private final SupportTx db;
    private final SupportStore store;
    private final TransportStatus transports;

    QueueStatistics(SupportTx db, SupportStore store, TransportStatus transports) {
        this.db = db;
        this.store = store;
        this.transports = transports;
    }

    /**
     * The queue for operators: counts, oldest pending age, outcomes in the last minute and hour, a
     * 60-minute series and the breaker states. The pending depth of past minutes is reconstructed
     * backwards from the depth now: minus the emails created since, plus those that finished
     * (sent, failed, review, cancelled), minus failed ones put back by a retry.
     */
    public QueueStats stats() {
        return db.read(tx -> {
            io.mailroom.outbox.admin.EffectHistory.QueueCounts q = store.queueCounts(tx);
            Map<String, Long> attention = store.attentionCounts(tx);
            Instant now = q.now();
            Instant first = now.truncatedTo(ChronoUnit.MINUTES).minus(CHART_MINUTES - 1, ChronoUnit.MINUTES);

            long[] sent = new long[CHART_MINUTES];
            long[] failed = new long[CHART_MINUTES];
            long[] finished = new long[CHART_MINUTES];
            long[] created = new long[CHART_MINUTES];
            long[] reopened = new long[CHART_MINUTES];
            for (SupportStore.Bucket b : store.attemptsPerMinute(tx, first)) {
                int i = index(first, b.minute());
                if (i < 0) {
                    continue;
                }
                switch (b.what()) {
                    case "done" -> {
                        sent[i] += b.count();
                        finished[i] += b.count();
                    }
                    case "failed", "review" -> {
                        failed[i] += b.count();
                        finished[i] += b.count();
                    }
                    case "retry" -> failed[i] += b.count();
                    default -> {
                        // lease_expired, released, claim_lost: the email stays in the queue
                    }
                }
            }
            for (SupportStore.Bucket b : store.createdPerMinute(tx, first)) {
                int i = index(first, b.minute());
                if (i >= 0) {
                    created[i] += b.count();
                }
            }
            for (SupportStore.Bucket b : store.queueActionsPerMinute(tx, first)) {
                int i = index(first, b.minute());
                if (i >= 0) {
                    if (b.what().equals(AuditActions.CANCEL)) {
                        finished[i] += b.count();
                    } else {
                        reopened[i] += b.count();
                    }
                }
            }
            long depthNow = q.pending() + q.running();
            long[] depth = new long[CHART_MINUTES];
            depth[CHART_MINUTES - 1] = depthNow;
            for (int i = CHART_MINUTES - 1; i > 0; i--) {
                depth[i - 1] = depth[i] - created[i] + finished[i] - reopened[i];
            }
            List<QueueStats.Minute> minutes = new ArrayList<>(CHART_MINUTES);
            for (int i = 0; i < CHART_MINUTES; i++) {
                minutes.add(new QueueStats.Minute(first.plus(i, ChronoUnit.MINUTES), Math.max(0, depth[i]), sent[i], failed[i]));
            }

            Map<String, long[]> windows = new HashMap<>();
            for (io.mailroom.outbox.admin.AttemptHistory.OutcomeCount c : store.outcomeWindows(tx)) {
                windows.put(c.outcome(), new long[]{c.lastMinute(), c.lastHour()});
            }
            QueueStats.Window lastMinute = window(windows, 0);
            QueueStats.Window lastHour = window(windows, 1);

            Map<String, Long> counts = new LinkedHashMap<>();
            counts.put(EmailStatus.PENDING.code(), q.pending());
            counts.put(EmailStatus.SENDING.code(), q.running());
            counts.put(EmailStatus.FAILED.code(), attention.get("failed"));
            counts.put(EmailStatus.REVIEW.code(), attention.get("review"));
            Long age = q.oldestPending() == null ? null : Math.max(0, Duration.between(q.oldestPending(), now).toSeconds());
            List<String> paused = new ControlState(store.switches(tx)).pausedScopes();
            return new QueueStats(now, counts, q.pendingDue(), q.oldestPending(), age, lastMinute, lastHour, minutes,
                    paused, safeTransports(), transports.known());
        });
    }

    private static int index(Instant first, Instant minute) {
        long i = ChronoUnit.MINUTES.between(first, minute);
        return i < 0 || i >= CHART_MINUTES ? -1 : (int) i;
    }

    private static QueueStats.Window window(Map<String, long[]> w, int which) {
        return new QueueStats.Window(get(w, "done", which), get(w, "failed", which), get(w, "retry", which),
                get(w, "review", which));
    }

    private static long get(Map<String, long[]> w, String outcome, int which) {
        long[] v = w.get(outcome);
        return v == null ? 0 : v[which];
    }

    private List<TransportStatus.TransportState> safeTransports() {
        try {
            return transports.transports();
        } catch (RuntimeException e) {
            log.warn("Transport status could not be read; showing it as unknown", e);
            return List.of();
        }
    }
}
