package io.mailroom.support;

import com.fasterxml.jackson.databind.JsonNode;
import io.mailroom.delivery.DeliveryEventHistory;
import io.mailroom.delivery.DeliveryStates;
import io.mailroom.email.dispatch.RenderingReads;
import io.mailroom.idempotency.RecordLookup;
import io.mailroom.outbox.admin.AttemptHistory;
import io.mailroom.outbox.admin.AuditTrail;
import io.mailroom.email.api.SearchTerms;
import io.mailroom.outbox.admin.EffectHistory;
import io.mailroom.outbox.admin.EffectSearch;
import io.mailroom.outbox.admin.OutboxControl;
import org.jooq.DSLContext;
import org.jooq.Record;
import org.jooq.ResultQuery;

import java.time.Instant;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * Support's read model, composed from the owners' read APIs: outbox-core's {@link EffectHistory}
 * (one row per email, kept after the hot queue row is gone, with the live queue row while there is
 * one), {@link AttemptHistory} and {@link AuditTrail}; idempotency-store's {@link RecordLookup} (what
 * the send recorded); email-dispatcher's {@link RenderingReads}; delivery-events'
 * {@link DeliveryStates} and {@link DeliveryEventHistory}. Support names no table: a list is one
 * indexed query of its owner plus one primary-key lookup per other owner for the page's keys.
 */
final class SupportStore {

    static final String ORDER = "order";
    static final String EMAIL_TOPIC_PREFIX = "email.";

    /** The descriptor fields a send records that support shows. */
    private static final List<String> DESCRIPTOR_FIELDS = List.of("recipient", "recipientName", "subject");

    /** One email's columns from the effect, its live queue row (if any) and its idempotency record (if any). */
    record EmailRow(String key, String topic, String aggregateType, String aggregateId, String effectStatus,
                    int effectAttempts, int effectMaxAttempts, String effectLastError, Instant createdAt,
                    Instant updatedAt, Instant finishedAt, String resendOf,
                    String queueStatus, Integer queueAttempts, Integer queueMaxAttempts, String queueLastError,
                    Instant availableAt, String payloadEmail, String payloadName,
                    String recordState, String resultRef, Instant completedAt,
                    String descriptorRecipient, String descriptorName, String descriptorSubject,
                    String deliveryState, String deliveryDetail, Instant deliveryUpdatedAt,
                    long messageId, Instant messageCreatedAt) {

        RenderingReads.MessageRef message() {
            return new RenderingReads.MessageRef(key, messageId, messageCreatedAt);
        }

        EffectHistory.Effect effect() {
            return new EffectHistory.Effect(key, topic, aggregateType, aggregateId, effectStatus, effectAttempts,
                    effectMaxAttempts, effectLastError, createdAt, updatedAt, finishedAt, resendOf, messageId,
                    messageCreatedAt, null);
        }
    }

    /** One stored delivery report. */
    record DeliveryEventRow(long id, String source, String deliveryId, Instant receivedAt, Instant occurredAt, String kind,
                            String bounceType, String providerEvent, String providerMessageId, String key, String recipient,
                            String diagnosticCode, String description, boolean applied, Map<String, String> tags) {
    }

    /** One finished attempt. */
    record AttemptRow(String key, int attempt, Instant startedAt, Instant finishedAt, String outcome, String worker,
                      String error, String detailJson) {
    }

    /** What a resend copies from the email it repeats. */
    record ResendSource(String key, String topic, String aggregateType, String aggregateId, String status,
                        int maxAttempts, long messageId, Instant messageCreatedAt, String resendOf) {
    }

    // ------------------------------------------------------------------------------------ reads

    /** The rows of these effects, in their order, with what the idempotency record and delivery-events add. */
    private static List<EmailRow> rows(DSLContext tx, List<EffectHistory.Effect> effects) {
        if (effects.isEmpty()) {
            return List.of();
        }
        List<String> keys = effects.stream().map(EffectHistory.Effect::key).toList();
        Map<String, RecordLookup.Summary> records = RecordLookup.summaries(tx, keys, DESCRIPTOR_FIELDS);
        Map<String, DeliveryStates.State> states = DeliveryStates.of(tx, keys);
        // after the queue row is gone, an email stopped before its send (no record) is named only by its terms
        List<String> unnamed = effects.stream().filter(e -> e.live() == null && (records.get(e.key()) == null
                || records.get(e.key()).descriptor().get("recipient") == null)).map(EffectHistory.Effect::key).toList();
        Map<String, List<String>> terms = EffectHistory.terms(tx, unnamed);
        List<EmailRow> out = new ArrayList<>(effects.size());
        for (EffectHistory.Effect e : effects) {
            String termRecipient = terms.getOrDefault(e.key(), List.of()).stream()
                    .filter(t -> t.startsWith(SearchTerms.TO + ":")).map(t -> t.substring(SearchTerms.TO.length() + 1))
                    .findFirst().orElse(null);
            out.add(row(e, records.get(e.key()), states.get(e.key()), termRecipient));
        }
        return out;
    }

    private static EmailRow row(EffectHistory.Effect e, RecordLookup.Summary r, DeliveryStates.State s, String termRecipient) {
        EffectHistory.Live live = e.live();
        JsonNode to = live == null ? null : payloadRecipient(live.payload());
        if (to == null && termRecipient != null) {
            to = SupportJson.mapper().createObjectNode().put("address", termRecipient);
        }
        return new EmailRow(e.key(), e.topic(), e.aggregateType(), e.aggregateId(), e.status(), e.attempts(),
                e.maxAttempts(), e.lastError(), e.createdAt(), e.updatedAt(), e.finishedAt(), e.resendOf(),
                live == null ? null : live.status(), live == null ? null : live.attempts(),
                live == null ? null : live.maxAttempts(), live == null ? null : live.lastError(),
                live == null ? null : live.availableAt(),
                text(to, "address"), text(to, "name"),
                r == null ? null : r.state(), r == null ? null : r.resultRef(), r == null ? null : r.completedAt(),
                r == null ? null : r.descriptor().get("recipient"), r == null ? null : r.descriptor().get("recipientName"),
                r == null ? null : r.descriptor().get("subject"),
                s == null ? null : s.state(), s == null ? null : s.detail(), s == null ? null : s.updatedAt(),
                e.messageId(), e.messageCreatedAt());
    }

    /**
     * The recipient as the business wrote it, from the queued payload: email-api's envelope
     * ({@code {"to":{"address","name"}}}), else a legacy payload's {@code customerEmail} and
     * {@code customerName}. An email stopped before its reservation (a suppressed recipient) has no
     * descriptor, and this is all that names its address. Null when the payload names none.
     */
    static JsonNode payloadRecipient(String payload) {
        if (payload == null) {
            return null;
        }
        JsonNode root;
        try {
            root = SupportJson.mapper().readTree(payload);
        } catch (com.fasterxml.jackson.core.JsonProcessingException e) {
            return null; // a payload that is not JSON names no recipient (the column is jsonb: cannot happen)
        }
        JsonNode to = root.get("to");
        if (to != null && to.isArray() && !to.isEmpty()) {
            to = to.get(0); // envelope version 2: a list of recipients, the first one named here
        }
        if (to != null && to.isObject()) {
            return to;
        }
        if (to != null && to.isArray() && !to.isEmpty() && to.get(0).isObject()) {
            return to.get(0); // envelope v2: the first To
        }
        if (root.hasNonNull("customerEmail")) {
            var legacy = SupportJson.mapper().createObjectNode();
            legacy.set("address", root.get("customerEmail"));
            legacy.set("name", root.get("customerName"));
            return legacy;
        }
        return null;
    }

    private static String text(JsonNode node, String field) {
        JsonNode v = node == null ? null : node.get(field);
        return v == null || v.isNull() ? null : v.asText();
    }

    /**
     * "Emails about order 102" (or user 42): the query the aggregate index exists for. Unexecuted, so
     * a test can EXPLAIN exactly what runs.
     */
    ResultQuery<Record> aboutQuery(DSLContext tx, About about, int limit) {
        return EffectHistory.aggregateQuery(tx, about.type(), about.id(), EMAIL_TOPIC_PREFIX, limit);
    }

    List<EmailRow> emailsAbout(DSLContext tx, About about, int limit) {
        return rows(tx, EffectHistory.ofAggregate(tx, about.type(), about.id(), EMAIL_TOPIC_PREFIX, limit));
    }

    List<String> aboutTypes(DSLContext tx, int limit) {
        return EffectHistory.aggregateTypes(tx, limit);
    }

    EmailRow email(DSLContext tx, String key) {
        EffectHistory.Effect e = EffectHistory.byKey(tx, key);
        return e == null ? null : rows(tx, List.of(e)).getFirst();
    }

    /** The time a row of {@code f}'s list is ordered by, which its page cursor holds. */
    static Instant pageTime(EmailFilter f, EmailRow row) {
        return EffectHistory.pageTime(f.status().storedStatus()) == EffectHistory.PageTime.QUEUED ? row.createdAt() : row.updatedAt();
    }

    private static EffectHistory.StatusPage page(EmailFilter f, int limit) {
        return new EffectHistory.StatusPage(f.status().storedStatus(), EMAIL_TOPIC_PREFIX, f.since(), f.until(),
                f.olderThan(), f.cursor() == null ? null : f.cursor().updatedAt(),
                f.cursor() == null ? null : f.cursor().key(), limit);
    }

    /** The criteria of {@code search} as outbox-core's search takes them; {@code keys} from the provider's message id. */
    static EffectSearch.Criteria criteria(EmailSearch search, List<String> keys, int limit) {
        List<String> terms = new ArrayList<>();
        if (search.recipient() != null) {
            terms.add(SearchTerms.term(SearchTerms.TO, search.recipient()));
        }
        if (search.template() != null) {
            terms.add(SearchTerms.term(SearchTerms.TEMPLATE, search.template()));
        }
        if (search.domain() != null) {
            terms.add(SearchTerms.term(SearchTerms.DOMAIN, search.domain()));
        }
        if (search.tag() != null) {
            terms.add(SearchTerms.term(SearchTerms.TAG, search.tag()));
        }
        Cursor c = search.cursor();
        return new EffectSearch.Criteria(terms, search.status() == null ? null : search.status().storedStatus(),
                search.topic(), search.about() == null ? null : search.about().type(),
                search.about() == null ? null : search.about().id(), search.key(), search.keyPrefix(), keys,
                search.error(), search.since(), search.until(), c == null ? null : c.updatedAt(), c == null ? null : c.key(),
                limit);
    }

    /** One page of the search's effects as rows (the effects read, before any filter support applies itself). */
    List<EmailRow> search(DSLContext tx, EffectSearch.Criteria criteria) {
        return rows(tx, EffectSearch.search(tx, criteria));
    }

    /** The topics, alphabetically (at most {@code limit}). */
    List<String> topics(DSLContext tx, int limit) {
        return EffectSearch.topics(tx, limit);
    }

    /** Values of the search term {@code name} starting with {@code prefix}, alphabetically. */
    List<String> termValues(DSLContext tx, String name, String prefix, int limit) {
        String start = SearchTerms.term(name, prefix);
        return EffectSearch.termsStartingWith(tx, start, limit).stream().map(t -> t.substring(name.length() + 1)).toList();
    }

    /** The keys whose send recorded this provider message id (a handful at most). */
    List<String> keysOfProviderId(DSLContext tx, String providerMessageId) {
        return RecordLookup.keysByResultRef(tx, List.of(providerMessageId));
    }

    /** A page of one status, newest first by {@link #pageTime}, keyset-paginated on (that time, key). */
    ResultQuery<Record> statusQuery(DSLContext tx, EmailFilter f, int limit) {
        return EffectHistory.statusQuery(tx, page(f, limit));
    }

    List<EmailRow> emailsByStatus(DSLContext tx, EmailFilter f, int limit) {
        return rows(tx, EffectHistory.byStatus(tx, page(f, limit)));
    }

    /**
     * A page of emails whose delivery state is {@code state} (bounced, complained), newest report
     * first: the page of states from delivery-events ({@link DeliveryStates#page}, keyset on
     * (updated_at, key)), then their emails; a state whose effect retention just took is left out.
     */
    List<EmailRow> emailsByDelivery(DSLContext tx, String state, Cursor cursor, int limit) {
        List<DeliveryStates.State> page = DeliveryStates.page(tx, state, cursor == null ? null : cursor.updatedAt(),
                cursor == null ? null : cursor.key(), limit);
        Map<String, EffectHistory.Effect> effects = new HashMap<>();
        EffectHistory.byKeys(tx, page.stream().map(DeliveryStates.State::key).toList())
                .forEach(e -> effects.put(e.key(), e));
        List<EffectHistory.Effect> ordered = page.stream().map(s -> effects.get(s.key()))
                .filter(java.util.Objects::nonNull).toList();
        return rows(tx, ordered);
    }

    /** The delivery reports of the given emails, in the order they arrived. */
    List<DeliveryEventRow> deliveryEvents(DSLContext tx, Collection<String> keys) {
        return DeliveryEventHistory.ofKeys(tx, keys).stream().map(SupportStore::eventRow).toList();
    }

    /** Reports that matched no email, newest first, before the id {@code beforeId} (exclusive) when given. */
    List<DeliveryEventRow> orphanEvents(DSLContext tx, Long beforeId, int limit) {
        return DeliveryEventHistory.orphans(tx, beforeId, limit).stream().map(SupportStore::eventRow).toList();
    }

    private static DeliveryEventRow eventRow(DeliveryEventHistory.Stored r) {
        return new DeliveryEventRow(r.id(), r.source(), r.deliveryId(), r.receivedAt(), r.occurredAt(), r.kind(),
                r.bounceType(), r.providerEvent(), r.providerMessageId(), r.key(), r.recipient(),
                r.diagnosticCode(), r.description(), r.applied(), r.tags());
    }

    /** Resends of the given emails, oldest first. */
    List<EffectHistory.Resend> resendsOf(DSLContext tx, Collection<EmailRow> originals) {
        return EffectHistory.resendsOf(tx, originals.stream().map(EmailRow::effect).toList());
    }

    List<AttemptHistory.OutcomeCount> outcomeWindows(DSLContext tx) {
        return AttemptHistory.outcomeWindows(tx);
    }

    List<AttemptRow> attempts(DSLContext tx, Collection<String> keys) {
        return AttemptHistory.ofKeys(tx, keys).stream()
                .map(a -> new AttemptRow(a.key(), a.attempt(), a.startedAt(), a.finishedAt(), a.outcome(), a.worker(),
                        a.error(), a.detail()))
                .toList();
    }

    /** The renderings of these emails' own messages. */
    List<RenderingReads.Summary> renderings(DSLContext tx, Collection<EmailRow> rows) {
        return RenderingReads.of(tx, rows.stream().map(EmailRow::message).toList());
    }

    /** The stored HTML part of an email's rendering, or null when there is none (no email, no rendering, or no HTML). */
    String renderedHtml(DSLContext tx, String key) {
        EffectHistory.Effect e = EffectHistory.byKey(tx, key);
        return e == null ? null : RenderingReads.html(tx, new RenderingReads.MessageRef(key, e.messageId(), e.messageCreatedAt()));
    }

    /** The audit trail of these keys, oldest first (outbox-core owns the trail). */
    List<AuditTrail.Entry> audit(DSLContext tx, Collection<String> keys) {
        return AuditTrail.forKeys(tx, keys);
    }

    // ----------------------------------------------------------------------------------- stats

    EffectHistory.QueueCounts queueCounts(DSLContext tx) {
        return EffectHistory.queueCounts(tx);
    }

    /** Emails that wait for a person: failed and review, from the history (they outlive the hot rows). */
    Map<String, Long> attentionCounts(DSLContext tx) {
        return EffectHistory.countByStatus(tx, List.of("failed", "review"));
    }

    /** Attempts by minute and outcome since {@code from}. */
    List<Bucket> attemptsPerMinute(DSLContext tx, Instant from) {
        return AttemptHistory.perMinute(tx, from).stream().map(c -> new Bucket(c.minute(), c.outcome(), c.count())).toList();
    }

    /** New emails by minute since {@code from}. */
    List<Bucket> createdPerMinute(DSLContext tx, Instant from) {
        return EffectHistory.createdPerMinute(tx, from).stream().map(c -> new Bucket(c.minute(), "created", c.count())).toList();
    }

    /**
     * Actions that took an email out of the queue (cancel) or put a failed one back (retry from
     * failed), by minute since {@code from}: the parts of the pending depth attempts do not show.
     */
    List<Bucket> queueActionsPerMinute(DSLContext tx, Instant from) {
        return AuditTrail.perMinute(tx, from, List.of(AuditTrail.Match.action(AuditActions.CANCEL),
                        new AuditTrail.Match(AuditActions.RETRY, "from", "failed")))
                .stream().map(c -> new Bucket(c.minute(), c.action(), c.count())).toList();
    }

    record Bucket(Instant minute, String what, long count) {
    }

    // ----------------------------------------------------------------------------------- writes

    void insertAudit(DSLContext tx, Actor actor, String action, String key, String reason, String detailJson) {
        AuditTrail.write(tx, new AuditTrail.NewEntry(null, actor.name(), actor.role().word(), action, key, reason, detailJson));
    }

    /** The effect row, locked against concurrent resends ({@code FOR NO KEY UPDATE NOWAIT}: busy rather than wait). */
    ResendSource lockEffect(DSLContext tx, String key) {
        EffectHistory.Locked l = EffectHistory.lock(tx, key);
        return l == null ? null : new ResendSource(l.key(), l.topic(), l.aggregateType(), l.aggregateId(), l.status(),
                l.maxAttempts(), l.messageId(), l.messageCreatedAt(), l.resendOf());
    }

    /** Keys of the resends of {@code key}. */
    List<String> resendKeys(DSLContext tx, String key) {
        return EffectHistory.resendKeys(tx, key);
    }

    /** Status of an effect without locking, or null when there is none. */
    String effectStatus(DSLContext tx, String key) {
        return EffectHistory.status(tx, key);
    }

    /** Payload and ordering key of the queue row, or null when retention removed it. */
    EffectHistory.Content content(DSLContext tx, long messageId, Instant messageCreatedAt) {
        return EffectHistory.content(tx, messageId, messageCreatedAt);
    }

    /** The search terms of one email. */
    List<String> terms(DSLContext tx, String key) {
        return EffectHistory.terms(tx, List.of(key)).getOrDefault(key, List.of());
    }

    /** Every key of one aggregate (an order has a handful). */
    List<String> keysOfAggregate(DSLContext tx, String aggregateType, String aggregateId) {
        return EffectHistory.keysOfAggregate(tx, aggregateType, aggregateId);
    }

    void setResendOf(DSLContext tx, String newKey, String originalKey) {
        EffectHistory.markResend(tx, newKey, originalKey);
    }

    List<ControlState.Switch> switches(DSLContext tx) {
        return OutboxControl.switches(tx).stream()
                .map(c -> new ControlState.Switch(c.scope(), c.paused(), c.reason(), c.updatedBy(), c.updatedAt()))
                .toList();
    }
}
