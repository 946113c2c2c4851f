package io.mailroom.support;

import io.mailroom.outbox.admin.AuditTrail;

import com.fasterxml.jackson.databind.JsonNode;
import io.mailroom.db.sql.Redaction;
import io.mailroom.delivery.Addresses;
import io.mailroom.delivery.suppression.SuppressionList;
import io.mailroom.outbox.runtime.AttemptDetail;
import org.jooq.DSLContext;

import java.time.Instant;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;

/**
 * Turns the store's rows into what the surfaces show: an {@link EmailView} per email with its status
 * derived from the effect and queue rows, the actions that status allows, its timeline (attempts,
 * support actions, delivery events, sorted by time) and the suppression in force for its recipient.
 * Every view of a page is built from a fixed number of queries for the whole page, inside the
 * caller's transaction, so a page shows one moment.
 */
final class SupportViews {

    /** The recipient of an email whose address was erased ({@link Erasures}), as views show it. */
    static final String ERASED = "erased";

    /** How the dispatcher's last error of an email stopped by a suppression begins. */
    static final String SUPPRESSED_PREFIX = "suppressed (";

    private final SupportStore store;
    private final SuppressionList suppressionList;
    /** What a scheduled email's send time is compared with. */
    private final java.time.Clock clock;

    SupportViews(SupportStore store, SuppressionList suppressionList) {
        this(store, suppressionList, java.time.Clock.systemUTC());
    }

    SupportViews(SupportStore store, SuppressionList suppressionList, java.time.Clock clock) {
        this.store = store;
        this.suppressionList = suppressionList;
        this.clock = clock;
    }

    /** The status support shows for {@code row} now: {@link EmailStatus#SCHEDULED} while its send time is ahead. */
    EmailStatus status(SupportStore.EmailRow row) {
        return EmailStatus.derive(row.effectStatus(), row.queueStatus(), row.availableAt(), row.queueAttempts(), clock.instant());
    }

    List<EmailView> views(DSLContext tx, List<SupportStore.EmailRow> rows, boolean withTimeline) {
        if (rows.isEmpty()) {
            return List.of();
        }
        List<String> keys = rows.stream().map(SupportStore.EmailRow::key).toList();
        Map<String, List<String>> resentAs = new HashMap<>();
        for (io.mailroom.outbox.admin.EffectHistory.Resend r : store.resendsOf(tx, rows)) {
            resentAs.computeIfAbsent(r.resendOf(), k -> new ArrayList<>()).add(r.key());
        }
        Map<String, List<SupportStore.AttemptRow>> attempts = new HashMap<>();
        for (SupportStore.AttemptRow a : store.attempts(tx, keys)) {
            attempts.computeIfAbsent(a.key(), k -> new ArrayList<>()).add(a);
        }
        Map<String, Boolean> permanent = new HashMap<>();
        attempts.forEach((k, list) -> permanent.put(k, failedPermanently(list.getLast())));
        Map<String, List<AuditTrail.Entry>> audit = new HashMap<>();
        Map<String, Rendering> renderings = new HashMap<>();
        Map<String, List<SupportStore.DeliveryEventRow>> events = new HashMap<>();
        Map<String, List<io.mailroom.email.api.AttachmentReads.Listed>> attachments = Map.of();
        if (withTimeline) {
            attachments = io.mailroom.email.api.AttachmentReads.of(tx, keys);
            for (SupportStore.DeliveryEventRow e : store.deliveryEvents(tx, keys)) {
                events.computeIfAbsent(e.key(), k -> new ArrayList<>()).add(e);
            }
            for (io.mailroom.email.dispatch.RenderingReads.Summary g : store.renderings(tx, rows)) {
                renderings.put(g.key(), new Rendering(g.template(), g.version(), g.locale(), g.subject(), g.text(),
                        g.hasHtml(), g.renderedAt(), g.attempt(), g.hasHtml() ? ApiRoutes.previewPath(g.key()) : null));
            }
            Set<String> auditKeys = new LinkedHashSet<>(keys);
            rows.stream().map(SupportStore.EmailRow::resendOf).filter(Objects::nonNull).forEach(auditKeys::add);
            for (AuditTrail.Entry a : store.audit(tx, auditKeys)) {
                audit.computeIfAbsent(a.key(), k -> new ArrayList<>()).add(a);
            }
        }
        Map<String, SuppressionNote> suppressed = suppressionsOf(tx, rows);
        Map<String, RecipientList.Of> recipients = withTimeline ? RecipientList.of(tx, rows, suppressionList) : Map.of();
        List<EmailView> out = new ArrayList<>(rows.size());
        for (SupportStore.EmailRow row : rows) {
            List<TimelineEntry.Attempt> tries = attempts.getOrDefault(row.key(), List.of()).stream()
                    .map(SupportViews::attempt).toList();
            List<TimelineEntry> timeline = null;
            if (withTimeline) {
                timeline = new ArrayList<>(tries);
                for (AuditTrail.Entry a : audit.getOrDefault(row.key(), List.of())) {
                    timeline.add(new TimelineEntry.Action(a.at(), a.actor(), a.role(), a.action(), a.reason(),
                            SupportJson.text(SupportJson.tree(a.detailJson()), "newKey")));
                }
                if (row.resendOf() != null) {
                    for (AuditTrail.Entry a : audit.getOrDefault(row.resendOf(), List.of())) {
                        String created = SupportJson.text(SupportJson.tree(a.detailJson()), "newKey");
                        if (a.action().equals(AuditActions.RESEND) && row.key().equals(created)) {
                            timeline.add(new TimelineEntry.Action(a.at(), a.actor(), a.role(), AuditActions.RESEND_CREATED,
                                    a.reason(), null));
                        }
                    }
                }
                for (SupportStore.DeliveryEventRow e : events.getOrDefault(row.key(), List.of())) {
                    timeline.add(new TimelineEntry.Delivery(e.occurredAt() != null ? e.occurredAt() : e.receivedAt(),
                            e.receivedAt(), e.source(), e.kind(), e.bounceType(), e.providerEvent(), e.diagnosticCode(),
                            e.description(), e.applied(), e.recipient(), e.tags()));
                }
                timeline.sort(Comparator.comparing(TimelineEntry::at));
            }
            EmailView view = view(row, status(row), tries, resentAs.getOrDefault(row.key(), List.of()),
                    permanent.getOrDefault(row.key(), false), timeline, renderings.get(row.key()), suppressed.get(row.key()),
                    !withTimeline ? null : attachments.getOrDefault(row.key(), List.of()).stream().map(AttachmentView::of).toList());
            RecipientList.Of who = recipients.get(row.key());
            out.add(who == null ? view : view.withRecipients(who.recipients(), who.tags()));
        }
        return out;
    }

    /** The suppression in force for each row's recipient, by key, in one query for the page; rows without one are absent. */
    Map<String, SuppressionNote> suppressionsOf(DSLContext tx, List<SupportStore.EmailRow> rows) {
        Map<String, String> addressOf = new HashMap<>();
        for (SupportStore.EmailRow row : rows) {
            String address = normalizedRecipient(row);
            if (address != null) {
                addressOf.put(row.key(), address);
            }
        }
        Map<String, List<io.mailroom.delivery.suppression.Suppression>> active = suppressionList.active(tx, addressOf.values());
        Map<String, SuppressionNote> out = new HashMap<>();
        for (SupportStore.EmailRow row : rows) {
            List<io.mailroom.delivery.suppression.Suppression> entries = active.get(addressOf.get(row.key()));
            if (entries != null) {
                SuppressionNote.of(entries, stoppedBySuppression(row)).ifPresent(n -> out.put(row.key(), n));
            }
        }
        return out;
    }

    /** The recipient as the suppression list stores addresses, or null when it is not known (or not an address). */
    private static String normalizedRecipient(SupportStore.EmailRow row) {
        String recipient = firstNonNull(row.descriptorRecipient(), row.payloadEmail());
        if (recipient == null) {
            return null;
        }
        try {
            return Addresses.normalize(recipient);
        } catch (IllegalArgumentException e) {
            return null;
        }
    }

    /** Whether the email's last error is the dispatcher's "suppressed (...)" ({@code Suppression#failureReason}). */
    private static boolean stoppedBySuppression(SupportStore.EmailRow row) {
        String error = row.queueStatus() != null ? row.queueLastError() : row.effectLastError();
        return error != null && error.startsWith(SUPPRESSED_PREFIX);
    }

    private static TimelineEntry.Attempt attempt(SupportStore.AttemptRow a) {
        JsonNode detail = SupportJson.tree(a.detailJson());
        String providerStatus = firstNonNull(SupportJson.text(detail, "status"), SupportJson.text(detail, "replyCode"),
                SupportJson.text(detail, "code"));
        String providerId = firstNonNull(SupportJson.text(detail, "providerMessageId"), SupportJson.text(detail, "messageId"));
        return new TimelineEntry.Attempt(a.attempt(), a.startedAt(), a.finishedAt(), a.outcome(), a.worker(), a.error(),
                SupportJson.text(detail, "transport"), providerStatus, providerId, SupportJson.text(detail, "reply"),
                a.outcome().equals("released") ? SupportJson.text(detail, AttemptDetail.RELEASE) : null);
    }

    /**
     * Whether this attempt ended the email with a permanent failure: the handler said so (a 5xx
     * refusal, an email that cannot be rendered), as the dispatcher records it in the detail. A
     * failure because the tries ran out on transient errors is not permanent: trying later may work.
     */
    private static boolean failedPermanently(SupportStore.AttemptRow a) {
        return a.outcome().equals("failed")
                && "true".equals(SupportJson.text(SupportJson.tree(a.detailJson()), AttemptDetail.PERMANENT));
    }

    private static EmailView view(SupportStore.EmailRow row, EmailStatus status, List<TimelineEntry.Attempt> attempts, List<String> resentAs,
                                  boolean failedPermanently, List<TimelineEntry> timeline, Rendering rendering,
                                  SuppressionNote suppression, List<AttachmentView> attachments) {
        boolean contentKept = row.queueStatus() != null;
        String providerId = row.resultRef();
        if (providerId == null) {
            providerId = attempts.stream().filter(a -> a.outcome().equals("done")).map(TimelineEntry.Attempt::providerMessageId)
                    .filter(Objects::nonNull).reduce((a, b) -> b).orElse(null);
        }
        String providerReply = attempts.stream().filter(a -> a.outcome().equals("done")).map(TimelineEntry.Attempt::providerReply)
                .filter(Objects::nonNull).reduce((a, b) -> b).orElse(null);
        Instant sentAt = null;
        String lastError = contentKept ? row.queueLastError() : row.effectLastError();
        if (status == EmailStatus.SENT) {
            sentAt = "succeeded".equals(row.recordState()) && row.completedAt() != null ? row.completedAt() : row.finishedAt();
            // the queue keeps the last error through a success; it belongs to an earlier attempt (in the timeline)
            lastError = null;
        }
        List<String> actions = EmailView.actionsFor(status, new EmailView.Facts(contentKept, !resentAs.isEmpty(),
                failedPermanently, "succeeded".equals(row.recordState()), suppression != null && suppression.blocksRetry()));
        String recipient = firstNonNull(row.descriptorRecipient(), row.payloadEmail());
        boolean erased = Redaction.isMarker(recipient);
        if (erased) {
            // nothing can be sent to an erased address: no retry, no resend
            actions = actions.stream().filter(a -> !a.equals(EmailView.RETRY) && !a.equals(EmailView.RESEND)).toList();
        }
        return new EmailView(row.key(), row.topic(), kind(row.topic()), new About(row.aggregateType(), row.aggregateId()),
                erased ? ERASED : recipient,
                erased ? null : firstNonNull(row.descriptorName(), row.payloadName()),
                row.descriptorSubject(), status,
                row.queueAttempts() != null ? row.queueAttempts() : row.effectAttempts(),
                row.queueMaxAttempts() != null ? row.queueMaxAttempts() : row.effectMaxAttempts(),
                lastError, row.createdAt(), row.updatedAt(), sentAt,
                status == EmailStatus.PENDING || status == EmailStatus.SCHEDULED ? row.availableAt() : null,
                providerId, status == EmailStatus.SENT ? providerReply : null, row.recordState(), contentKept,
                row.resendOf(), resentAs, actions, EmailView.mainActionOf(status, actions), timeline, rendering,
                row.deliveryState() == null ? null : new Delivery(row.deliveryState(), row.deliveryDetail(), row.deliveryUpdatedAt()),
                suppression, null, null, attachments);
    }

    /** The topic in words: {@code email.order_confirmation} → "Order confirmation". */
    static String kind(String topic) {
        String t = topic.startsWith(SupportStore.EMAIL_TOPIC_PREFIX) ? topic.substring(SupportStore.EMAIL_TOPIC_PREFIX.length()) : topic;
        t = t.replace('_', ' ').replace('.', ' ').trim();
        if (t.isEmpty()) {
            return topic;
        }
        return Character.toUpperCase(t.charAt(0)) + t.substring(1);
    }

    @SafeVarargs
    static <T> T firstNonNull(T... values) {
        for (T v : values) {
            if (v != null) {
                return v;
            }
        }
        return null;
    }
}
