package io.mailroom.outbox.admin;

import io.mailroom.db.jooq.tables.AuditLog;
import io.mailroom.db.jooq.tables.OutboxAttempt;
import io.mailroom.db.jooq.tables.OutboxEffect;
import io.mailroom.db.jooq.tables.OutboxEffectTerm;
import io.mailroom.db.jooq.tables.OutboxMessage;
import io.mailroom.db.sql.Redaction;
import org.jooq.Condition;
import org.jooq.DSLContext;
import org.jooq.Field;
import org.jooq.JSONB;
import org.jooq.Row2;
import org.jooq.impl.DSL;
import org.jooq.impl.SQLDataType;

import java.time.Instant;
import java.util.ArrayList;
import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import static io.mailroom.db.jooq.Tables.AUDIT_LOG;
import static io.mailroom.db.jooq.Tables.OUTBOX_ATTEMPT;
import static io.mailroom.db.jooq.Tables.OUTBOX_EFFECT;
import static io.mailroom.db.jooq.Tables.OUTBOX_EFFECT_TERM;
import static io.mailroom.db.jooq.Tables.OUTBOX_MESSAGE;

/**
 * outbox-core's part of erasing an address (a customer's right to erasure): finding the emails that
 * hold it in outbox-core's tables, and taking it out of {@code outbox_message}, {@code outbox_effect},
 * {@code outbox_effect_term}, {@code outbox_attempt} and {@code audit_log}, in the caller's
 * transaction (support orchestrates every owner's part in one).
 *
 * <p>An email sent <em>to</em> the address (a recipient email) loses its payload but for its envelope's
 * template and locale (the recipient becomes the erasure's marker; name, reply-to, headers and data go),
 * and its {@code to:} and {@code domain:} terms become one {@code erased:<hash>} term. An email that only
 * mentions the address (in its data, a reply-to, an error) keeps its payload with the address and the
 * names taken out. Both keep their keys, statuses, counts and times.
 */
public final class EffectErasure {

    private static final OutboxEffect E = OUTBOX_EFFECT;
    private static final OutboxMessage M = OUTBOX_MESSAGE;
    private static final OutboxEffectTerm T = OUTBOX_EFFECT_TERM;
    private static final OutboxAttempt A = OUTBOX_ATTEMPT;
    private static final AuditLog L = AUDIT_LOG;
    /** The length the error columns hold (their check constraints); a marker is longer than most addresses. */
    private static final int MAX_ERROR = 2000;
    private static final Field<Instant> NOW = DSL.field("now()", SQLDataType.INSTANT);

    private EffectErasure() {
    }

    /**
     * A queued message whose payload holds the address.
     *
     * @param recipient the payload's recipient is the address (envelope {@code to.address}, legacy {@code customerEmail})
     * @param names     the display names written beside the address (recipient, reply-to), for {@link Redaction#names()}
     */
    public record Queued(String key, long messageId, Instant createdAt, boolean recipient, List<String> names) {
    }

    /** The keys of the effects kept under {@code term} ({@code to:ann@example.com}), through the term index. */
    public static List<String> keysWithTerm(DSLContext tx, String term) {
        return tx.selectDistinct(T.IDEMPOTENCY_KEY).from(T).where(T.TERM.eq(term)).fetch(T.IDEMPOTENCY_KEY);
    }

    /**
     * The queued messages whose payload holds the address, in any case. A scan of the hot queue (which
     * retention keeps to a few days); it finds what the terms cannot: a legacy payload, a reply-to, data.
     */
    public static List<Queued> queuedMentioning(DSLContext tx, Redaction r) {
        Field<String> toAddress = DSL.field("{0} -> 'to' ->> 'address'", SQLDataType.VARCHAR, M.PAYLOAD);
        Field<String> toName = DSL.field("{0} -> 'to' ->> 'name'", SQLDataType.VARCHAR, M.PAYLOAD);
        Field<String> legacyAddress = DSL.field("{0} ->> 'customerEmail'", SQLDataType.VARCHAR, M.PAYLOAD);
        Field<String> legacyName = DSL.field("{0} ->> 'customerName'", SQLDataType.VARCHAR, M.PAYLOAD);
        Field<String> replyAddress = DSL.field("{0} -> 'replyTo' ->> 'address'", SQLDataType.VARCHAR, M.PAYLOAD);
        Field<String> replyName = DSL.field("{0} -> 'replyTo' ->> 'name'", SQLDataType.VARCHAR, M.PAYLOAD);
        return tx.select(M.IDEMPOTENCY_KEY, M.ID, M.CREATED_AT, toAddress, toName, legacyAddress, legacyName, replyAddress, replyName)
                .from(M)
                .where(r.mentions(M.PAYLOAD.cast(SQLDataType.VARCHAR)))
                .fetch(row -> {
                    boolean to = same(r, row.value4()) || (row.value4() == null && same(r, row.value6()));
                    List<String> names = new ArrayList<>();
                    if (same(r, row.value4()) && row.value5() != null) {
                        names.add(row.value5());
                    }
                    if (same(r, row.value6()) && row.value7() != null) {
                        names.add(row.value7());
                    }
                    if (same(r, row.value8()) && row.value9() != null) {
                        names.add(row.value9());
                    }
                    return new Queued(row.value1(), row.value2(), row.value3(), to, List.copyOf(names));
                });
    }

    private static boolean same(Redaction r, String address) {
        return address != null && address.strip().equalsIgnoreCase(r.address());
    }

    /**
     * Locks the queue rows of these effects ({@code FOR NO KEY UPDATE NOWAIT}: a row a dispatcher holds
     * fails at once with SQLSTATE 55P03) and gives each key's queue status; keys whose queue row is
     * gone are absent. A locked row cannot be claimed until the caller's transaction ends.
     */
    public static Map<String, String> lockQueued(DSLContext tx, Collection<String> keys) {
        Map<String, String> out = new LinkedHashMap<>();
        if (keys.isEmpty()) {
            return out;
        }
        tx.select(E.IDEMPOTENCY_KEY, M.STATUS).from(E)
                .join(M).on(M.ID.eq(E.MESSAGE_ID).and(M.CREATED_AT.eq(E.MESSAGE_CREATED_AT)))
                .where(E.IDEMPOTENCY_KEY.in(keys))
                .orderBy(E.IDEMPOTENCY_KEY)
                .forNoKeyUpdate().of(M).noWait()
                .forEach(row -> out.put(row.value1(), row.value2()));
        return out;
    }

    /**
     * Cancels the pending ones of these effects (queue row and effect), as a person's cancel does;
     * the caller holds their rows ({@link #lockQueued}). Returns the keys cancelled.
     */
    public static List<String> cancelPending(DSLContext tx, Collection<String> keys) {
        if (keys.isEmpty()) {
            return List.of();
        }
        List<String> cancelled = tx.update(M)
                .set(M.STATUS, "cancelled")
                .set(M.FINISHED_AT, NOW)
                .set(M.WAITING_FOR, (String) null)
                .set(M.UPDATED_AT, NOW)
                .from(E)
                .where(M.ID.eq(E.MESSAGE_ID).and(M.CREATED_AT.eq(E.MESSAGE_CREATED_AT)))
                .and(E.IDEMPOTENCY_KEY.in(keys)).and(M.STATUS.eq("pending"))
                .returning(M.IDEMPOTENCY_KEY)
                .fetch(M.IDEMPOTENCY_KEY);
        if (!cancelled.isEmpty()) {
            tx.update(E).set(E.STATUS, "cancelled").set(E.FINISHED_AT, NOW).set(E.UPDATED_AT, NOW)
                    .where(E.IDEMPOTENCY_KEY.in(cancelled)).execute();
        }
        return cancelled;
    }

    /** What {@link #erase} changed. */
    public record Erased(int emails, int queued, int attempts, int terms, int auditEntries) {
    }

    /**
     * Takes the address out of outbox-core's tables.
     *
     * @param recipientKeys emails sent to the address: payload reduced to its envelope, terms replaced
     * @param otherKeys     emails that only mention it: text masked
     * @param queued        queued messages found by {@link #queuedMentioning} (a key's older message included)
     * @param erasedTerm    the term the recipient emails are kept under instead ({@code erased:<hash>}), or null
     */
    public static Erased erase(DSLContext tx, Redaction r, Collection<String> recipientKeys, Collection<String> otherKeys,
                               Collection<Queued> queued, String erasedTerm) {
        List<String> all = new ArrayList<>(recipientKeys);
        otherKeys.stream().filter(k -> !recipientKeys.contains(k)).forEach(all::add);
        List<Row2<Long, Instant>> queuedRecipient = queued.stream().filter(q -> q.recipient() || recipientKeys.contains(q.key()))
                .map(q -> DSL.row(q.messageId(), q.createdAt())).toList();
        List<Row2<Long, Instant>> queuedOther = queued.stream().filter(q -> !q.recipient() && !recipientKeys.contains(q.key()))
                .map(q -> DSL.row(q.messageId(), q.createdAt())).toList();

        int messages = 0;
        if (!recipientKeys.isEmpty() || !queuedRecipient.isEmpty()) {
            messages += tx.update(M).set(M.PAYLOAD, envelopeOnly(r)).set(M.LAST_ERROR, r.text(M.LAST_ERROR, MAX_ERROR))
                    .where(ofEffects(recipientKeys).or(in(queuedRecipient))).execute();
        }
        List<String> others = all.stream().filter(k -> !recipientKeys.contains(k)).toList();
        if (!others.isEmpty() || !queuedOther.isEmpty()) {
            messages += tx.update(M).set(M.PAYLOAD, r.json(M.PAYLOAD)).set(M.LAST_ERROR, r.text(M.LAST_ERROR, MAX_ERROR))
                    .where(ofEffects(others).or(in(queuedOther))).execute();
        }
        int emails = 0;
        int attempts = 0;
        int terms = 0;
        if (!all.isEmpty()) {
            emails = tx.update(E).set(E.LAST_ERROR, r.text(E.LAST_ERROR, MAX_ERROR)).where(E.IDEMPOTENCY_KEY.in(all)).execute();
            attempts = tx.update(A).set(A.ERROR, r.text(A.ERROR, MAX_ERROR)).set(A.DETAIL, r.json(A.DETAIL))
                    .where(A.IDEMPOTENCY_KEY.in(all)).and(r.mentions(A.ERROR).or(r.mentions(A.DETAIL.cast(SQLDataType.VARCHAR)))
                            .or(namesIn(r, A.ERROR))).execute();
        }
        if (!recipientKeys.isEmpty()) {
            String domain = r.address().substring(r.address().lastIndexOf('@') + 1);
            terms = tx.deleteFrom(T).where(T.IDEMPOTENCY_KEY.in(recipientKeys))
                    .and(T.TERM.in("to:" + r.address(), "domain:" + domain)).execute();
            if (erasedTerm != null) {
                tx.insertInto(T, T.IDEMPOTENCY_KEY, T.TERM, T.CREATED_AT)
                        .select(DSL.select(E.IDEMPOTENCY_KEY, DSL.val(erasedTerm), E.CREATED_AT).from(E)
                                .where(E.IDEMPOTENCY_KEY.in(recipientKeys)))
                        .onConflictDoNothing().execute();
            }
        }
        // the entries of suppression changes carry the address in their detail (audit_log_address_idx)
        Condition byAddress = DSL.jsonbGetAttributeAsText(L.DETAIL, "address").eq(r.address());
        Field<String> detail = L.DETAIL.cast(SQLDataType.VARCHAR);
        Condition ofEmails = all.isEmpty() ? DSL.falseCondition() : L.IDEMPOTENCY_KEY.in(all)
                .and(r.mentions(L.REASON).or(r.mentions(detail)).or(namesIn(r, L.REASON)).or(namesIn(r, detail)));
        int audit = tx.update(L).set(L.REASON, r.text(L.REASON)).set(L.DETAIL, r.json(L.DETAIL))
                .where(byAddress.or(ofEmails)).execute();
        return new Erased(emails, messages, attempts, terms, audit);
    }

    /** The payload of a recipient email once erased: the envelope's version, template and locale, the marker as recipient. */
    private static Field<JSONB> envelopeOnly(Redaction r) {
        return DSL.field("""
                CASE WHEN jsonb_typeof({0} -> 'to') = 'object'
                     THEN jsonb_strip_nulls(jsonb_build_object('v', {0} -> 'v', 'template', {0} -> 'template',
                          'locale', {0} -> 'locale')) || jsonb_build_object('to', jsonb_build_object('address', {1}::text),
                          'headers', '{}'::jsonb, 'data', '{}'::jsonb, 'erased', true)
                     ELSE jsonb_build_object('customerEmail', {1}::text, 'erased', true) END""",
                SQLDataType.JSONB, M.PAYLOAD, DSL.val(r.marker()));
    }

    private static Condition ofEffects(Collection<String> keys) {
        if (keys.isEmpty()) {
            return DSL.falseCondition();
        }
        return DSL.row(M.ID, M.CREATED_AT).in(DSL.select(E.MESSAGE_ID, E.MESSAGE_CREATED_AT).from(E)
                .where(E.IDEMPOTENCY_KEY.in(keys)));
    }

    private static Condition in(List<Row2<Long, Instant>> rows) {
        return rows.isEmpty() ? DSL.falseCondition() : DSL.row(M.ID, M.CREATED_AT).in(rows);
    }

    private static Condition namesIn(Redaction r, Field<String> text) {
        if (r.names().isEmpty()) {
            return DSL.falseCondition();
        }
        return DSL.or(r.names().stream().map(n -> text.likeIgnoreCase("%" + n.replace("\\", "\\\\").replace("%", "\\%")
                .replace("_", "\\_") + "%", '\\')).toList());
    }
}
