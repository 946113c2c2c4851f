package io.mailroom.bench;

import java.util.Arrays;

/** Exact percentiles of a set of durations (nearest rank over the sorted values). */
record Percentiles(int count, double p50Ms, double p95Ms, double p99Ms, double maxMs, double meanMs) {

    static Percentiles ofNanos(long[] nanos) {
        if (nanos.length == 0) {
            return new Percentiles(0, Double.NaN, Double.NaN, Double.NaN, Double.NaN, Double.NaN);
        }
        long[] s = nanos.clone();
        Arrays.sort(s);
        double sum = 0;
        for (long v : s) {
            sum += v;
        }
        return new Percentiles(s.length, rank(s, 0.50), rank(s, 0.95), rank(s, 0.99), s[s.length - 1] / 1e6,
                sum / s.length / 1e6);
    }

    private static double rank(long[] sorted, double q) {
        int i = (int) Math.ceil(q * sorted.length) - 1;
        return sorted[Math.max(0, Math.min(sorted.length - 1, i))] / 1e6;
    }
}
