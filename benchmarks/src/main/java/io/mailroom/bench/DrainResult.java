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
 */
record DrainResult(int messages, long handled, long duplicates, long nanos, CpuMeter.Used cpu,
                   QueueLoader.Counts counts, String error) {

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
