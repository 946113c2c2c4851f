package io.mailroom.email.transport.http;

import java.time.Duration;
import java.time.Instant;
import java.time.ZonedDateTime;
import java.time.format.DateTimeFormatter;
import java.time.format.DateTimeParseException;

/**
 * Parses an HTTP {@code Retry-After} value (RFC 9110 section 10.2.3): either delay-seconds or an
 * HTTP-date. A date in the past means "now" (zero). Values beyond {@link #MAX} are capped there: a
 * provider asking for a week is treated as asking for a day, after which the dispatcher's own
 * backoff and attempt limit apply. Unparsable values are ignored (null).
 */
public final class RetryAfter {

    public static final Duration MAX = Duration.ofDays(1);

    private RetryAfter() {
    }

    public static Duration parse(String value, Instant now) {
        if (value == null || value.isBlank()) {
            return null;
        }
        String v = value.strip();
        if (v.chars().allMatch(Character::isDigit)) {
            if (v.length() > 9) {
                return MAX;
            }
            return min(Duration.ofSeconds(Long.parseLong(v)));
        }
        try {
            Instant at = ZonedDateTime.parse(v, DateTimeFormatter.RFC_1123_DATE_TIME).toInstant();
            Duration d = Duration.between(now, at);
            return d.isNegative() ? Duration.ZERO : min(d);
        } catch (DateTimeParseException e) {
            return null;
        }
    }

    private static Duration min(Duration d) {
        return d.compareTo(MAX) > 0 ? MAX : d;
    }
}
