package io.mailroom.support;

import com.fasterxml.jackson.annotation.JsonProperty;

import java.time.Instant;
import java.util.Locale;

/**
 * One line of an email's history: an attempt the dispatcher made, or an action a person took.
 * Sorted by {@link #at()}.
 */
public sealed interface TimelineEntry {

    /** When it happened (an attempt: when it ended). */
    Instant at();

    /**
     * One attempt to send, as {@code outbox_attempt} recorded it.
     *
     * @param outcome           done, retry, failed, review, lease_expired, released or claim_lost
     * @param providerStatus    the provider's answer code if the transport recorded one (HTTP status, SMTP reply code)
     * @param providerMessageId the id the provider (or our Message-ID) gave the email, if any
     */
    record Attempt(int attempt, Instant startedAt, Instant finishedAt, String outcome, String worker, String error,
                   String transport, String providerStatus, String providerMessageId) implements TimelineEntry {

        @JsonProperty("type")
        public String type() {
            return "attempt";
        }

        @Override
        public Instant at() {
            return finishedAt;
        }

        /** The outcome in words for people who are not engineers. */
        @JsonProperty("outcomeText")
        public String outcomeText() {
            return switch (outcome) {
                case "done" -> "Sent";
                case "retry" -> "Did not go out; will try again";
                case "failed" -> "Did not go out; gave up";
                case "review" -> "Outcome unknown; parked for review";
                case "lease_expired" -> "The sender stopped responding; will try again";
                case "released" -> "Handed back without trying (dispatcher stopping)";
                case "claim_lost" -> "Another sender took over";
                default -> outcome;
            };
        }
    }

    /**
     * An action a person took, as {@code audit_log} recorded it.
     *
     * @param newKey for a resend: the key of the new email
     */
    record Action(Instant at, String actor, String role, String action, String reason, String newKey)
            implements TimelineEntry {

        @JsonProperty("type")
        public String type() {
            return "action";
        }

        /** The action in words, e.g. "Retry requested by alice (support)". */
        @JsonProperty("actionText")
        public String actionText() {
            String what = switch (action) {
                case AuditActions.RETRY -> "Retry requested";
                case AuditActions.RESEND -> newKey == null ? "Resent" : "Resent as " + newKey;
                case AuditActions.RESEND_CREATED -> "Created as a resend";
                case AuditActions.CONFIRM_SENT -> "Confirmed as sent";
                case AuditActions.CANCEL -> "Cancelled";
                default -> action.replace('_', ' ');
            };
            return what + " by " + actor + " (" + role.toLowerCase(Locale.ROOT) + ")";
        }
    }
}
