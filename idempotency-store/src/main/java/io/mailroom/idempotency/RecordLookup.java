package io.mailroom.idempotency;

import org.jooq.DSLContext;
import org.jooq.impl.DSL;

import java.util.Collection;
import java.util.List;

import static io.mailroom.db.jooq.Tables.IDEMPOTENCY_RECORD;

/**
 * Reads of {@code idempotency_record} that other modules need about an effect already performed:
 * which keys a provider's reference ({@code result_ref}, e.g. a Message-ID) was recorded for, and
 * what the send described (its descriptor). Runs in the caller's transaction; never locks.
 */
public final class RecordLookup {

    private static final int MAX_KEYS_BY_REFERENCE = 20;

    private RecordLookup() {
    }

    /**
     * The keys whose recorded result reference is one of {@code refs}, the latest completed first
     * (at most 20: a reference names one send, a few at most when a provider reuses ids).
     */
    public static List<String> keysByResultRef(DSLContext tx, Collection<String> refs) {
        if (refs.isEmpty()) {
            return List.of();
        }
        var r = IDEMPOTENCY_RECORD;
        return tx.select(r.EFFECT_KEY).from(r)
                .where(r.RESULT_REF.in(refs))
                .orderBy(r.COMPLETED_AT.desc().nullsLast())
                .limit(MAX_KEYS_BY_REFERENCE)
                .fetch(r.EFFECT_KEY);
    }

    /** A text field of the key's descriptor (what its send recorded), or null when there is none. */
    public static String descriptorText(DSLContext tx, String key, String field) {
        var r = IDEMPOTENCY_RECORD;
        return tx.select(DSL.jsonbGetAttributeAsText(r.DESCRIPTOR, field)).from(r)
                .where(r.EFFECT_KEY.eq(key))
                .fetchOne(0, String.class);
    }
}
