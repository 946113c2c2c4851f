package io.mailroom.email.dispatch;

import io.mailroom.idempotency.Reservation;
import io.mailroom.outbox.runtime.Backoff;

import java.time.Duration;
import java.time.Instant;
import java.util.Locale;
import java.util.Objects;

/**
 * What to do when an earlier send of the same effect may or may not have reached the provider
 * (the process died after sending, or the provider accepted and never answered). Explicit per
 * transport, because only the transport knows whether the provider can deduplicate.
 *
 * <ul>
 *   <li>{@link Mode#RESEND_WITH_KEY}: the provider honours an idempotency key (HTTP APIs): send
 *       again with the same key, which is safe, but only while the provider still remembers the
 *       key ({@code keyWindow}, counted from the first reservation); after it, park for review.</li>
 *   <li>{@link Mode#REVIEW}: at most once (the SMTP default): send nothing more and park the
 *       message in review for a person to confirm-sent or resend.</li>
 *   <li>{@link Mode#RESEND}: at least once (SMTP, when a duplicate is better than a missing
 *       email): send again, at most {@code maxResends} times per effect and {@link #resendDelay}
 *       apart, then park for review. Each repeat may be one more copy in the customer's inbox (a
 *       server that takes the data and never answers delivers every one of them), so the repeats
 *       are bounded and spaced; the deterministic Message-ID lets mail clients fold the copies.</li>
 * </ul>
 *
 * @param maxResends for {@link Mode#RESEND}: how many times one effect's unknown outcome may be sent
 *                   again ({@code MAILROOM_SMTP_AMBIGUOUS_RESENDS}); 0 for the other modes
 */
public record AmbiguityPolicy(Mode mode, Duration keyWindow, int maxResends) {

    public static final Duration DEFAULT_KEY_WINDOW = Duration.ofHours(24);
    public static final int DEFAULT_MAX_RESENDS = 1;
    public static final int MAX_RESENDS_LIMIT = 10;
    /**
     * Spacing of resends: 1 min before the first, doubling to at most 30 min, with up to a quarter
     * taken off at random so that emails stuck at the same server do not come back together. A
     * server that just swallowed a message without answering rarely recovers within seconds.
     */
    public static final Backoff RESEND_BACKOFF = new Backoff(Duration.ofMinutes(1), Duration.ofMinutes(30), 2.0, 0.25);

    public enum Mode { RESEND_WITH_KEY, REVIEW, RESEND }

    public AmbiguityPolicy {
        Objects.requireNonNull(mode, "mode");
        if (mode == Mode.RESEND_WITH_KEY && (keyWindow == null || keyWindow.isNegative() || keyWindow.isZero())) {
            throw new IllegalArgumentException("MAILROOM_HTTP_KEY_WINDOW must be a positive duration, got " + keyWindow);
        }
        if (mode == Mode.RESEND && (maxResends < 1 || maxResends > MAX_RESENDS_LIMIT)) {
            throw new IllegalArgumentException("MAILROOM_SMTP_AMBIGUOUS_RESENDS must be 1.." + MAX_RESENDS_LIMIT
                    + " (use MAILROOM_SMTP_AMBIGUOUS=review for none), got " + maxResends);
        }
        if (mode != Mode.RESEND && maxResends != 0) {
            throw new IllegalArgumentException("MAILROOM_SMTP_AMBIGUOUS_RESENDS applies only with MAILROOM_SMTP_AMBIGUOUS=resend");
        }
    }

    public static AmbiguityPolicy resendWithKey(Duration keyWindow) {
        return new AmbiguityPolicy(Mode.RESEND_WITH_KEY, keyWindow, 0);
    }

    public static AmbiguityPolicy review() {
        return new AmbiguityPolicy(Mode.REVIEW, null, 0);
    }

    /** Resend mode with {@link #DEFAULT_MAX_RESENDS}. */
    public static AmbiguityPolicy resend() {
        return resend(DEFAULT_MAX_RESENDS);
    }

    public static AmbiguityPolicy resend(int maxResends) {
        return new AmbiguityPolicy(Mode.RESEND, null, maxResends);
    }

    /**
     * Whether the effect whose earlier outcome is {@code unknown} may be sent again now: within the
     * key window for {@link Mode#RESEND_WITH_KEY}, while fewer than {@code maxResends} repeats were
     * made for {@link Mode#RESEND}, never for {@link Mode#REVIEW}.
     */
    public boolean mayRepeat(Reservation.OutcomeUnknown unknown, Instant now) {
        return switch (mode) {
            case REVIEW -> false;
            case RESEND -> unknown.repeats() < maxResends;
            case RESEND_WITH_KEY -> Duration.between(unknown.firstReservedAt(), now).compareTo(keyWindow) < 0;
        };
    }

    /**
     * For {@link Mode#RESEND}: whether an attempt that ended with an unknown outcome, after
     * {@code repeatsSoFar} repeats of the effect (this attempt's included), may be followed by another.
     */
    public boolean resendsLeft(int repeatsSoFar) {
        return mode == Mode.RESEND && repeatsSoFar < maxResends;
    }

    /** How long to wait before resend number {@code resend} (1 for the first). */
    public Duration resendDelay(int resend) {
        return RESEND_BACKOFF.delay(resend);
    }

    /**
     * Parses {@code MAILROOM_SMTP_AMBIGUOUS} ({@code review} or {@code resend}) and, for
     * {@code resend}, {@code MAILROOM_SMTP_AMBIGUOUS_RESENDS} ({@code resends}, null for the default).
     */
    public static AmbiguityPolicy forSmtp(String value, Integer resends) {
        String mode = value == null || value.isBlank() ? "review" : value.trim().toLowerCase(Locale.ROOT);
        return switch (mode) {
            case "review" -> {
                if (resends != null) {
                    throw new IllegalArgumentException("MAILROOM_SMTP_AMBIGUOUS_RESENDS applies only with"
                            + " MAILROOM_SMTP_AMBIGUOUS=resend, which is not set");
                }
                yield review();
            }
            case "resend" -> resend(resends == null ? DEFAULT_MAX_RESENDS : resends);
            default -> throw new IllegalArgumentException(
                    "MAILROOM_SMTP_AMBIGUOUS must be 'review' or 'resend', got '" + value + "'");
        };
    }

    /** {@link #forSmtp(String, Integer)} with the default number of resends. */
    public static AmbiguityPolicy forSmtp(String value) {
        return forSmtp(value, null);
    }
}
