package io.mailroom.delivery;

import io.mailroom.db.sql.Redaction;
import org.jooq.Condition;
import org.jooq.DSLContext;
import org.jooq.impl.DSL;

import java.util.Collection;
import java.util.List;

import static io.mailroom.db.jooq.Tables.DELIVERY_EVENT;
import static io.mailroom.db.jooq.Tables.DELIVERY_STATE;
import static io.mailroom.db.jooq.Tables.SOFT_BOUNCE_RUN;
import static io.mailroom.db.jooq.Tables.SUPPRESSION;

/**
 * delivery-events' part of erasing an address, in the caller's transaction: the delivery events
 * that name it (as their recipient, orphans included, or in the provider's words), the delivery
 * states of its emails, its suppression entries and its soft-bounce run.
 *
 * <p>A suppression in force stays in force: its address becomes the erasure's marker and the keyed
 * hash of the address ({@code suppression.address_hash}) is what the suppression list matches it by
 * from then on, so the next email to the address is still stopped. A lifted entry keeps no hash. The
 * soft-bounce run is removed (a count towards a suppression, not a fact support reads).
 */
public final class DeliveryErasure {

    private DeliveryErasure() {
    }

    /** The keys of the emails whose delivery events name the address (normalized) as their recipient. */
    public static List<String> keysOfEventsTo(DSLContext tx, String address) {
        var d = DELIVERY_EVENT;
        return tx.selectDistinct(d.IDEMPOTENCY_KEY).from(d)
                .where(d.RECIPIENT.eq(address)).and(d.IDEMPOTENCY_KEY.isNotNull())
                .fetch(d.IDEMPOTENCY_KEY);
    }

    /**
     * What {@link #erase} changed.
     *
     * @param keptByHash an entry of the address is in force, now under its hash
     */
    public record Erased(int events, int states, int suppressions, boolean keptByHash, int softBounceRuns) {
    }

    /**
     * Takes the address out of delivery-events' tables.
     *
     * @param addressHash the keyed hash of the address ({@code SuppressionList.hash}) its active entries are kept under
     * @param keys        the emails that hold the address (their events and states are masked)
     */
    public static Erased erase(DSLContext tx, Redaction r, String addressHash, Collection<String> keys) {
        var d = DELIVERY_EVENT;
        Condition ofEmails = keys.isEmpty() ? DSL.falseCondition() : d.IDEMPOTENCY_KEY.in(keys);
        int events = tx.update(d)
                .set(d.RECIPIENT, DSL.when(DSL.lower(DSL.trim(d.RECIPIENT)).eq(r.address()), DSL.val(r.marker()))
                        .otherwise(r.text(d.RECIPIENT, DeliveryEventStore.MAX_RECIPIENT)))
                .set(d.DIAGNOSTIC_CODE, r.text(d.DIAGNOSTIC_CODE, DeliveryEventStore.MAX_DIAGNOSTIC))
                .set(d.DESCRIPTION, r.text(d.DESCRIPTION, DeliveryEventStore.MAX_DESCRIPTION))
                .where(d.RECIPIENT.eq(r.address()).or(ofEmails))
                .execute();
        int states = keys.isEmpty() ? 0 : tx.update(DELIVERY_STATE)
                .set(DELIVERY_STATE.DETAIL, r.text(DELIVERY_STATE.DETAIL, DeliveryEventStore.MAX_DETAIL))
                .where(DELIVERY_STATE.IDEMPOTENCY_KEY.in(keys)).and(r.mentions(DELIVERY_STATE.DETAIL))
                .execute();
        // the address's own rows among the recipients' states (V24), counted with the states
        var rs = io.mailroom.db.jooq.Tables.DELIVERY_RECIPIENT_STATE;
        states += tx.update(rs)
                .set(rs.ADDRESS, r.marker())
                .set(rs.DETAIL, r.text(rs.DETAIL, DeliveryEventStore.MAX_DETAIL))
                .where(rs.ADDRESS.eq(r.address()))
                .execute();
        var s = SUPPRESSION;
        int suppressions = tx.update(s)
                .set(s.ADDRESS, r.marker())
                .set(s.ADDRESS_HASH, DSL.when(s.LIFTED_AT.isNull(), DSL.val(addressHash)).otherwise(DSL.inline((String) null)))
                .set(s.DETAIL, r.text(s.DETAIL, DeliveryEventStore.MAX_DETAIL))
                .set(s.LIFT_REASON, r.text(s.LIFT_REASON, DeliveryEventStore.MAX_DETAIL))
                .where(s.ADDRESS.eq(r.address()))
                .execute();
        boolean kept = tx.fetchExists(DSL.selectOne().from(s)
                .where(s.ADDRESS_HASH.eq(addressHash)).and(s.LIFTED_AT.isNull()));
        int runs = tx.deleteFrom(SOFT_BOUNCE_RUN).where(SOFT_BOUNCE_RUN.ADDRESS.eq(r.address())).execute();
        return new Erased(events, states, suppressions, kept, runs);
    }
}
