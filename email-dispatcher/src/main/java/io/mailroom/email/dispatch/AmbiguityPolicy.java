package io.mailroom.email.dispatch;

import java.time.Duration;
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
 *       email): send again; the deterministic Message-ID lets mail clients fold the copies.</li>
 * </ul>
 */
public record AmbiguityPolicy(Mode mode, Duration keyWindow) {

    public static final Duration DEFAULT_KEY_WINDOW = Duration.ofHours(24);

    public enum Mode { RESEND_WITH_KEY, REVIEW, RESEND }

    public AmbiguityPolicy {
        Objects.requireNonNull(mode, "mode");
        if (mode == Mode.RESEND_WITH_KEY && (keyWindow == null || keyWindow.isNegative() || keyWindow.isZero())) {
            throw new IllegalArgumentException("MAILROOM_HTTP_KEY_WINDOW must be a positive duration, got " + keyWindow);
        }
    }

    public static AmbiguityPolicy resendWithKey(Duration keyWindow) {
        return new AmbiguityPolicy(Mode.RESEND_WITH_KEY, keyWindow);
    }

    public static AmbiguityPolicy review() {
        return new AmbiguityPolicy(Mode.REVIEW, null);
    }

    public static AmbiguityPolicy resend() {
        return new AmbiguityPolicy(Mode.RESEND, null);
    }

    /** Parses {@code MAILROOM_SMTP_AMBIGUOUS}: {@code review} or {@code resend}. */
    public static AmbiguityPolicy forSmtp(String value) {
        if (value == null || value.isBlank()) {
            return review();
        }
        return switch (value.trim().toLowerCase(Locale.ROOT)) {
            case "review" -> review();
            case "resend" -> resend();
            default -> throw new IllegalArgumentException(
                    "MAILROOM_SMTP_AMBIGUOUS must be 'review' or 'resend', got '" + value + "'");
        };
    }
}
