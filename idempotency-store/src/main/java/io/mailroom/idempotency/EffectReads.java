package io.mailroom.idempotency;

import io.mailroom.db.jooq.tables.records.IdempotencyRecordRecord;
import org.jooq.DSLContext;

import java.time.Instant;
import java.util.List;
import java.util.Optional;

import static io.mailroom.db.jooq.Tables.IDEMPOTENCY_RECORD;
import static io.mailroom.idempotency.IdempotencyStore.MAX_KEY_LENGTH;

/**
 * The reading role of {@link IdempotencyStore}: one record, the records whose outcome is unknown
 * (for review lists and sweepers), and the mapping of a row to an {@link EffectRecord}. Reads only.
 */
final class EffectReads {

    private static final io.mailroom.db.jooq.tables.IdempotencyRecord R = IDEMPOTENCY_RECORD;

    private EffectReads() {
    }

    static Optional<EffectRecord> find(DSLContext dsl, String effectKey) {
        Inputs.requireText("effectKey", effectKey, MAX_KEY_LENGTH);
        return dsl.selectFrom(R).where(R.EFFECT_KEY.eq(effectKey)).fetchOptional().map(EffectReads::toRecord);
    }

    static List<EffectRecord> findUnfinished(DSLContext dsl, Instant reservedBefore, int limit) {
        if (reservedBefore == null) {
            throw new IllegalArgumentException("reservedBefore must not be null");
        }
        if (limit < 1 || limit > 10_000) {
            throw new IllegalArgumentException("limit must be between 1 and 10000, got " + limit);
        }
        return dsl.selectFrom(R)
                .where(R.STATE.in(EffectState.RESERVED.dbValue(), EffectState.AMBIGUOUS.dbValue()))
                .and(R.RESERVED_AT.lt(reservedBefore))
                .orderBy(R.RESERVED_AT, R.EFFECT_KEY)
                .limit(limit)
                .fetch(EffectReads::toRecord);
    }

    static EffectRecord toRecord(IdempotencyRecordRecord row) {
        return new EffectRecord(row.getEffectKey(), new Fingerprint(row.getFingerprint()),
                EffectState.fromDb(row.getState()), row.getReservations(), row.getRepeats(), row.getReservedBy(),
                row.getFirstReservedAt(), row.getReservedAt(), row.getCompletedAt(), row.getResultRef(),
                row.getLastError(), row.getDescriptor() == null ? null : row.getDescriptor().data(),
                row.getUpdatedAt());
    }
}
