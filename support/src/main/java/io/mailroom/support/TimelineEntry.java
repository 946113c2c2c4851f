package io.mailroom.support;

import com.fasterxml.jackson.annotation.JsonProperty;
import io.mailroom.outbox.runtime.AttemptDetail;

import java.time.Instant;
import java.util.Locale;
import java.util.Map;

/**
 * One line of an email's history: an attempt the dispatcher made, an action a person took, or what
 * the provider reported after accepting it. Sorted by {@link #at()}.
 */
public sealed interface TimelineEntry {

    /** When it happened (an attempt: when it ended). */
    Instant at();

    /**
     * One attempt to send, as {@code outbox_attempt} recorded it.
     *
     * @param outcome           done, retry, failed, review, lease_expired, interrupted, released or claim_lost
     * @param providerStatus    the provider's answer code if the transport recorded one (HTTP status, SMTP reply code)
     * @param providerMessageId the id the provider (or our Message-ID) gave the email, if any
     * @param providerReply     the server's own words, if the transport kept them: an SMTP server's final
     *                          reply, which names its queue id ({@code 250 2.0.0 Ok: queued as 4Xb2}) for the mail admin
     * @param releasedBecause   for a released attempt, why the email went back without trying:
     *                          {@code not_attempted} (the sender held it back, e.g. its circuit breaker was open;
     *                          the error says why), {@code stopping} (the dispatcher was stopping) or
     *                          {@code orphaned} (its claim was orphaned); null otherwise, or when not recorded
     */
    record Attempt(int attempt, Instant startedAt, Instant finishedAt, String outcome, String worker, String error,
                   String transport, String providerStatus, String providerMessageId, String providerReply,
                   String releasedBecause) implements TimelineEntry {

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
                case "interrupted" -> "The sender's process stopped during this attempt (it may have sent)";
                case "released" -> switch (releasedBecause == null ? "" : releasedBecause) {
                    case AttemptDetail.RELEASE_NOT_ATTEMPTED -> "Held back without trying; will try again";
                    case AttemptDetail.RELEASE_STOPPING -> "Handed back without trying (dispatcher stopping)";
                    case AttemptDetail.RELEASE_ORPHANED -> "Handed back without trying (its claim was orphaned: "
                            + "the dispatcher lost its database session while claiming)";
                    default -> "Handed back without trying";
                };
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
                case AuditActions.RESCHEDULE -> "Rescheduled";
                case AuditActions.CLOSE -> "Closed (won't send)";
                case AuditActions.ERASE -> "Address erased on request";
                case "recipient_suppressed" -> "Suppressed recipients left out of the send";
                default -> action.replace('_', ' ');
            };
            return what + " by " + actor + " (" + role.toLowerCase(Locale.ROOT) + ")";
        }
    }

    /**
     * A delivery event the provider reported (webhook) or a mail server returned (DSN).
     *
     * @param at             when it happened by the provider's clock, else when it arrived
     * @param kind           delivered, deferred, bounced, complained, or unknown (a type we do not act on)
     * @param bounceType     hard or soft for a bounce
     * @param diagnosticCode the provider's or remote server's words ({@code smtp; 550 5.1.1 user unknown})
     * @param applied        false when it arrived after a later state (out of order) and so did not change the email
     * @param recipient      the address it is about, as reported (an email with several recipients has events for each)
     * @param tags           the email's tags the provider echoed with it
     */
    record Delivery(Instant at, Instant receivedAt, String source, String kind, String bounceType, String providerEvent,
                    String diagnosticCode, String description, boolean applied, String recipient,
                    Map<String, String> tags) implements TimelineEntry {

        Delivery(Instant at, Instant receivedAt, String source, String kind, String bounceType, String providerEvent,
                 String diagnosticCode, String description, boolean applied) {
            this(at, receivedAt, source, kind, bounceType, providerEvent, diagnosticCode, description, applied, null, Map.of());
        }

        @JsonProperty("type")
        public String type() {
            return "delivery";
        }

        /** The event in words, e.g. "Bounced (hard)". */
        @JsonProperty("deliveryText")
        public String deliveryText() {
            String what = switch (kind) {
                case "delivered" -> "Delivered";
                case "deferred" -> "Delivery delayed";
                case "bounced" -> "Bounced (" + (bounceType == null ? "?" : bounceType) + ")";
                case "complained" -> "Marked as spam by the recipient";
                default -> "Provider event " + providerEvent + " (not acted on)";
            };
            return applied || kind.equals("unknown") ? what : what + " (reported late; the email's state stays as it was)";
        }
    }
}
