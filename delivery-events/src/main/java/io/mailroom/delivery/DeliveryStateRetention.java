package io.mailroom.delivery;

import io.mailroom.outbox.maintenance.EffectPresence;
import io.mailroom.outbox.maintenance.RetentionStep;
import org.jooq.DSLContext;

import java.time.Instant;
import java.util.List;

import static io.mailroom.db.jooq.Tables.DELIVERY_STATE;
import static org.jooq.impl.DSL.select;

/**
 * The retention of {@code delivery_state}: an email's delivery state is part of its effect's record
 * and leaves in the transaction that deletes the effect, whatever its age; the own pass takes states
 * whose effect is gone otherwise (skipped while locked), once older than the cutoff.
 */
public final class DeliveryStateRetention implements RetentionStep {

    @Override
    public String table() {
        return "delivery_state";
    }

    @Override
    public int deleteWithEffects(DSLContext tx, List<DeletedEffect> effects, Instant cutoff) {
        var s = DELIVERY_STATE;
        var c = DELIVERY_STATE.as("c");
        List<String> keys = effects.stream().map(DeletedEffect::idempotencyKey).toList();
        return tx.deleteFrom(s).where(s.IDEMPOTENCY_KEY.in(
                        select(c.IDEMPOTENCY_KEY).from(c).where(c.IDEMPOTENCY_KEY.in(keys)).forUpdate().skipLocked()))
                .execute();
    }

    @Override
    public int deleteOld(DSLContext tx, Instant cutoff, int limit) {
        var s = DELIVERY_STATE;
        var c = DELIVERY_STATE.as("c");
        return tx.deleteFrom(s).where(s.IDEMPOTENCY_KEY.in(
                        select(c.IDEMPOTENCY_KEY).from(c)
                                .where(c.UPDATED_AT.lt(cutoff))
                                .and(EffectPresence.noEffectWithKey(c.IDEMPOTENCY_KEY))
                                .orderBy(c.UPDATED_AT)
                                .limit(limit)
                                .forUpdate().skipLocked()))
                .execute();
    }
}
