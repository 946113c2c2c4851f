package io.mailroom.support;

import com.fasterxml.jackson.annotation.JsonIgnore;
import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.annotation.JsonProperty;

import java.time.Instant;
import java.util.List;
import java.util.Map;

/**
 * One email as support staff see it.
 *
 * @param key               the idempotency key naming the business effect, e.g. {@code email-order-102}
 * @param topic             the outbox topic, e.g. {@code email.order_confirmation}
 * @param kind              the topic in words, e.g. "Order confirmation"
 * @param about             the business entity it is about ({@code order 102}, {@code user 42}), by its own type
 * @param recipient         the address the email goes to (from the idempotency descriptor, else the payload); null if no longer known
 * @param recipientName     the name printed in the email, if known
 * @param subject           the subject, if the dispatcher recorded it
 * @param attempts          attempts made so far
 * @param maxAttempts       attempts allowed before the email fails for good
 * @param lastError         the latest error, in the provider's words; null once the email is sent (the
 *                          errors of earlier attempts stay in the timeline)
 * @param sentAt            when the provider accepted it (or a person confirmed it), else null
 * @param nextAttemptAt     for a waiting email: when the next try is due
 * @param providerMessageId the provider's id for the email, if known
 * @param providerReply     for a sent email, the server's reply to the send if the transport kept it (an SMTP
 *                          server's names its queue id: {@code 250 2.0.0 Ok: queued as 4Xb2})
 * @param deliveryRecord    the idempotency record's state (reserved, succeeded, failed, ambiguous), or null
 * @param contentKept       whether the queue row (and so the content) still exists; a resend needs it
 * @param resendOf          for a resend: the key of the email it repeats
 * @param resentAs          keys of the resends of this email
 * @param actions           what may be done to it now, the main one first: retry, resend, confirm-sent, cancel, close
 * @param mainAction        the action most likely to help, shown as the main button; null when none is
 *                          suggested (a sent email may be resent, but nothing needs doing). After a
 *                          permanent failure (a 5xx refusal, an email that cannot be rendered) it is
 *                          close, not retry: the same send would fail the same way
 * @param timeline          attempts and actions, oldest first; null in lists
 * @param rendering         what the email was rendered to when it was last sent (template, version, locale,
 *                          subject, text; the HTML part through {@link #consolePreviewUrl()} or the API's
 *                          preview route); null in lists and when none is stored (not sent yet, or sent
 *                          before renderings were kept)
 * @param delivery          what the provider reported after accepting it; null when nothing yet
 * @param suppression       the suppression in force for the recipient, with its link; null when there is none.
 *                          While it {@linkplain SuppressionNote#blocksRetry() blocks a retry}, retry is not
 *                          among the actions: the same send would be stopped the same way
 * @param recipients        every recipient (To, Cc, Bcc) with its own delivery state ({@link RecipientView}); null in lists
 * @param tags              the tags the email was sent with ({@code category=invoice}); null in lists
 * @param attachments       the email's attachments and inline parts (listed, not downloadable); null in lists,
 *                          empty when it has none
 */
public record EmailView(String key, String topic, String kind, About about,
                        String recipient, String recipientName, String subject, EmailStatus status,
                        int attempts, int maxAttempts, String lastError,
                        Instant createdAt, Instant updatedAt, Instant sentAt, Instant nextAttemptAt,
                        String providerMessageId, String providerReply, String deliveryRecord, boolean contentKept,
                        String resendOf, List<String> resentAs, List<String> actions, String mainAction,
                        @JsonInclude(JsonInclude.Include.NON_NULL) List<TimelineEntry> timeline,
                        @JsonInclude(JsonInclude.Include.NON_NULL) Rendering rendering, Delivery delivery,
                        SuppressionNote suppression,
                        @JsonInclude(JsonInclude.Include.NON_NULL) List<RecipientView> recipients,
                        @JsonInclude(JsonInclude.Include.NON_NULL) Map<String, String> tags,
                        @JsonInclude(JsonInclude.Include.NON_NULL) List<AttachmentView> attachments) {

    public static final String RETRY = "retry";
    public static final String RESEND = "resend";
    public static final String CONFIRM_SENT = "confirm-sent";
    public static final String CANCEL = "cancel";
    public static final String CLOSE = "close";
    /** A scheduled email is moved to another send time (or now). */
    public static final String RESCHEDULE = "reschedule";

    public EmailView {
        resentAs = List.copyOf(resentAs);
        actions = List.copyOf(actions);
        timeline = timeline == null ? null : List.copyOf(timeline);
        recipients = recipients == null ? null : List.copyOf(recipients);
        tags = tags == null ? null : java.util.Collections.unmodifiableMap(new java.util.LinkedHashMap<>(tags));
        attachments = attachments == null ? null : List.copyOf(attachments);
    }

    /** An email as lists show it: without its recipients' list, tags and attachments. */
    public EmailView(String key, String topic, String kind, About about,
                     String recipient, String recipientName, String subject, EmailStatus status,
                     int attempts, int maxAttempts, String lastError,
                     Instant createdAt, Instant updatedAt, Instant sentAt, Instant nextAttemptAt,
                     String providerMessageId, String providerReply, String deliveryRecord, boolean contentKept,
                     String resendOf, List<String> resentAs, List<String> actions, String mainAction,
                     List<TimelineEntry> timeline, Rendering rendering, Delivery delivery, SuppressionNote suppression) {
        this(key, topic, kind, about, recipient, recipientName, subject, status, attempts, maxAttempts,
                lastError, createdAt, updatedAt, sentAt, nextAttemptAt, providerMessageId, providerReply, deliveryRecord,
                contentKept, resendOf, resentAs, actions, mainAction, timeline, rendering, delivery, suppression, null, null, null);
    }

    /** The same email with its recipients and tags (the detail). */
    public EmailView withRecipients(List<RecipientView> recipients, Map<String, String> tags) {
        return new EmailView(key, topic, kind, about, recipient, recipientName, subject, status,
                attempts, maxAttempts, lastError, createdAt, updatedAt, sentAt, nextAttemptAt, providerMessageId,
                providerReply, deliveryRecord, contentKept, resendOf, resentAs, actions, mainAction, timeline, rendering, delivery,
                suppression, recipients, tags, attachments);
    }

    /** An email whose recipient is not suppressed. */
    public EmailView(String key, String topic, String kind, About about,
                     String recipient, String recipientName, String subject, EmailStatus status,
                     int attempts, int maxAttempts, String lastError,
                     Instant createdAt, Instant updatedAt, Instant sentAt, Instant nextAttemptAt,
                     String providerMessageId, String providerReply, String deliveryRecord, boolean contentKept,
                     String resendOf, List<String> resentAs, List<String> actions, String mainAction,
                     List<TimelineEntry> timeline, Rendering rendering, Delivery delivery) {
        this(key, topic, kind, about, recipient, recipientName, subject, status, attempts, maxAttempts,
                lastError, createdAt, updatedAt, sentAt, nextAttemptAt, providerMessageId, providerReply, deliveryRecord,
                contentKept, resendOf, resentAs, actions, mainAction, timeline, rendering, delivery, null);
    }

    @JsonProperty("statusText")
    public String statusText() {
        return status.words();
    }

    /** "Did it arrive?" in words: the provider's report when there is one, else what Mailroom knows. */
    @JsonProperty("arrivalText")
    public String arrivalText() {
        if (delivery != null) {
            String detail = delivery.detail();
            String said = detail == null ? "" : detail.replaceFirst("^(hard|soft) bounce(: )?", "");
            return switch (delivery.state()) {
                case "delivered" -> "Yes: delivered to the recipient's mailbox";
                case "deferred" -> "Not yet: delivery is delayed; the provider is still trying";
                case "bounced" -> "No: " + delivery.stateText().toLowerCase(java.util.Locale.ROOT)
                        + (said.isBlank() ? "" : ": " + said);
                case "complained" -> "Yes, but the recipient marked it as spam";
                default -> delivery.stateText();
            };
        }
        return switch (status) {
            case SENT -> "Accepted by the provider; no delivery report yet";
            case PENDING, SENDING -> "Not sent yet";
            case SCHEDULED -> "Not yet: scheduled for " + nextAttemptAt;
            case FAILED -> lastError != null && lastError.startsWith("suppressed (")
                    ? "No: not sent, the address is " + lastError : "No: not sent (gave up)";
            case REVIEW -> "Unknown: the send's outcome is unknown; parked for review";
            case CANCELLED -> "No: cancelled before it was sent";
            case CLOSED -> "No: closed without sending";
        };
    }

    /**
     * Which provider accepted it: the transport of the attempt that sent it ({@code smtp}, {@code http},
     * {@code capture}; with fallback providers, the one that took it); null if not sent, and in lists.
     */
    @JsonProperty("sentBy")
    public String sentBy() {
        String by = null;
        for (TimelineEntry t : timeline == null ? List.<TimelineEntry>of() : timeline) {
            if (t instanceof TimelineEntry.Attempt a && "done".equals(a.outcome()) && a.transport() != null) {
                by = a.transport();
            }
        }
        return by;
    }

    /** For a scheduled email, the time it is sent at (its {@code nextAttemptAt}); else null. */
    @JsonProperty("sendAt")
    public Instant sendAt() {
        return status == EmailStatus.SCHEDULED ? nextAttemptAt : null;
    }

    /** The same email without its timeline (for lists). */
    public EmailView withoutTimeline() {
        return new EmailView(key, topic, kind, about, recipient, recipientName, subject, status,
                attempts, maxAttempts, lastError, createdAt, updatedAt, sentAt, nextAttemptAt, providerMessageId,
                providerReply, deliveryRecord, contentKept, resendOf, resentAs, actions, mainAction, null, rendering, delivery,
                suppression);
    }

    /**
     * The console path of the HTML part ({@code GET /console/emails/{key}/preview}), for an
     * {@code <iframe sandbox>}; null when no HTML part is stored.
     */
    @JsonIgnore
    public String consolePreviewUrl() {
        return rendering == null || !rendering.hasHtml() ? null : ConsoleRoutes.previewPath(key);
    }

    /** What is known about an email that decides its actions, beyond its status. */
    record Facts(boolean contentKept, boolean superseded, boolean failedPermanently, boolean providerAccepted,
                 boolean suppressed) {
    }

    /**
     * The actions open in each status, the main one first: what the buttons and the CLI offer.
     * <ul>
     *   <li>failed: retry and close (won't send); close comes first after a permanent failure, which a
     *       retry repeats. An email that was resent (superseded) is never retried: the resend is its
     *       second chance, and a retry would send it twice; it can only be closed. Nor one whose recipient
     *       is suppressed: the retry would be stopped again; it is offered once the suppression is lifted.</li>
     *   <li>pending: retry now (not while the recipient is suppressed) and cancel.</li>
 *   <li>scheduled: reschedule (another time, or now) and cancel.</li>
     *   <li>review: confirm it was sent, resend it (needs the content), or close it as won't send
     *       (unless the delivery record says the provider accepted it: then it was sent).</li>
     * </ul>
     */
    static List<String> actionsFor(EmailStatus status, Facts f) {
        return switch (status) {
            case FAILED -> f.superseded() || f.suppressed() ? List.of(CLOSE)
                    : f.failedPermanently() ? List.of(CLOSE, RETRY) : List.of(RETRY, CLOSE);
            case PENDING -> f.suppressed() ? List.of(CANCEL) : List.of(RETRY, CANCEL);
            case SCHEDULED -> List.of(RESCHEDULE, CANCEL);
            case SENT -> f.contentKept() ? List.of(RESEND) : List.of();
            case REVIEW -> {
                List<String> open = new java.util.ArrayList<>(List.of(CONFIRM_SENT));
                if (f.contentKept()) {
                    open.add(RESEND);
                }
                if (!f.providerAccepted()) {
                    open.add(CLOSE);
                }
                yield List.copyOf(open);
            }
            case SENDING, CANCELLED, CLOSED -> List.of();
        };
    }

    /** The main action among {@code actions}: the first, except for a sent email, where none is suggested. */
    static String mainActionOf(EmailStatus status, List<String> actions) {
        return status == EmailStatus.SENT || actions.isEmpty() ? null : actions.getFirst();
    }
}
