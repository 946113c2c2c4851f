package io.mailroom.idempotency;

import io.mailroom.db.sql.Redaction;
import org.jooq.DSLContext;
import org.jooq.Field;
import org.jooq.JSONB;
import org.jooq.impl.DSL;
import org.jooq.impl.SQLDataType;

import java.util.ArrayList;
import java.util.Collection;
import java.util.List;

import static io.mailroom.db.jooq.Tables.IDEMPOTENCY_RECORD;

/**
 * idempotency-store's part of erasing an address: the records of the emails that hold it lose it from
 * their descriptor (what the send described: recipient, recipient name, subject) and their last
 * error, in the caller's transaction. Keys, states, reservations, provider references and
 * fingerprints (a one-way hash of the email) are kept, so a repeat of an erased email is still
 * recognised as one.
 */
public final class RecordErasure {

    private static final int MAX_ERROR = 2000;

    private RecordErasure() {
    }

    /** Of these keys, those whose send described the address (normalized) as its recipient. */
    public static List<String> sentTo(DSLContext tx, Collection<String> keys, String address) {
        if (keys.isEmpty()) {
            return List.of();
        }
        var r = IDEMPOTENCY_RECORD;
        return tx.select(r.EFFECT_KEY).from(r).where(r.EFFECT_KEY.in(keys))
                .and(DSL.lower(DSL.trim(DSL.jsonbGetAttributeAsText(r.DESCRIPTOR, "recipient"))).eq(address))
                .fetch(r.EFFECT_KEY);
    }

    /** The recipient names the sends of these keys described, for {@link Redaction#names()}. */
    public static List<String> recipientNames(DSLContext tx, Collection<String> keys) {
        if (keys.isEmpty()) {
            return List.of();
        }
        var r = IDEMPOTENCY_RECORD;
        Field<String> name = DSL.jsonbGetAttributeAsText(r.DESCRIPTOR, "recipientName");
        return new ArrayList<>(tx.selectDistinct(name).from(r).where(r.EFFECT_KEY.in(keys)).and(name.isNotNull()).fetch(name));
    }

    /**
     * Takes the address out of the records of these keys; returns the records changed.
     *
     * @param recipientKeys emails sent to the address: the descriptor's recipient becomes the marker,
     *                      its recipient name goes and its subject becomes {@link Redaction#NAME_MARK}
     * @param otherKeys     emails that only mention it: the address and names are masked in the text
     */
    public static int erase(DSLContext tx, Redaction redaction, Collection<String> recipientKeys, Collection<String> otherKeys) {
        var r = IDEMPOTENCY_RECORD;
        int n = 0;
        if (!recipientKeys.isEmpty()) {
            Field<JSONB> descriptor = DSL.field("""
                    CASE WHEN {0} IS NULL THEN NULL
                         ELSE ({0} - 'recipientName' - 'subject' - 'recipient')
                              || jsonb_build_object('recipient', {1}::text, 'subject', {2}::text) END""",
                    SQLDataType.JSONB, redaction.json(r.DESCRIPTOR), DSL.val(redaction.marker()), DSL.val(Redaction.NAME_MARK));
            n += tx.update(r).set(r.DESCRIPTOR, descriptor).set(r.LAST_ERROR, redaction.text(r.LAST_ERROR, MAX_ERROR))
                    .where(r.EFFECT_KEY.in(recipientKeys)).execute();
        }
        List<String> others = otherKeys.stream().filter(k -> !recipientKeys.contains(k)).toList();
        if (!others.isEmpty()) {
            n += tx.update(r).set(r.DESCRIPTOR, redaction.json(r.DESCRIPTOR))
                    .set(r.LAST_ERROR, redaction.text(r.LAST_ERROR, MAX_ERROR))
                    .where(r.EFFECT_KEY.in(others)).execute();
        }
        return n;
    }
}
