package io.mailroom.support;

import java.time.Instant;
import java.util.List;
import java.util.Map;

/**
 * The state of the queue for operators, read at {@code at} (database time).
 *
 * @param counts                   emails by status that need attention or are in flight:
 *                                 pending (of which {@code pendingDue} are due now), sending, failed, review
 * @param pendingDue               pending emails whose time has come (the rest wait for a retry backoff)
 * @param oldestPendingSince       creation time of the oldest pending email, or null
 * @param oldestPendingAgeSeconds  its age in seconds, or null
 * @param lastMinute               attempt outcomes in the last 60 seconds
 * @param lastHour                 attempt outcomes in the last hour
 * @param perMinute                the last 60 minutes, oldest first
 * @param paused                   scopes paused now ({@code *} means everything)
 * @param transportStateKnown      false when breaker states cannot be known in this process
 */
public record QueueStats(Instant at, Map<String, Long> counts, long pendingDue, Instant oldestPendingSince,
                         Long oldestPendingAgeSeconds, Window lastMinute, Window lastHour, List<Minute> perMinute,
                         List<String> paused, List<TransportStatus.TransportState> transports,
                         boolean transportStateKnown) {

    public QueueStats {
        counts = java.util.Collections.unmodifiableMap(new java.util.LinkedHashMap<>(counts)); // keeps the order shown
        perMinute = List.copyOf(perMinute);
        paused = List.copyOf(paused);
        transports = List.copyOf(transports);
    }

    /**
     * Outcomes of attempts that ended in a time window.
     *
     * @param sent    accepted by the provider
     * @param failed  failed for good
     * @param retried failed and will be tried again
     * @param review  parked for review (outcome unknown)
     */
    public record Window(long sent, long failed, long retried, long review) {
    }

    /**
     * One minute of the chart.
     *
     * @param pendingDepth emails waiting or being sent at the end of the minute, reconstructed from history
     */
    public record Minute(Instant minute, long pendingDepth, long sent, long failed) {
    }
}
