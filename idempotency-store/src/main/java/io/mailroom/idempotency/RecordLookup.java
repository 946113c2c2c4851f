package io.mailroom.idempotency;

import org.jooq.DSLContext;
import org.jooq.impl.DSL;

import java.time.Instant;
import java.util.Collection;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

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

    /**
     * What the record of one key says, for showing it.
     *
     * @param descriptor the requested text fields of the descriptor (a field the descriptor lacks maps to null)
     */
    public record Summary(String key, String state, String resultRef, Instant completedAt, Map<String, String> descriptor) {
    }

    /**
     * The records of these keys by key (keys without one are absent), with the named text fields of
     * each descriptor, through the primary key.
     */
    public static Map<String, Summary> summaries(DSLContext tx, Collection<String> keys, List<String> descriptorFields) {
        if (keys.isEmpty()) {
            return Map.of();
        }
        var r = IDEMPOTENCY_RECORD;
        List<org.jooq.Field<?>> fields = new java.util.ArrayList<>(List.of(r.EFFECT_KEY, r.STATE, r.RESULT_REF, r.COMPLETED_AT));
        descriptorFields.forEach(f -> fields.add(DSL.jsonbGetAttributeAsText(r.DESCRIPTOR, f)));
        Map<String, Summary> out = new HashMap<>();
        tx.select(fields).from(r).where(r.EFFECT_KEY.in(keys)).forEach(row -> {
            Map<String, String> descriptor = new LinkedHashMap<>();
            for (int i = 0; i < descriptorFields.size(); i++) {
                descriptor.put(descriptorFields.get(i), row.get(4 + i, String.class));
            }
            out.put(row.get(r.EFFECT_KEY), new Summary(row.get(r.EFFECT_KEY), row.get(r.STATE), row.get(r.RESULT_REF),
                    row.get(r.COMPLETED_AT), java.util.Collections.unmodifiableMap(descriptor)));
        });
        return out;
    }
}
