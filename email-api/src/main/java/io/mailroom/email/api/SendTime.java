package io.mailroom.email.api;

import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.Objects;

/**
 * The rule for when a scheduled email may go out, shared by enqueue and reschedule (and by
 * support's reschedule): not more than a bound ahead of now (refused naming {@code sendAt} and the
 * bound), and a time already past means now. The SQL functions {@code enqueue_email} and
 * {@code reschedule_email} (V22) apply the same rule with the default bound.
 */
public final class SendTime {

    /** The field refusals name. */
    public static final String FIELD = "sendAt";

    private final Clock clock;
    private final Duration maxAhead;

    /**
     * @param clock    the time {@code sendAt} is compared with
     * @param maxAhead how far ahead an email may be scheduled, at least one minute
     */
    public SendTime(Clock clock, Duration maxAhead) {
        this.clock = Objects.requireNonNull(clock, "clock");
        Objects.requireNonNull(maxAhead, "maxAhead");
        if (maxAhead.compareTo(Duration.ofMinutes(1)) < 0) {
            throw new IllegalArgumentException("maxSendAhead must be at least 1 minute, got " + maxAhead);
        }
        this.maxAhead = maxAhead;
    }

    public Duration maxAhead() {
        return maxAhead;
    }

    /**
     * When the email becomes claimable: null (now, in the database's time) for no time or one that
     * is not in the future, else {@code sendAt}.
     *
     * @throws InvalidEmailException naming {@value #FIELD} when it is more than the bound ahead
     */
    public Instant availableAt(Instant sendAt) {
        if (sendAt == null) {
            return null;
        }
        Instant now = clock.instant();
        if (!sendAt.isAfter(now)) {
            return null;
        }
        if (sendAt.isAfter(now.plus(maxAhead))) {
            // the same words as the SQL functions' refusal (V22), which prints the instant as Instant.toString does
            throw new InvalidEmailException(FIELD, "must be at most " + words(maxAhead) + " ahead, got " + sendAt);
        }
        return sendAt;
    }

    /** {@code 30 days}, {@code 12 hours}, else the ISO form. */
    static String words(Duration d) {
        if (d.toSeconds() % 86_400 == 0 && d.toNanosPart() == 0) {
            long days = d.toDays();
            return days + (days == 1 ? " day" : " days");
        }
        if (d.toSeconds() % 3_600 == 0 && d.toNanosPart() == 0) {
            long hours = d.toHours();
            return hours + (hours == 1 ? " hour" : " hours");
        }
        return d.truncatedTo(java.time.temporal.ChronoUnit.SECONDS).toString();
    }
}
