package io.mailroom.bench;

/**
 * What one drain of a preloaded queue measured, whoever drove it.
 *
 * @param messages   messages loaded
 * @param handled    messages whose completion committed (runtime: counted by the listener; reference: rows the
 *                   completion returned)
 * @param duplicates messages handled more than once
 * @param nanos      wall time from the start of the driver to the last completion's commit
 * @param cpu        CPU used in that window
 * @param counts     the database's own count afterwards
 * @param error      why the run is not complete, or null
 * @param claims     what the claimer did (runtime only; null for the references)
 */
record DrainResult(int messages, long handled, long duplicates, long nanos, CpuMeter.Used cpu,
                   QueueLoader.Counts counts, String error, Claims claims) {

    DrainResult(int messages, long handled, long duplicates, long nanos, CpuMeter.Used cpu,
                QueueLoader.Counts counts, String error) {
        this(messages, handled, duplicates, nanos, cpu, counts, error, null);
    }

    /**
     * The runtime's claimers in one drain, from {@link io.mailroom.outbox.runtime.DispatcherListener#claimed}:
     * claim statements run, rows they returned, and the time spent in them (claim transaction
     * included), summed over the claimer threads. {@code busyShare} near the number of claimers means
     * claiming was the bottleneck; well below, they were waiting for free slots, i.e. for completions.
     */
    record Claims(long statements, long rows, long nanos, long wallNanos) {
        double rowsPerClaim() {
            return statements == 0 ? 0 : (double) rows / statements;
        }

        double busyShare() {
            return wallNanos == 0 ? 0 : (double) nanos / wallNanos;
        }
    }

    double perSecond() {
        return nanos <= 0 ? 0 : handled * 1e9 / nanos;
    }

    /** Complete means: every message done exactly once, in the handler's view and the database's. */
    boolean complete(boolean attemptsRecorded) {
        return error == null && handled == messages && duplicates == 0 && counts != null
                && counts.done() == messages && counts.notDone() == 0 && counts.effectsDone() == messages
                && counts.attempts() == (attemptsRecorded ? messages : 0);
    }

    String problem(boolean attemptsRecorded) {
        if (complete(attemptsRecorded)) {
            return null;
        }
        if (error != null) {
            return error;
        }
        return "handled " + handled + "/" + messages + ", duplicates " + duplicates + ", database " + counts;
    }
}
