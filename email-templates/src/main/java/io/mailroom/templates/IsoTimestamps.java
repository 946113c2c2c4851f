package io.mailroom.templates;

import java.time.DateTimeException;
import java.time.Instant;
import java.time.OffsetDateTime;
import java.time.ZoneOffset;
import java.time.format.DateTimeParseException;

/**
 * ISO-8601 timestamps with an offset, as {@link OffsetDateTime#parse} reads them, read without the
 * formatter for the shape applications write ({@code 2026-12-05T23:59:30+07:00}, with a fraction of
 * up to nine digits or {@code Z}): a profile found the general parser a tenth of a render. Any other
 * text, and any value out of range, goes to {@link OffsetDateTime#parse}, which accepts or refuses it
 * as before.
 */
final class IsoTimestamps {

    private IsoTimestamps() {
    }

    /** The instant {@code text} names; a {@link DateTimeParseException} when it names none. */
    static Instant parse(String text) {
        Instant fast = common(text);
        return fast != null ? fast : OffsetDateTime.parse(text).toInstant();
    }

    /** {@code yyyy-MM-ddTHH:mm:ss[.f{1,9}](Z|±HH:mm)} read directly; null for anything else. */
    static Instant common(String s) {
        int n = s.length();
        if (n < 20 || s.charAt(4) != '-' || s.charAt(7) != '-' || s.charAt(10) != 'T' || s.charAt(13) != ':'
                || s.charAt(16) != ':') {
            return null;
        }
        int year = digits(s, 0, 4);
        int month = digits(s, 5, 2);
        int day = digits(s, 8, 2);
        int hour = digits(s, 11, 2);
        int minute = digits(s, 14, 2);
        int second = digits(s, 17, 2);
        if ((year | month | day | hour | minute | second) < 0) {
            return null;
        }
        int i = 19;
        int nanos = 0;
        if (s.charAt(i) == '.') {
            int start = ++i;
            while (i < n && i - start < 9 && isDigit(s.charAt(i))) {
                nanos = nanos * 10 + (s.charAt(i) - '0');
                i++;
            }
            if (i == start || (i < n && isDigit(s.charAt(i)))) {
                return null;
            }
            for (int k = i - start; k < 9; k++) {
                nanos *= 10;
            }
        }
        ZoneOffset offset;
        if (i == n - 1 && s.charAt(i) == 'Z') {
            offset = ZoneOffset.UTC;
        } else if (i == n - 6 && (s.charAt(i) == '+' || s.charAt(i) == '-') && s.charAt(i + 3) == ':') {
            int oh = digits(s, i + 1, 2);
            int om = digits(s, i + 4, 2);
            if ((oh | om) < 0 || oh > 18 || om > 59) {
                return null;
            }
            int sign = s.charAt(i) == '-' ? -1 : 1;
            try {
                offset = ZoneOffset.ofHoursMinutes(sign * oh, sign * om);
            } catch (DateTimeException e) {
                return null;
            }
        } else {
            return null;
        }
        try {
            return OffsetDateTime.of(year, month, day, hour, minute, second, nanos, offset).toInstant();
        } catch (DateTimeException e) {
            return null; // out of range (February 30, hour 24...): the general parser says why
        }
    }

    private static int digits(String s, int from, int count) {
        int v = 0;
        for (int i = from; i < from + count; i++) {
            char c = s.charAt(i);
            if (!isDigit(c)) {
                return -1;
            }
            v = v * 10 + (c - '0');
        }
        return v;
    }

    private static boolean isDigit(char c) {
        return c >= '0' && c <= '9';
    }
}
