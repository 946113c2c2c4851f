package io.mailroom.delivery;

import io.mailroom.outbox.maintenance.EffectPresence;
import io.mailroom.outbox.maintenance.RetentionStep;
import org.jooq.DSLContext;

import java.time.Instant;
import java.util.List;

import static io.mailroom.db.jooq.Tables.DELIVERY_EVENT;
import static org.jooq.impl.DSL.select;

/**
 * The retention of {@code delivery_event}: bounces and complaints stay in an email's timeline as
 * long as the email's effect, leave in the transaction that deletes it once received before the
 * cutoff, and orphans (events that matched no email, or whose email's effect is gone otherwise)
 * leave by age. An event of an effect that still exists stays whatever its age.
 */
public final class DeliveryEventRetention implements RetentionStep {

    @Override
    public String table() {
        return "delivery_event";
    }

    @Override
    public int deleteWithEffects(DSLContext tx, List<DeletedEffect> effects, Instant cutoff) {
        var d = DELIVERY_EVENT;
        var c = DELIVERY_EVENT.as("c");
        List<String> keys = effects.stream().map(DeletedEffect::idempotencyKey).toList();
        return tx.deleteFrom(d).where(d.ID.in(
                        select(c.ID).from(c)
                                .where(c.IDEMPOTENCY_KEY.in(keys))
                                .and(c.RECEIVED_AT.lt(cutoff))
                                .forUpdate().skipLocked()))
                .execute();
    }

    @Override
    public int deleteOld(DSLContext tx, Instant cutoff, int limit) {
        var d = DELIVERY_EVENT;
        var c = DELIVERY_EVENT.as("c");
        return tx.deleteFrom(d).where(d.ID.in(
                        select(c.ID).from(c)
                                .where(c.RECEIVED_AT.lt(cutoff))
                                .and(c.IDEMPOTENCY_KEY.isNull().or(EffectPresence.noEffectWithKey(c.IDEMPOTENCY_KEY)))
                                .orderBy(c.RECEIVED_AT)
                                .limit(limit)
                                .forUpdate().skipLocked()))
                .execute();
    }
}
