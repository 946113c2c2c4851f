package io.mailroom.support;

import io.mailroom.delivery.DeliveryStates;
import io.mailroom.outbox.admin.AuditTrail;
import io.mailroom.db.jooq.tables.EmailRendering;
import io.mailroom.db.jooq.tables.IdempotencyRecord;
import io.mailroom.db.jooq.tables.OutboxAttempt;
import io.mailroom.db.jooq.tables.OutboxControl;
import io.mailroom.db.jooq.tables.OutboxEffect;
import io.mailroom.db.jooq.tables.OutboxMessage;
import org.jooq.Condition;
import org.jooq.DSLContext;
import org.jooq.Field;
import org.jooq.JSONB;
import org.jooq.Record;
import org.jooq.Record2;
import org.jooq.ResultQuery;
import org.jooq.SelectOnConditionStep;
import org.jooq.impl.DSL;
import org.jooq.impl.SQLDataType;

import java.time.Instant;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Map;

import static io.mailroom.db.jooq.Tables.EMAIL_RENDERING;
import static io.mailroom.db.jooq.Tables.IDEMPOTENCY_RECORD;
import static io.mailroom.db.jooq.Tables.OUTBOX_ATTEMPT;
import static io.mailroom.db.jooq.Tables.OUTBOX_CONTROL;
import static io.mailroom.db.jooq.Tables.OUTBOX_EFFECT;
import static io.mailroom.db.jooq.Tables.OUTBOX_MESSAGE;

/**
 * Every SQL statement of the support surfaces, in one place, written against the generated jOOQ
 * classes. The history tables answer the support questions: {@code outbox_effect} (one row per
 * email, kept after the hot queue row is gone) by order through {@code outbox_effect_aggregate_idx}
 * and by status through {@code outbox_effect_status_idx}; {@code outbox_attempt} and
 * the audit trail by key (through outbox-core's AuditTrail), {@code email_rendering} by key and message. The hot row ({@code outbox_message}) is joined by its primary key only,
 * for what is live: "sending now", the current attempt count and the content a resend repeats.
 */
final class SupportStore {

    static final String ORDER = "order";
    static final String EMAIL_TOPIC_PREFIX = "email.";

    private static final OutboxEffect E = OUTBOX_EFFECT;
    private static final OutboxMessage M = OUTBOX_MESSAGE;
    private static final IdempotencyRecord R = IDEMPOTENCY_RECORD;
    private static final OutboxAttempt A = OUTBOX_ATTEMPT;
    private static final OutboxControl C = OUTBOX_CONTROL;
    private static final EmailRendering G = EMAIL_RENDERING;
    private static final io.mailroom.db.jooq.tables.DeliveryEvent D = io.mailroom.db.jooq.Tables.DELIVERY_EVENT;

    static final Field<Instant> NOW = DSL.field(DSL.raw("now()"), SQLDataType.INSTANT);

    // the recipient as the business wrote it: email-api's envelope ({"to":{"address","name"}}), else an
    // order payload's customerEmail; an email stopped before its reservation (a suppressed recipient)
    // has no descriptor, and this is all that names its address
    private static final Field<String> PAYLOAD_EMAIL = DSL.coalesce(
            DSL.jsonbGetAttributeAsText(DSL.jsonbGetAttribute(M.PAYLOAD, "to"), "address"),
            DSL.jsonbGetAttributeAsText(M.PAYLOAD, "customerEmail")).as("payload_email");
    private static final Field<String> PAYLOAD_NAME = DSL.coalesce(
            DSL.jsonbGetAttributeAsText(DSL.jsonbGetAttribute(M.PAYLOAD, "to"), "name"),
            DSL.jsonbGetAttributeAsText(M.PAYLOAD, "customerName")).as("payload_name");
    private static final Field<String> DESCRIPTOR_RECIPIENT = DSL.jsonbGetAttributeAsText(R.DESCRIPTOR, "recipient").as("descriptor_recipient");
    private static final Field<String> DESCRIPTOR_NAME = DSL.jsonbGetAttributeAsText(R.DESCRIPTOR, "recipientName").as("descriptor_name");
    private static final Field<String> DESCRIPTOR_SUBJECT = DSL.jsonbGetAttributeAsText(R.DESCRIPTOR, "subject").as("descriptor_subject");

    /** One email's columns from the effect, its live queue row (if any) and its idempotency record (if any). */
    record EmailRow(String key, String topic, String aggregateType, String aggregateId, String effectStatus,
                    int effectAttempts, int effectMaxAttempts, String effectLastError, Instant createdAt,
                    Instant updatedAt, Instant finishedAt, String resendOf,
                    String queueStatus, Integer queueAttempts, Integer queueMaxAttempts, String queueLastError,
                    Instant availableAt, String payloadEmail, String payloadName,
                    String recordState, String resultRef, Instant completedAt,
                    String descriptorRecipient, String descriptorName, String descriptorSubject,
                    String deliveryState, String deliveryDetail, Instant deliveryUpdatedAt) {
    }

    /** One row of {@code delivery_event}. */
    record DeliveryEventRow(long id, String source, String deliveryId, Instant receivedAt, Instant occurredAt, String kind,
                            String bounceType, String providerEvent, String providerMessageId, String key, String recipient,
                            String diagnosticCode, String description, boolean applied) {
    }

    /** One row of {@code outbox_attempt}. */
    record AttemptRow(String key, int attempt, Instant startedAt, Instant finishedAt, String outcome, String worker,
                      String error, String detailJson) {
    }

    /** What a resend copies from the email it repeats. */
    record ResendSource(String key, String topic, String aggregateType, String aggregateId, String status,
                        int maxAttempts, long messageId, Instant messageCreatedAt, String resendOf) {
    }

    // ------------------------------------------------------------------------------------ reads

    private SelectOnConditionStep<Record> emails(DSLContext tx) {
        return tx.select(E.IDEMPOTENCY_KEY, E.TOPIC, E.AGGREGATE_TYPE, E.AGGREGATE_ID, E.STATUS, E.ATTEMPTS,
                        E.MAX_ATTEMPTS, E.LAST_ERROR, E.CREATED_AT, E.UPDATED_AT, E.FINISHED_AT, E.RESEND_OF,
                        M.STATUS, M.ATTEMPTS, M.MAX_ATTEMPTS, M.LAST_ERROR, M.AVAILABLE_AT, PAYLOAD_EMAIL, PAYLOAD_NAME,
                        R.STATE, R.RESULT_REF, R.COMPLETED_AT, DESCRIPTOR_RECIPIENT, DESCRIPTOR_NAME, DESCRIPTOR_SUBJECT)
                .from(E)
                .leftJoin(M).on(M.ID.eq(E.MESSAGE_ID).and(M.CREATED_AT.eq(E.MESSAGE_CREATED_AT)))
                .leftJoin(R).on(R.EFFECT_KEY.eq(E.IDEMPOTENCY_KEY));
    }

    private static EmailRow emailRow(Record r) {
        return new EmailRow(r.get(E.IDEMPOTENCY_KEY), r.get(E.TOPIC), r.get(E.AGGREGATE_TYPE), r.get(E.AGGREGATE_ID),
                r.get(E.STATUS), r.get(E.ATTEMPTS), r.get(E.MAX_ATTEMPTS), r.get(E.LAST_ERROR), r.get(E.CREATED_AT),
                r.get(E.UPDATED_AT), r.get(E.FINISHED_AT), r.get(E.RESEND_OF),
                r.get(M.STATUS), r.get(M.ATTEMPTS), r.get(M.MAX_ATTEMPTS), r.get(M.LAST_ERROR), r.get(M.AVAILABLE_AT),
                r.get(PAYLOAD_EMAIL), r.get(PAYLOAD_NAME),
                r.get(R.STATE), r.get(R.RESULT_REF), r.get(R.COMPLETED_AT),
                r.get(DESCRIPTOR_RECIPIENT), r.get(DESCRIPTOR_NAME), r.get(DESCRIPTOR_SUBJECT),
                null, null, null);
    }

    /** The rows with their delivery state, which delivery-events keeps ({@link DeliveryStates}). */
    private static List<EmailRow> withDelivery(DSLContext tx, List<EmailRow> rows) {
        Map<String, DeliveryStates.State> states = DeliveryStates.of(tx, rows.stream().map(EmailRow::key).toList());
        return rows.stream().map(r -> withDelivery(r, states.get(r.key()))).toList();
    }

    private static EmailRow withDelivery(EmailRow r, DeliveryStates.State s) {
        if (s == null) {
            return r;
        }
        return new EmailRow(r.key(), r.topic(), r.aggregateType(), r.aggregateId(), r.effectStatus(), r.effectAttempts(),
                r.effectMaxAttempts(), r.effectLastError(), r.createdAt(), r.updatedAt(), r.finishedAt(), r.resendOf(),
                r.queueStatus(), r.queueAttempts(), r.queueMaxAttempts(), r.queueLastError(), r.availableAt(),
                r.payloadEmail(), r.payloadName(), r.recordState(), r.resultRef(), r.completedAt(),
                r.descriptorRecipient(), r.descriptorName(), r.descriptorSubject(), s.state(), s.detail(), s.updatedAt());
    }

    /**
     * "Emails of order N": the query the aggregate index exists for. Unexecuted, so a test can
     * EXPLAIN exactly what runs.
     */
    ResultQuery<Record> orderQuery(DSLContext tx, String orderId, int limit) {
        return emails(tx)
                .where(E.AGGREGATE_TYPE.eq(ORDER))
                .and(E.AGGREGATE_ID.eq(orderId))
                .and(E.TOPIC.startsWith(EMAIL_TOPIC_PREFIX))
                .orderBy(E.CREATED_AT, E.IDEMPOTENCY_KEY)
                .limit(limit);
    }

    List<EmailRow> emailsOfOrder(DSLContext tx, String orderId, int limit) {
        return withDelivery(tx, orderQuery(tx, orderId, limit).fetch(SupportStore::emailRow));
    }

    EmailRow email(DSLContext tx, String key) {
        EmailRow row = emails(tx).where(E.IDEMPOTENCY_KEY.eq(key)).fetchOne(SupportStore::emailRow);
        return row == null ? null : withDelivery(tx, List.of(row)).getFirst();
    }

    /** A page of one status, newest change first, keyset-paginated on (updated_at, key). */
    ResultQuery<Record> statusQuery(DSLContext tx, EmailFilter f, int limit) {
        List<Condition> where = new ArrayList<>();
        where.add(E.STATUS.eq(f.status().storedStatus()));
        where.add(E.TOPIC.startsWith(EMAIL_TOPIC_PREFIX));
        if (f.since() != null) {
            where.add(E.UPDATED_AT.ge(f.since()));
        }
        if (f.until() != null) {
            where.add(E.UPDATED_AT.lt(f.until()));
        }
        if (f.olderThan() != null) {
            where.add(DSL.condition("{0} <= now() - make_interval(secs => {1})", E.CREATED_AT,
                    DSL.val(f.olderThan().toMillis() / 1000.0)));
        }
        if (f.cursor() != null) {
            where.add(DSL.row(E.UPDATED_AT, E.IDEMPOTENCY_KEY).lt(f.cursor().updatedAt(), f.cursor().key()));
        }
        return emails(tx).where(where).orderBy(E.UPDATED_AT.desc(), E.IDEMPOTENCY_KEY.desc()).limit(limit);
    }

    List<EmailRow> emailsByStatus(DSLContext tx, EmailFilter f, int limit) {
        return withDelivery(tx, statusQuery(tx, f, limit).fetch(SupportStore::emailRow));
    }

    /**
     * A page of emails whose delivery state is {@code state} (bounced, complained), newest report
     * first: the page of states from delivery-events ({@link DeliveryStates#page}, keyset on
     * (updated_at, key)), then their emails; a state whose effect retention just took is left out.
     */
    List<EmailRow> emailsByDelivery(DSLContext tx, String state, Cursor cursor, int limit) {
        List<DeliveryStates.State> page = DeliveryStates.page(tx, state, cursor == null ? null : cursor.updatedAt(),
                cursor == null ? null : cursor.key(), limit);
        Map<String, EmailRow> rows = new java.util.HashMap<>();
        emails(tx).where(E.IDEMPOTENCY_KEY.in(page.stream().map(DeliveryStates.State::key).toList()))
                .fetch(SupportStore::emailRow).forEach(r -> rows.put(r.key(), r));
        List<EmailRow> out = new ArrayList<>();
        for (DeliveryStates.State s : page) {
            EmailRow r = rows.get(s.key());
            if (r != null) {
                out.add(withDelivery(r, s));
            }
        }
        return out;
    }

    /** The delivery events of the given emails, in the order they arrived. */
    List<DeliveryEventRow> deliveryEvents(DSLContext tx, Collection<String> keys) {
        if (keys.isEmpty()) {
            return List.of();
        }
        return tx.selectFrom(D).where(D.IDEMPOTENCY_KEY.in(keys)).orderBy(D.RECEIVED_AT, D.ID).fetch(SupportStore::eventRow);
    }

    /** Events that matched no email, newest first, before the id {@code beforeId} (exclusive) when given. */
    List<DeliveryEventRow> orphanEvents(DSLContext tx, Long beforeId, int limit) {
        Condition where = D.IDEMPOTENCY_KEY.isNull();
        if (beforeId != null) {
            where = where.and(D.ID.lt(beforeId));
        }
        return tx.selectFrom(D).where(where).orderBy(D.ID.desc()).limit(limit).fetch(SupportStore::eventRow);
    }

    private static DeliveryEventRow eventRow(io.mailroom.db.jooq.tables.records.DeliveryEventRecord r) {
        return new DeliveryEventRow(r.getId(), r.getSource(), r.getDeliveryId(), r.getReceivedAt(), r.getOccurredAt(), r.getKind(),
                r.getBounceType(), r.getProviderEvent(), r.getProviderMessageId(), r.getIdempotencyKey(), r.getRecipient(),
                r.getDiagnosticCode(), r.getDescription(), r.getApplied());
    }

    /**
     * Resends of the given emails as (resend key, key it repeats), oldest first. A resend belongs to
     * the same aggregate as its original, so the aggregate index finds them without an index on
     * {@code resend_of}.
     */
    List<Record2<String, String>> resendsOf(DSLContext tx, Collection<EmailRow> originals) {
        if (originals.isEmpty()) {
            return List.of();
        }
        List<org.jooq.Row2<String, String>> aggregates = originals.stream()
                .map(o -> DSL.row(o.aggregateType(), o.aggregateId())).distinct().toList();
        return tx.select(E.IDEMPOTENCY_KEY, E.RESEND_OF).from(E)
                .where(DSL.row(E.AGGREGATE_TYPE, E.AGGREGATE_ID).in(aggregates))
                .and(E.RESEND_OF.in(originals.stream().map(EmailRow::key).toList()))
                .orderBy(E.CREATED_AT, E.IDEMPOTENCY_KEY)
                .fetch();
    }

    /** Attempt outcomes in the last minute and the last hour. */
    record OutcomeCount(String outcome, long lastMinute, long lastHour) {
    }

    List<OutcomeCount> outcomeWindows(DSLContext tx) {
        Condition lastMinute = DSL.condition("{0} >= now() - interval '1 minute'", A.FINISHED_AT);
        return tx.select(A.OUTCOME, DSL.count().filterWhere(lastMinute), DSL.count()).from(A)
                .where(DSL.condition("{0} >= now() - interval '1 hour'", A.FINISHED_AT))
                .groupBy(A.OUTCOME)
                .fetch(r -> new OutcomeCount(r.value1(), r.value2(), r.value3()));
    }

    List<AttemptRow> attempts(DSLContext tx, Collection<String> keys) {
        if (keys.isEmpty()) {
            return List.of();
        }
        return tx.select(A.IDEMPOTENCY_KEY, A.ATTEMPT, A.STARTED_AT, A.FINISHED_AT, A.OUTCOME, A.WORKER, A.ERROR, A.DETAIL)
                .from(A)
                .where(A.IDEMPOTENCY_KEY.in(keys))
                .orderBy(A.FINISHED_AT, A.ID)
                .fetch(r -> new AttemptRow(r.get(A.IDEMPOTENCY_KEY), r.get(A.ATTEMPT), r.get(A.STARTED_AT),
                        r.get(A.FINISHED_AT), r.get(A.OUTCOME), r.get(A.WORKER), r.get(A.ERROR),
                        r.get(A.DETAIL) == null ? null : r.get(A.DETAIL).data()));
    }

    /** One row of {@code email_rendering}, without the HTML part (which only the preview route reads). */
    record RenderingRow(String key, String template, String version, String locale, String subject, String text,
                        boolean hasHtml, Instant renderedAt, int attempt) {
    }

    /**
     * The renderings of the given emails, by primary key. Only a rendering of the effect's own message
     * counts: a key used again after its first effect left may still have the old one until retention
     * removes it.
     */
    List<RenderingRow> renderings(DSLContext tx, Collection<String> keys) {
        if (keys.isEmpty()) {
            return List.of();
        }
        return tx.select(G.IDEMPOTENCY_KEY, G.TEMPLATE, G.TEMPLATE_VERSION, G.LOCALE, G.SUBJECT, G.TEXT_PART,
                        G.HTML_PART.isNotNull(), G.RENDERED_AT, G.ATTEMPT)
                .from(G)
                .join(E).on(E.IDEMPOTENCY_KEY.eq(G.IDEMPOTENCY_KEY)
                        .and(E.MESSAGE_ID.eq(G.MESSAGE_ID)).and(E.MESSAGE_CREATED_AT.eq(G.MESSAGE_CREATED_AT)))
                .where(G.IDEMPOTENCY_KEY.in(keys))
                .fetch(r -> new RenderingRow(r.value1(), r.value2(), r.value3(), r.value4(), r.value5(), r.value6(),
                        r.value7(), r.value8(), r.value9()));
    }

    /** The stored HTML part of an email's rendering, or null when there is none (no rendering, or no HTML). */
    String renderedHtml(DSLContext tx, String key) {
        return tx.select(G.HTML_PART).from(G)
                .join(E).on(E.IDEMPOTENCY_KEY.eq(G.IDEMPOTENCY_KEY)
                        .and(E.MESSAGE_ID.eq(G.MESSAGE_ID)).and(E.MESSAGE_CREATED_AT.eq(G.MESSAGE_CREATED_AT)))
                .where(G.IDEMPOTENCY_KEY.eq(key))
                .fetchOne(G.HTML_PART);
    }

    /** The audit trail of these keys, oldest first (outbox-core owns the trail). */
    List<AuditTrail.Entry> audit(DSLContext tx, Collection<String> keys) {
        return AuditTrail.forKeys(tx, keys);
    }

    // ----------------------------------------------------------------------------------- stats

    /** Pending and running rows of the hot queue: the partial indexes keep these cheap. */
    record QueueCounts(Instant now, long pending, long pendingDue, Instant oldestPending, long running) {
    }

    QueueCounts queueCounts(DSLContext tx) {
        Record r = tx.select(NOW,
                        DSL.count(),
                        DSL.count().filterWhere(M.AVAILABLE_AT.le(NOW)),
                        DSL.min(M.CREATED_AT))
                .from(M).where(M.STATUS.eq("pending")).fetchSingle();
        long running = tx.fetchCount(M, M.STATUS.eq("running"));
        return new QueueCounts(r.get(0, Instant.class), r.get(1, Long.class), r.get(2, Long.class),
                r.get(3, Instant.class), running);
    }

    /** Emails that wait for a person: failed and review, from the history (they outlive the hot rows). */
    Map<String, Long> attentionCounts(DSLContext tx) {
        var counts = new java.util.HashMap<String, Long>(Map.of("failed", 0L, "review", 0L));
        tx.select(E.STATUS, DSL.count()).from(E)
                .where(E.STATUS.in("failed", "review"))
                .groupBy(E.STATUS)
                .forEach(r -> counts.put(r.value1(), r.value2().longValue()));
        return counts;
    }

    private static Field<Instant> minute(Field<Instant> t) {
        return DSL.field("date_trunc('minute', {0})", SQLDataType.INSTANT, t);
    }

    /** Attempts by minute and outcome since {@code from}. */
    List<Bucket> attemptsPerMinute(DSLContext tx, Instant from) {
        Field<Instant> m = minute(A.FINISHED_AT);
        return tx.select(m, A.OUTCOME, DSL.count()).from(A)
                .where(A.FINISHED_AT.ge(from))
                .groupBy(m, A.OUTCOME)
                .fetch(r -> new Bucket(r.value1(), r.value2(), r.value3()));
    }

    /** New emails by minute since {@code from}. */
    List<Bucket> createdPerMinute(DSLContext tx, Instant from) {
        Field<Instant> m = minute(E.CREATED_AT);
        return tx.select(m, DSL.count()).from(E)
                .where(E.CREATED_AT.ge(from))
                .groupBy(m)
                .fetch(r -> new Bucket(r.value1(), "created", r.value2()));
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
        return tx.select(E.IDEMPOTENCY_KEY, E.TOPIC, E.AGGREGATE_TYPE, E.AGGREGATE_ID, E.STATUS, E.MAX_ATTEMPTS,
                        E.MESSAGE_ID, E.MESSAGE_CREATED_AT, E.RESEND_OF)
                .from(E).where(E.IDEMPOTENCY_KEY.eq(key))
                .forNoKeyUpdate().noWait()
                .fetchOne(r -> new ResendSource(r.get(E.IDEMPOTENCY_KEY), r.get(E.TOPIC), r.get(E.AGGREGATE_TYPE),
                        r.get(E.AGGREGATE_ID), r.get(E.STATUS), r.get(E.MAX_ATTEMPTS), r.get(E.MESSAGE_ID),
                        r.get(E.MESSAGE_CREATED_AT), r.get(E.RESEND_OF)));
    }

    /**
     * Keys of the resends of {@code key}, found through the aggregate index (a resend belongs to the
     * aggregate of the email it repeats).
     */
    List<String> resendKeys(DSLContext tx, String key) {
        OutboxEffect o = E.as("o");
        return tx.select(E.IDEMPOTENCY_KEY).from(E)
                .join(o).on(o.IDEMPOTENCY_KEY.eq(key))
                .where(E.AGGREGATE_TYPE.eq(o.AGGREGATE_TYPE), E.AGGREGATE_ID.eq(o.AGGREGATE_ID), E.RESEND_OF.eq(key))
                .orderBy(E.CREATED_AT, E.IDEMPOTENCY_KEY)
                .fetch(E.IDEMPOTENCY_KEY);
    }

    /** Status of an effect without locking, or null when there is none. */
    String effectStatus(DSLContext tx, String key) {
        return tx.select(E.STATUS).from(E).where(E.IDEMPOTENCY_KEY.eq(key)).fetchOne(E.STATUS);
    }

    /** Payload and ordering key of the queue row, or null when retention removed it. */
    Record2<JSONB, String> content(DSLContext tx, long messageId, Instant messageCreatedAt) {
        return tx.select(M.PAYLOAD, M.ORDERING_KEY).from(M)
                .where(M.ID.eq(messageId).and(M.CREATED_AT.eq(messageCreatedAt)))
                .fetchOne();
    }

    /** Every key of one aggregate (an order has a handful). */
    List<String> keysOfAggregate(DSLContext tx, String aggregateType, String aggregateId) {
        return tx.select(E.IDEMPOTENCY_KEY).from(E)
                .where(E.AGGREGATE_TYPE.eq(aggregateType), E.AGGREGATE_ID.eq(aggregateId))
                .fetch(E.IDEMPOTENCY_KEY);
    }

    void setResendOf(DSLContext tx, String newKey, String originalKey) {
        tx.update(E).set(E.RESEND_OF, originalKey).where(E.IDEMPOTENCY_KEY.eq(newKey)).execute();
    }

    List<ControlState.Switch> switches(DSLContext tx) {
        return tx.select(C.SCOPE, C.PAUSED, C.REASON, C.UPDATED_BY, C.UPDATED_AT).from(C).orderBy(C.SCOPE)
                .fetch(r -> new ControlState.Switch(r.value1(), r.value2(), r.value3(), r.value4(), r.value5()));
    }
}
