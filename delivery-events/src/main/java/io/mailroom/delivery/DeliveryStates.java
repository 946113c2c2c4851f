package io.mailroom.delivery;

import org.jooq.Condition;
import org.jooq.DSLContext;
import org.jooq.Field;
import org.jooq.Record;
import org.jooq.impl.DSL;

import java.time.Instant;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

import static io.mailroom.db.jooq.Tables.DELIVERY_STATE;

/**
 * The delivery state of each email ({@code delivery_state}, V16), which delivery-events owns: what a
 * provider last reported after accepting it, moved only forward by rank (deferred < delivered <
 * bounced, soft < hard, < complained). Written by {@link DeliveryEventStore} in the transaction that
 * stores the event; read by support through {@link #of} and {@link #page}; removed with the email's
 * effect by {@link DeliveryEventRetention}.
 */
public final class DeliveryStates {

    private static final io.mailroom.db.jooq.tables.DeliveryState S = DELIVERY_STATE;

    private DeliveryStates() {
    }

    /** One email's delivery state; {@code detail} starts with the bounce type for a bounce. */
    public record State(String key, String state, String detail, Instant updatedAt) {
    }

    /** The states of these emails, by key; an email no provider reported on has none. */
    public static Map<String, State> of(DSLContext tx, Collection<String> keys) {
        Map<String, State> out = new HashMap<>();
        if (keys.isEmpty()) {
            return out;
        }
        tx.select(S.IDEMPOTENCY_KEY, S.STATE, S.DETAIL, S.UPDATED_AT).from(S).where(S.IDEMPOTENCY_KEY.in(keys))
                .forEach(r -> out.put(r.value1(), state(r)));
        return out;
    }

    /**
     * A page of emails in {@code state} (bounced, complained), newest report first, after the keyset
     * ({@code beforeUpdatedAt}, {@code beforeKey}) when given, through {@code delivery_state_listed_idx}.
     */
    public static List<State> page(DSLContext tx, String state, Instant beforeUpdatedAt, String beforeKey, int limit) {
        List<Condition> where = new ArrayList<>();
        where.add(S.STATE.eq(state));
        if (beforeUpdatedAt != null) {
            where.add(DSL.row(S.UPDATED_AT, S.IDEMPOTENCY_KEY).lt(beforeUpdatedAt, beforeKey));
        }
        return tx.select(S.IDEMPOTENCY_KEY, S.STATE, S.DETAIL, S.UPDATED_AT).from(S).where(where)
                .orderBy(S.UPDATED_AT.desc(), S.IDEMPOTENCY_KEY.desc()).limit(limit)
                .fetch(DeliveryStates::state);
    }

    private static State state(Record r) {
        return new State(r.get(S.IDEMPOTENCY_KEY), r.get(S.STATE), r.get(S.DETAIL), r.get(S.UPDATED_AT));
    }

    /**
     * Sets the email's state to this event's kind if that is a step forward; true if it was. Within
     * {@code bounced}, a hard bounce is a step past a soft one; the bounce type lives in the detail,
     * which {@link DeliveryEventStore#detail} always starts with it.
     */
    static boolean moveForward(DSLContext tx, String key, DeliveryEvent event, String detail, Instant now) {
        if (event.kind().rank() <= 0) {
            return false;
        }
        Field<Integer> currentRank = DSL.when(S.STATE.eq(DeliveryKind.DEFERRED.dbValue()), rank(DeliveryKind.DEFERRED, null))
                .when(S.STATE.eq(DeliveryKind.DELIVERED.dbValue()), rank(DeliveryKind.DELIVERED, null))
                .when(S.STATE.eq(DeliveryKind.BOUNCED.dbValue()).and(S.DETAIL.startsWith(BounceType.HARD.dbValue() + " bounce")),
                        rank(DeliveryKind.BOUNCED, BounceType.HARD))
                .when(S.STATE.eq(DeliveryKind.BOUNCED.dbValue()), rank(DeliveryKind.BOUNCED, BounceType.SOFT))
                .when(S.STATE.eq(DeliveryKind.COMPLAINED.dbValue()), rank(DeliveryKind.COMPLAINED, null))
                .else_(0);
        return tx.insertInto(S)
                .set(S.IDEMPOTENCY_KEY, key)
                .set(S.STATE, event.kind().dbValue())
                .set(S.DETAIL, detail)
                .set(S.UPDATED_AT, now)
                .onConflict(S.IDEMPOTENCY_KEY).doUpdate()
                .set(S.STATE, event.kind().dbValue())
                .set(S.DETAIL, detail)
                .set(S.UPDATED_AT, now)
                .where(currentRank.lt(rank(event.kind(), event.bounceType())))
                .execute() == 1;
    }

    /** The kind's rank, doubled so a hard bounce can sit one step above a soft one. */
    static int rank(DeliveryKind kind, BounceType bounce) {
        return kind.rank() * 2 + (bounce == BounceType.HARD ? 1 : 0);
    }
}
