package io.mailroom.delivery;

import org.jooq.DSLContext;
import org.jooq.Field;
import org.jooq.impl.DSL;

import java.time.Instant;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

import static io.mailroom.db.jooq.Tables.DELIVERY_RECIPIENT_STATE;

/**
 * The delivery state of each recipient of an email ({@code delivery_recipient_state}, V24): what a
 * provider last reported for that address, moved only forward by the rank {@link DeliveryStates}
 * uses. The email's own state is the furthest any recipient reached (a bounced Cc makes the email
 * "bounced" even if its To got it), and this says who. Written by {@link DeliveryEventStore} beside
 * the email's state, in the transaction that stores the event; a row leaves with its email's state
 * (the foreign key cascades), so retention needs no step of its own.
 */
public final class DeliveryRecipientStates {

    private static final io.mailroom.db.jooq.tables.DeliveryRecipientState R = DELIVERY_RECIPIENT_STATE;

    private DeliveryRecipientStates() {
    }

    /** One recipient's delivery state; {@code detail} starts with the bounce type for a bounce. */
    public record State(String key, String address, String state, String detail, Instant updatedAt) {
    }

    /** The recipients' states of these emails, by key, each in address order. */
    public static Map<String, List<State>> of(DSLContext tx, Collection<String> keys) {
        Map<String, List<State>> out = new HashMap<>();
        if (keys.isEmpty()) {
            return out;
        }
        tx.select(R.IDEMPOTENCY_KEY, R.ADDRESS, R.STATE, R.DETAIL, R.UPDATED_AT).from(R).where(R.IDEMPOTENCY_KEY.in(keys))
                .orderBy(R.IDEMPOTENCY_KEY, R.ADDRESS)
                .forEach(r -> out.computeIfAbsent(r.value1(), k -> new ArrayList<>())
                        .add(new State(r.value1(), r.value2(), r.value3(), r.value4(), r.value5())));
        return out;
    }

    /** Sets the recipient's state to this event's kind if that is a step forward; true if it was. */
    static boolean moveForward(DSLContext tx, String key, String address, DeliveryEvent event, String detail, Instant now) {
        if (event.kind().rank() <= 0 || address == null) {
            return false;
        }
        Field<Integer> currentRank = DSL.when(R.STATE.eq(DeliveryKind.DEFERRED.dbValue()), DeliveryStates.rank(DeliveryKind.DEFERRED, null))
                .when(R.STATE.eq(DeliveryKind.DELIVERED.dbValue()), DeliveryStates.rank(DeliveryKind.DELIVERED, null))
                .when(R.STATE.eq(DeliveryKind.BOUNCED.dbValue()).and(R.DETAIL.startsWith(BounceType.HARD.dbValue() + " bounce")),
                        DeliveryStates.rank(DeliveryKind.BOUNCED, BounceType.HARD))
                .when(R.STATE.eq(DeliveryKind.BOUNCED.dbValue()), DeliveryStates.rank(DeliveryKind.BOUNCED, BounceType.SOFT))
                .when(R.STATE.eq(DeliveryKind.COMPLAINED.dbValue()), DeliveryStates.rank(DeliveryKind.COMPLAINED, null))
                .else_(0);
        return tx.insertInto(R)
                .set(R.IDEMPOTENCY_KEY, key)
                .set(R.ADDRESS, address)
                .set(R.STATE, event.kind().dbValue())
                .set(R.DETAIL, detail)
                .set(R.UPDATED_AT, now)
                .onConflict(R.IDEMPOTENCY_KEY, R.ADDRESS).doUpdate()
                .set(R.STATE, event.kind().dbValue())
                .set(R.DETAIL, detail)
                .set(R.UPDATED_AT, now)
                .where(currentRank.lt(DeliveryStates.rank(event.kind(), event.bounceType())))
                .execute() == 1;
    }
}
