package io.mailroom.email.dispatch;

import io.mailroom.outbox.maintenance.EffectPresence;
import io.mailroom.outbox.maintenance.RetentionStep;
import org.jooq.DSLContext;
import org.jooq.Row3;

import java.time.Instant;
import java.util.List;

import static io.mailroom.db.jooq.Tables.EMAIL_RENDERING;
import static org.jooq.impl.DSL.row;
import static org.jooq.impl.DSL.select;

/**
 * The retention of {@code email_rendering}: a rendering is support history of its effect (what the
 * customer got) and leaves with it, in the transaction that deletes the effect, once it is older
 * than the cutoff. The own pass takes renderings whose effect is gone otherwise (skipped while
 * locked, or of a key used again, whose effect now names another message); a rendering of an
 * effect that still exists stays whatever its age.
 */
public final class RenderingRetention implements RetentionStep {

    @Override
    public String table() {
        return "email_rendering";
    }

    @Override
    public int deleteWithEffects(DSLContext tx, List<DeletedEffect> effects, Instant cutoff) {
        var r = EMAIL_RENDERING;
        var c = EMAIL_RENDERING.as("c");
        List<Row3<String, Long, Instant>> gone = effects.stream()
                .map(e -> row(e.idempotencyKey(), e.messageId(), e.messageCreatedAt())).toList();
        return tx.deleteFrom(r).where(r.IDEMPOTENCY_KEY.in(
                        select(c.IDEMPOTENCY_KEY).from(c)
                                .where(row(c.IDEMPOTENCY_KEY, c.MESSAGE_ID, c.MESSAGE_CREATED_AT).in(gone))
                                .and(c.RENDERED_AT.lt(cutoff))
                                .forUpdate().skipLocked()))
                .execute();
    }

    @Override
    public int deleteOld(DSLContext tx, Instant cutoff, int limit) {
        var r = EMAIL_RENDERING;
        var c = EMAIL_RENDERING.as("c");
        return tx.deleteFrom(r).where(r.IDEMPOTENCY_KEY.in(
                        select(c.IDEMPOTENCY_KEY).from(c)
                                .where(c.RENDERED_AT.lt(cutoff))
                                .and(EffectPresence.noEffectFor(c.IDEMPOTENCY_KEY, c.MESSAGE_ID, c.MESSAGE_CREATED_AT))
                                .orderBy(c.RENDERED_AT)
                                .limit(limit)
                                .forUpdate().skipLocked()))
                .execute();
    }
}
