package io.mailroom.db.sql;

import java.time.Instant;
import java.util.Optional;

/**
 * What PostgreSQL refuses to store, checked before SQL wherever input arrives (webhooks, delivery
 * status notifications, the support API, the order and email APIs), so bad input is a 400 naming
 * its field and not a data exception (SQLSTATE class 22) that reads like a database fault.
 *
 * <ul>
 *   <li>Text cannot hold U+0000 (SQLSTATE 22021 for {@code text}, 22P05 for {@code jsonb}).</li>
 *   <li>Times are accepted from year 1 to year 9999: narrower than {@code timestamptz} (4713 BC to
 *       294276 AD, 22008 beyond), and what ISO-8601's four-digit years, JSON libraries and every
 *       client of ours can write back. A provider's time outside it is a bug, not a moment.</li>
 * </ul>
 */
public final class PgValues {

    public static final Instant MIN_TIME = Instant.parse("0001-01-01T00:00:00Z");
    public static final Instant MAX_TIME = Instant.parse("9999-12-31T23:59:59.999999Z");

    private PgValues() {
    }

    /** The index of the first U+0000 in {@code text}, or -1 (also for null). */
    public static int nulIndex(String text) {
        return text == null ? -1 : text.indexOf('\u0000');
    }

    /** What is wrong with {@code text} for a text column, phrased to follow the field's name; empty if nothing. */
    public static Optional<String> textProblem(String text) {
        int at = nulIndex(text);
        return at < 0 ? Optional.empty()
                : Optional.of("contains U+0000 (NUL) at index " + at + ", which PostgreSQL text cannot hold");
    }

    /** What is wrong with {@code time} for a timestamptz column, phrased to follow the field's name; empty if nothing. */
    public static Optional<String> timeProblem(Instant time) {
        if (time == null || (!time.isBefore(MIN_TIME) && !time.isAfter(MAX_TIME))) {
            return Optional.empty();
        }
        return Optional.of("is " + time + ", outside the times accepted (years 0001 to 9999)");
    }
}
