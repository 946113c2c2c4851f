package io.mailroom.support;

import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.annotation.JsonProperty;

import java.time.Instant;
import java.util.List;

/**
 * One email as support staff see it.
 *
 * @param key               the idempotency key naming the business effect, e.g. {@code email-order-102}
 * @param topic             the outbox topic, e.g. {@code email.order_confirmation}
 * @param kind              the topic in words, e.g. "Order confirmation"
 * @param orderId           the aggregate id (the order number for emails about orders)
 * @param recipient         the address the email goes to (from the idempotency descriptor, else the payload); null if no longer known
 * @param recipientName     the name printed in the email, if known
 * @param subject           the subject, if the dispatcher recorded it
 * @param attempts          attempts made so far
 * @param maxAttempts       attempts allowed before the email fails for good
 * @param lastError         the latest error, in the provider's words
 * @param sentAt            when the provider accepted it (or a person confirmed it), else null
 * @param nextAttemptAt     for a waiting email: when the next try is due
 * @param providerMessageId the provider's id for the email, if known
 * @param deliveryRecord    the idempotency record's state (reserved, succeeded, failed, ambiguous), or null
 * @param contentKept       whether the queue row (and so the content) still exists; a resend needs it
 * @param resendOf          for a resend: the key of the email it repeats
 * @param resentAs          keys of the resends of this email
 * @param actions           what may be done to it now: retry, resend, confirm-sent, cancel
 * @param timeline          attempts and actions, oldest first; null in lists
 */
public record EmailView(String key, String topic, String kind, String aggregateType, String orderId,
                        String recipient, String recipientName, String subject, EmailStatus status,
                        int attempts, int maxAttempts, String lastError,
                        Instant createdAt, Instant updatedAt, Instant sentAt, Instant nextAttemptAt,
                        String providerMessageId, String deliveryRecord, boolean contentKept,
                        String resendOf, List<String> resentAs, List<String> actions,
                        @JsonInclude(JsonInclude.Include.NON_NULL) List<TimelineEntry> timeline) {

    public static final String RETRY = "retry";
    public static final String RESEND = "resend";
    public static final String CONFIRM_SENT = "confirm-sent";
    public static final String CANCEL = "cancel";

    public EmailView {
        resentAs = List.copyOf(resentAs);
        actions = List.copyOf(actions);
        timeline = timeline == null ? null : List.copyOf(timeline);
    }

    @JsonProperty("statusText")
    public String statusText() {
        return status.words();
    }

    /** The same email without its timeline (for lists). */
    public EmailView withoutTimeline() {
        return new EmailView(key, topic, kind, aggregateType, orderId, recipient, recipientName, subject, status,
                attempts, maxAttempts, lastError, createdAt, updatedAt, sentAt, nextAttemptAt, providerMessageId,
                deliveryRecord, contentKept, resendOf, resentAs, actions, null);
    }

    /** The actions open in each status: what the buttons and the CLI offer. */
    static List<String> actionsFor(EmailStatus status, boolean contentKept) {
        return switch (status) {
            case FAILED -> List.of(RETRY);
            case PENDING -> List.of(RETRY, CANCEL);
            case SENT -> contentKept ? List.of(RESEND) : List.of();
            case REVIEW -> List.of(CONFIRM_SENT, RESEND);
            case SENDING, CANCELLED -> List.of();
        };
    }
}
