package io.mailroom.outbox.runtime;

import io.mailroom.db.sql.SqlClock;
import org.jooq.DSLContext;

import java.util.HashSet;
import java.util.Set;

import static io.mailroom.db.jooq.Tables.OUTBOX_CONTROL;
import static org.jooq.impl.DSL.val;

/**
 * The pause switches in {@code outbox_control}: one row per scope ({@code *} for all, or a topic).
 * The runtime reads them; people set them through {@code io.mailroom.outbox.admin.OutboxControl}.
 */
public final class ControlStore {

    private final SqlClock clock;

    public ControlStore(SqlClock clock) {
        this.clock = clock;
    }

    /** Scopes currently paused ({@code *} for all, or a topic). */
    public Set<String> pausedScopes(DSLContext dsl) {
        return new HashSet<>(dsl.select(OUTBOX_CONTROL.SCOPE).from(OUTBOX_CONTROL)
                .where(OUTBOX_CONTROL.PAUSED.isTrue()).fetch(OUTBOX_CONTROL.SCOPE));
    }

    /** One scope's switch. */
    public record Switch(String scope, boolean paused, String reason, String updatedBy, java.time.Instant updatedAt) {
    }

    /** Every switch, paused or not, by scope. */
    public java.util.List<Switch> switches(DSLContext dsl) {
        var c = OUTBOX_CONTROL;
        return dsl.select(c.SCOPE, c.PAUSED, c.REASON, c.UPDATED_BY, c.UPDATED_AT).from(c).orderBy(c.SCOPE)
                .fetch(r -> new Switch(r.value1(), r.value2(), r.value3(), r.value4(), r.value5()));
    }

    public void setPaused(DSLContext dsl, String scope, boolean paused, String reason, String actor) {
        var c = OUTBOX_CONTROL;
        dsl.insertInto(c, c.SCOPE, c.PAUSED, c.REASON, c.UPDATED_BY, c.UPDATED_AT)
                .values(val(scope), val(paused), val(reason), val(actor), clock.now())
                .onConflict(c.SCOPE).doUpdate()
                .set(c.PAUSED, paused).set(c.REASON, reason).set(c.UPDATED_BY, actor).set(c.UPDATED_AT, clock.now())
                .execute();
    }
}
