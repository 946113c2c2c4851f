package io.mailroom.outbox;

import org.jooq.DSLContext;

import java.util.Optional;

import static io.mailroom.db.jooq.Tables.OUTBOX_EFFECT;

/**
 * What other modules may ask about an effect by its idempotency key, without naming
 * {@code outbox_effect}: whether it exists and on which topic. Runs in the caller's transaction; never locks.
 */
public final class EffectLookup {

    private EffectLookup() {
    }

    /** The topic of the effect with this key, empty when there is none (never made, or gone by retention). */
    public static Optional<String> topicOf(DSLContext tx, String key) {
        return Optional.ofNullable(tx.select(OUTBOX_EFFECT.TOPIC).from(OUTBOX_EFFECT)
                .where(OUTBOX_EFFECT.IDEMPOTENCY_KEY.eq(key))
                .fetchOne(OUTBOX_EFFECT.TOPIC));
    }
}
