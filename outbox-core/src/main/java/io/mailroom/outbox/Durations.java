package io.mailroom.outbox;

import java.time.DateTimeException;
import java.time.Duration;
import java.util.Locale;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The one way a duration is read from text, for every setting, option and request parameter:
 * {@code 250ms}, {@code 30s}, {@code 5m}, {@code 2h}, {@code 1d}, {@code 1w}, ISO-8601 ({@code PT30S},
 * {@code P1DT2H}) or a lone {@code 0}. Anything else, a negative duration included, is an
 * {@link InvalidSettingException} naming the setting. A bare number other than 0 is refused: whether
 * {@code 30} means seconds or milliseconds is a guess this parser does not make.
 */
public final class Durations {

    /** At most 12 digits: even 999999999999w stays far inside {@link Duration}'s range. */
    private static final Pattern SHORT = Pattern.compile("(\\d{1,12})\\s*(ms|s|m|h|d|w)");
    private static final int MAX_ECHO = 40;

    private Durations() {
    }

    /**
     * {@code value} as a duration, zero or positive.
     *
     * @param setting named in the error, e.g. {@code MAILROOM_LEASE} or {@code --load}
     */
    public static Duration parse(String setting, String value) {
        if (value == null || value.isBlank()) {
            throw new InvalidSettingException(setting, setting + " is required");
        }
        String v = value.strip();
        if (v.equals("0")) {
            return Duration.ZERO;
        }
        Matcher m = SHORT.matcher(v.toLowerCase(Locale.ROOT));
        if (m.matches()) {
            long n = Long.parseLong(m.group(1));
            return switch (m.group(2)) {
                case "ms" -> Duration.ofMillis(n);
                case "s" -> Duration.ofSeconds(n);
                case "m" -> Duration.ofMinutes(n);
                case "h" -> Duration.ofHours(n);
                case "d" -> Duration.ofDays(n);
                default -> Duration.ofDays(7 * n);
            };
        }
        Duration iso = v.length() <= 64 ? iso(v) : null;
        if (iso == null) {
            throw new InvalidSettingException(setting, setting + " must be a duration like 500ms, 10s, 5m or PT10S, got '"
                    + echo(value) + "'");
        }
        if (iso.isNegative()) {
            throw new InvalidSettingException(setting, setting + " must not be negative, got '" + echo(value) + "'");
        }
        return iso;
    }

    /** Compact form for messages and configuration logs, which {@link #parse} reads back: 1500ms, 10s, 2m, 3h, 1d. */
    public static String format(Duration d) {
        if (d == null) {
            return "null";
        }
        long ms = d.toMillis();
        if (ms != 0 && ms % 86_400_000 == 0) {
            return ms / 86_400_000 + "d";
        }
        if (ms != 0 && ms % 3_600_000 == 0) {
            return ms / 3_600_000 + "h";
        }
        if (ms != 0 && ms % 60_000 == 0) {
            return ms / 60_000 + "m";
        }
        if (ms != 0 && ms % 1000 == 0) {
            return ms / 1000 + "s";
        }
        return ms + "ms";
    }

    private static Duration iso(String v) {
        try {
            return Duration.parse(v);
        } catch (DateTimeException | ArithmeticException e) {
            return null;
        }
    }

    private static String echo(String value) {
        return value.length() <= MAX_ECHO ? value : value.substring(0, MAX_ECHO) + "...";
    }
}
