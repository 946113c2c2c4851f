package io.mailroom.support;

import java.util.ArrayList;
import java.util.List;

import static io.mailroom.support.QueueChart.fmt;
import static io.mailroom.support.QueueChart.niceMax;

/**
 * One topic's chart on the queue page, as inline SVG: bars of sent, failed and bounced per bucket on
 * the left scale, the emails waiting as a line on the right scale (broken where no sample was
 * taken). Coordinates are ready-formatted, as {@link QueueChart}'s.
 *
 * @param id        a unique element id on the page
 * @param lines     the waiting line's pieces, each a {@code points} list of a polyline
 * @param startWords the left edge in words ("24 h ago"); middleWords the middle
 */
public record TopicChart(String id, String topic, long sent, long failed, long bounced, Long waiting, int width, int height,
                         int left, int right, int countAxisX, int depthAxisX, int headY, int footY, int middle,
                         List<QueueChart.Grid> grid, List<QueueChart.Bar> bars, List<String> lines, String startWords,
                         String middleWords, String stepWords) {

    static final int WIDTH = 760;
    static final int HEIGHT = 170;

    static List<TopicChart> of(TopicStats stats) {
        List<TopicChart> out = new ArrayList<>();
        int n = 0;
        for (TopicStats.Topic t : stats.topics()) {
            out.add(of("topic-chart-" + (++n), t, stats.range()));
        }
        return List.copyOf(out);
    }

    static TopicChart of(String id, TopicStats.Topic topic, ChartRange range) {
        int left = 44;
        int right = 44;
        int top = 22;
        int bottom = 28;
        int plotW = WIDTH - left - right;
        int plotH = HEIGHT - top - bottom;
        List<TopicStats.Bucket> buckets = topic.buckets();
        long maxCount = 1;
        long maxWaiting = 1;
        for (TopicStats.Bucket b : buckets) {
            maxCount = Math.max(maxCount, Math.max(b.sent(), Math.max(b.failed(), b.bounced())));
            maxWaiting = Math.max(maxWaiting, b.waiting() == null ? 0 : b.waiting());
        }
        maxCount = niceMax(maxCount);
        maxWaiting = niceMax(maxWaiting);
        List<QueueChart.Grid> grid = new ArrayList<>();
        for (int i = 0; i <= 4; i++) {
            double y = top + plotH - plotH * i / 4.0;
            grid.add(new QueueChart.Grid(fmt(y), fmt(y + 4), maxCount * i / 4, maxWaiting * i / 4));
        }
        double slot = plotW / (double) Math.max(1, buckets.size());
        double bar = Math.max(0.5, (slot - 1) / 3);
        List<QueueChart.Bar> bars = new ArrayList<>();
        List<String> lines = new ArrayList<>();
        StringBuilder line = new StringBuilder();
        for (int i = 0; i < buckets.size(); i++) {
            TopicStats.Bucket b = buckets.get(i);
            double x = left + i * slot + 0.5;
            addBar(bars, "sent", x, b.sent(), maxCount, top, plotH, bar);
            addBar(bars, "failed", x + bar, b.failed(), maxCount, top, plotH, bar);
            addBar(bars, "bounced", x + 2 * bar, b.bounced(), maxCount, top, plotH, bar);
            if (b.waiting() == null) {
                flush(lines, line);
                continue;
            }
            double px = left + i * slot + slot / 2;
            double py = top + plotH - plotH * b.waiting() / (double) maxWaiting;
            line.append(line.isEmpty() ? "" : " ").append(fmt(px)).append(',').append(fmt(py));
        }
        flush(lines, line);
        return new TopicChart(id, topic.topic(), topic.sent(), topic.failed(), topic.bounced(), topic.waiting(), WIDTH, HEIGHT,
                left, left + plotW, left - 6, left + plotW + 6, top - 10, HEIGHT - 8, left + plotW / 2, List.copyOf(grid),
                List.copyOf(bars), List.copyOf(lines), range.startWords(), range.middleWords(), stepWords(range));
    }

    private static void addBar(List<QueueChart.Bar> bars, String kind, double x, long value, long max, int top, int plotH,
                               double width) {
        if (value > 0) {
            double h = plotH * value / (double) max;
            bars.add(new QueueChart.Bar(kind, fmt(x), fmt(top + plotH - h), fmt(width), fmt(h), value));
        }
    }

    /** A piece of the waiting line is drawn once it has two points; a lone sample is drawn as a dot-long line. */
    private static void flush(List<String> lines, StringBuilder line) {
        if (!line.isEmpty()) {
            String points = line.toString();
            lines.add(points.contains(" ") ? points : points + " " + points);
            line.setLength(0);
        }
    }

    private static String stepWords(ChartRange range) {
        return switch (range) {
            case HOUR -> "per minute";
            case DAY -> "per 15 minutes";
            case WEEK -> "per hour";
        };
    }
}
