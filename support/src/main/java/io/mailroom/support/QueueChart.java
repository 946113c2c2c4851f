package io.mailroom.support;

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * The queue chart's geometry: bars of sent and failed tries per minute on the left scale, the
 * number of emails waiting as a line on the right scale. Coordinates are ready-formatted.
 */
public record QueueChart(int width, int height, int left, int right, int countAxisX, int depthAxisX, int headY, int footY,
                         int middle, List<Grid> grid, List<Bar> bars, String points) {

    /** A horizontal grid line with its labels on both scales. */
    public record Grid(String y, String labelY, long count, long depth) {
    }

    /** @param kind sent or failed (its CSS class and its words) */
    public record Bar(String kind, String x, String y, String width, String height, long value) {
    }

    static QueueChart of(List<QueueStats.Minute> minutes) {
        int w = 760;
        int h = 220;
        int left = 44;
        int right = 44;
        int top = 22;
        int bottom = 28;
        int plotW = w - left - right;
        int plotH = h - top - bottom;
        long maxCount = 1;
        long maxDepth = 1;
        for (QueueStats.Minute m : minutes) {
            maxCount = Math.max(maxCount, Math.max(m.sent(), m.failed()));
            maxDepth = Math.max(maxDepth, m.pendingDepth());
        }
        maxCount = niceMax(maxCount);
        maxDepth = niceMax(maxDepth);
        int n = Math.max(1, minutes.size());
        double slot = plotW / (double) n;
        double bar = Math.max(1, (slot - 2) / 2);
        List<Grid> grid = new ArrayList<>();
        for (int i = 0; i <= 4; i++) {
            double y = top + plotH - plotH * i / 4.0;
            grid.add(new Grid(fmt(y), fmt(y + 4), maxCount * i / 4, maxDepth * i / 4));
        }
        List<Bar> bars = new ArrayList<>();
        StringBuilder points = new StringBuilder();
        for (int i = 0; i < minutes.size(); i++) {
            QueueStats.Minute m = minutes.get(i);
            double x = left + i * slot + 1;
            double hs = plotH * m.sent() / (double) maxCount;
            double hf = plotH * m.failed() / (double) maxCount;
            if (m.sent() > 0) {
                bars.add(new Bar("sent", fmt(x), fmt(top + plotH - hs), fmt(bar), fmt(hs), m.sent()));
            }
            if (m.failed() > 0) {
                bars.add(new Bar("failed", fmt(x + bar), fmt(top + plotH - hf), fmt(bar), fmt(hf), m.failed()));
            }
            double px = left + i * slot + slot / 2;
            double py = top + plotH - plotH * m.pendingDepth() / (double) maxDepth;
            points.append(i == 0 ? "" : " ").append(fmt(px)).append(',').append(fmt(py));
        }
        return new QueueChart(w, h, left, left + plotW, left - 6, left + plotW + 6, top - 10, h - 8, left + plotW / 2,
                List.copyOf(grid), List.copyOf(bars), points.toString());
    }

    /** The smallest multiple of 4 at or above {@code max}, so the four grid lines carry whole numbers. */
    static long niceMax(long max) {
        long step = Math.max(1, (max + 3) / 4);
        return step * 4;
    }

    static String fmt(double v) {
        return String.format(Locale.ROOT, "%.1f", v);
    }
}
