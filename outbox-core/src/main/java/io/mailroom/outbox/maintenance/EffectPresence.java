package io.mailroom.outbox.maintenance;

import org.jooq.Condition;
import org.jooq.Field;

import java.time.Instant;

import static io.mailroom.db.jooq.Tables.OUTBOX_EFFECT;
import static org.jooq.impl.DSL.notExists;
import static org.jooq.impl.DSL.selectOne;

/**
 * outbox-core's answer to "is this effect gone?", as a condition another module's retention
 * statement ({@link RetentionStep#deleteOld}) puts in its own {@code WHERE}, so that statement stays
 * one bounded {@code SKIP LOCKED} query without its owner naming {@code outbox_effect}. An effect
 * that exists in any state counts as present: its history stays with it.
 */
public final class EffectPresence {

    private EffectPresence() {
    }

    /** True when no effect has this key. */
    public static Condition noEffectWithKey(Field<String> key) {
        var e = OUTBOX_EFFECT;
        return notExists(selectOne().from(e).where(e.IDEMPOTENCY_KEY.eq(key)));
    }

    /** True when no effect is this outbox message under this key (a key used again names another message). */
    public static Condition noEffectFor(Field<String> key, Field<Long> messageId, Field<Instant> messageCreatedAt) {
        var e = OUTBOX_EFFECT;
        return notExists(selectOne().from(e).where(e.IDEMPOTENCY_KEY.eq(key))
                .and(e.MESSAGE_ID.eq(messageId)).and(e.MESSAGE_CREATED_AT.eq(messageCreatedAt)));
    }
}
