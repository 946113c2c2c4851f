package io.mailroom.support;

import com.fasterxml.jackson.annotation.JsonValue;
import io.mailroom.outbox.admin.TopicRollup.Resolution;

import java.time.Duration;
import java.time.Instant;
import java.util.Arrays;
import java.util.stream.Collectors;

/**
 * The time ranges of the charts by topic, each read from the rollup resolution that keeps it cheap:
 * the last hour by minute, the last day by quarter hour (both from minute buckets), the last week by
 * hour (from hour buckets: 168 rows per topic).
 */
public enum ChartRange {
    HOUR("1h", Resolution.MINUTE, Duration.ofMinutes(1), 60, "60 min ago", "30 min ago"),
    DAY("24h", Resolution.MINUTE, Duration.ofMinutes(15), 96, "24 h ago", "12 h ago"),
    WEEK("7d", Resolution.HOUR, Duration.ofHours(1), 168, "7 days ago", "3½ days ago");

    private final String code;
    private final Resolution resolution;
    private final Duration step;
    private final int buckets;
    private final String startWords;
    private final String middleWords;

    ChartRange(String code, Resolution resolution, Duration step, int buckets, String startWords, String middleWords) {
        this.code = code;
        this.resolution = resolution;
        this.step = step;
        this.buckets = buckets;
        this.startWords = startWords;
        this.middleWords = middleWords;
    }

    /** As the API and the console's links write it: {@code 1h}, {@code 24h}, {@code 7d}. */
    @JsonValue
    public String code() {
        return code;
    }

    public Resolution resolution() {
        return resolution;
    }

    public Duration step() {
        return step;
    }

    public int buckets() {
        return buckets;
    }

    /** The chart's left edge in words ("24 h ago"). */
    public String startWords() {
        return startWords;
    }

    /** The chart's middle in words ("12 h ago"). */
    public String middleWords() {
        return middleWords;
    }

    /** The end of the range read at {@code now}: the end of the step that holds {@code now}. */
    public Instant end(Instant now) {
        long s = step.toSeconds();
        return Instant.ofEpochSecond(Math.floorDiv(now.getEpochSecond(), s) * s + s);
    }

    /** The range named {@code raw}; the last hour when absent; else a 400 naming {@code parameter}. */
    public static ChartRange parse(String parameter, String raw) {
        if (raw == null || raw.isBlank()) {
            return HOUR;
        }
        for (ChartRange r : values()) {
            if (r.code.equals(raw.strip())) {
                return r;
            }
        }
        throw new InvalidParameterException(parameter, parameter + " must be one of "
                + Arrays.stream(values()).map(ChartRange::code).collect(Collectors.joining(", ")));
    }
}
