package io.mailroom.idempotency;

import io.mailroom.db.jooq.Keys;
import io.mailroom.db.jooq.tables.records.IdempotencyRecordRecord;
import io.mailroom.db.sql.HotSql;
import io.mailroom.db.sql.SqlClock;
import io.mailroom.db.sql.SqlStates;
import org.jooq.DSLContext;
import org.jooq.Field;
import org.jooq.JSONB;
import org.jooq.exception.DataAccessException;
import org.jooq.impl.DSL;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;

import static io.mailroom.db.jooq.Tables.IDEMPOTENCY_RECORD;
import static io.mailroom.idempotency.IdempotencyStore.MAX_ACTOR_LENGTH;
import static io.mailroom.idempotency.IdempotencyStore.MAX_KEY_LENGTH;
import static io.mailroom.idempotency.IdempotencyStore.PKEY;

/**
 * The reservation role of {@link IdempotencyStore}: decides whether an effect may be performed now,
 * one key ({@link #reserve}) or a claimed batch's keys ({@link #reserveAll}). Invariant: of any number
 * of concurrent reservers of one key, at most one is granted {@link Reservation.Reserved} for any one
 * state of the row (the INSERT's conflict arbitration, the row lock, and the compare-and-set of a
 * re-reservation; see {@link IdempotencyStore#reserve}), and never for another fingerprint.
 */
final class Reservations {

    private static final Logger log = LoggerFactory.getLogger(Reservations.class);

    /**
     * A reserve round ends undecided only if the key is deleted between its INSERT and its SELECT (or,
     * in autocommit, changed between SELECT and UPDATE); bounded anyway.
     */
    private static final int MAX_RESERVE_ROUNDS = 5;

    private static final io.mailroom.db.jooq.tables.IdempotencyRecord R = IDEMPOTENCY_RECORD;

    /**
     * The batch reservation of the dispatcher's hot path, as a finished text ({@link HotSql}):
     * rendering it through jOOQ for every batch was costly in a profile. Its rows go in as one array
     * per column, so the text is the same for every batch size.
     */
    static final String RESERVE_ALL = """
            INSERT INTO {schema}.idempotency_record AS r (effect_key, fingerprint, state, reservations, reserved_by,
                                                 first_reserved_at, reserved_at, descriptor, updated_at)
            SELECT v.k, v.f, 'reserved', 1, ?, {now}, {now}, v.d::jsonb, {now}
            FROM unnest(?::varchar[], ?::varchar[], ?::varchar[]) AS v(k, f, d)
            ON CONFLICT ON CONSTRAINT idempotency_record_pkey DO NOTHING
            RETURNING r.effect_key, r.first_reserved_at""";

    private final SqlClock time;
    private final HotSql reserveAllSql;

    Reservations(SqlClock time) {
        this.time = time;
        this.reserveAllSql = HotSql.of(RESERVE_ALL, time);
    }

    /** See {@link IdempotencyStore#reserveAll}. */
    List<Reservation> reserveAll(DSLContext tx, List<IdempotencyStore.Request> requests, String reservedBy) {
        Inputs.requireText("reservedBy", reservedBy, MAX_ACTOR_LENGTH);
        int n = requests.size();
        Map<String, Integer> first = new TreeMap<>();
        List<Integer> repeated = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            IdempotencyStore.Request r = requests.get(i);
            if (r == null) {
                throw new IllegalArgumentException("requests[" + i + "] must not be null");
            }
            try {
                Inputs.requireText("effectKey", r.effectKey(), MAX_KEY_LENGTH);
                if (r.fingerprint() == null) {
                    throw new IllegalArgumentException("fingerprint must not be null");
                }
                Inputs.optionalJsonObject("descriptorJson", r.descriptorJson());
            } catch (IllegalArgumentException e) {
                throw new IllegalArgumentException("requests[" + i + "]: " + e.getMessage(), e);
            }
            if (first.putIfAbsent(r.effectKey(), i) != null) {
                repeated.add(i);
            }
        }
        Reservation[] answers = new Reservation[n];
        if (n == 0) {
            return List.of();
        }
        try {
            int m = first.size();
            String[] keys = new String[m];
            String[] fingerprints = new String[m];
            String[] descriptors = new String[m];
            int j = 0;
            for (Map.Entry<String, Integer> e : first.entrySet()) {
                IdempotencyStore.Request r = requests.get(e.getValue());
                keys[j] = r.effectKey();
                fingerprints[j] = r.fingerprint().hex();
                descriptors[j] = r.descriptorJson();
                j++;
            }
            Map<String, Instant> inserted = new HashMap<>();
            reserveAllSql.query(tx, rs -> inserted.put(rs.getString(1), HotSql.instant(rs, 2)),
                    reservedBy, keys, fingerprints, descriptors);
            List<String> existing = new ArrayList<>(m - inserted.size());
            for (Map.Entry<String, Integer> e : first.entrySet()) {
                Instant at = inserted.get(e.getKey());
                if (at != null) {
                    answers[e.getValue()] = new Reservation.Reserved(e.getKey(), 1, at, 0);
                } else {
                    existing.add(e.getKey());
                }
            }
            if (!existing.isEmpty()) {
                Map<String, IdempotencyRecordRecord> rows = new HashMap<>();
                tx.selectFrom(R).where(R.EFFECT_KEY.in(existing)).orderBy(R.EFFECT_KEY).forUpdate()
                        .fetch().forEach(row -> rows.put(row.getEffectKey(), row));
                for (String key : existing) {
                    int i = first.get(key);
                    IdempotencyStore.Request r = requests.get(i);
                    IdempotencyRecordRecord row = rows.get(key);
                    JSONB descriptor = r.descriptorJson() == null ? null : JSONB.valueOf(r.descriptorJson());
                    Reservation decided = row == null ? null
                            : decide(tx, row, r.fingerprint(), reservedBy, descriptor, null, time.now());
                    // Released between the INSERT and the SELECT: reserve it alone, as reserve would.
                    answers[i] = decided != null ? decided : reserve(tx, key, r.fingerprint(), reservedBy, r.descriptorJson(), null);
                }
            }
        } catch (DataAccessException e) {
            throw translate(first.size() == 1 ? first.keySet().iterator().next()
                    : "a batch of " + first.size() + " keys from " + ((TreeMap<String, Integer>) first).firstKey(), e);
        }
        for (int i : repeated) {
            IdempotencyStore.Request r = requests.get(i);
            answers[i] = reserve(tx, r.effectKey(), r.fingerprint(), reservedBy, r.descriptorJson(), null);
        }
        log.debug("Reserved a batch of {} keys for {}", n, reservedBy);
        return List.of(answers);
    }

    /**
     * See {@link IdempotencyStore#reserve}; {@code repeat} is the unknown outcome a deliberate repeat
     * was decided on ({@link IdempotencyStore#reserveAgain}), or null.
     */
    Reservation reserve(DSLContext tx, String effectKey, Fingerprint fingerprint, String reservedBy,
                                String descriptorJson, Reservation.OutcomeUnknown repeat) {
        Inputs.requireText("effectKey", effectKey, MAX_KEY_LENGTH);
        if (fingerprint == null) {
            throw new IllegalArgumentException("fingerprint must not be null");
        }
        Inputs.requireText("reservedBy", reservedBy, MAX_ACTOR_LENGTH);
        JSONB descriptor = descriptorJson == null
                ? null : JSONB.valueOf(Inputs.optionalJsonObject("descriptorJson", descriptorJson));
        try {
            for (int round = 1; round <= MAX_RESERVE_ROUNDS; round++) {
                Field<Instant> now = time.now();
                Optional<Instant> inserted = tx.insertInto(R)
                        .set(R.EFFECT_KEY, effectKey)
                        .set(R.FINGERPRINT, fingerprint.hex())
                        .set(R.STATE, EffectState.RESERVED.dbValue())
                        .set(R.RESERVATIONS, 1)
                        .set(R.RESERVED_BY, reservedBy)
                        .set(R.FIRST_RESERVED_AT, now)
                        .set(R.RESERVED_AT, now)
                        .set(R.DESCRIPTOR, descriptor)
                        .set(R.UPDATED_AT, now)
                        .onConflictOnConstraint(Keys.IDEMPOTENCY_RECORD_PKEY).doNothing()
                        .returningResult(R.FIRST_RESERVED_AT)
                        .fetchOptional(r -> r.value1());
                if (inserted.isPresent()) {
                    log.debug("Reserved {} for {} (first reservation)", effectKey, reservedBy);
                    return new Reservation.Reserved(effectKey, 1, inserted.get(), 0);
                }
                IdempotencyRecordRecord row = tx.selectFrom(R).where(R.EFFECT_KEY.eq(effectKey)).forUpdate().fetchOne();
                if (row == null) {
                    // Released and committed between our INSERT and our SELECT: the key is free again.
                    log.debug("Effect {} was released while reserving (round {}); trying again", effectKey, round);
                    continue;
                }
                Reservation decided = decide(tx, row, fingerprint, reservedBy, descriptor, repeat, now);
                if (decided != null) {
                    return decided;
                }
                log.debug("Effect {} changed under a re-reservation (round {}); reading it again", effectKey, round);
            }
        } catch (DataAccessException e) {
            throw translate(effectKey, e);
        }
        throw new ReservationConflictException(effectKey, null, "Effect '" + effectKey + "' changed under reserve in "
                + MAX_RESERVE_ROUNDS + " consecutive rounds (released or re-reserved by others); retry later", null);
    }

    /**
     * Called with the row locked: the decision and its update see the latest committed version.
     * Returns null only if a re-reservation's compare-and-set missed, which the lock rules out in a
     * transaction; without one (autocommit) the lock is gone after the SELECT, and the compare-and-set
     * alone keeps two callers from both being granted, so the caller reads the row again.
     */
    private Reservation decide(DSLContext tx, IdempotencyRecordRecord row, Fingerprint fingerprint, String reservedBy,
                               JSONB descriptor, Reservation.OutcomeUnknown repeat, Field<Instant> now) {
        String key = row.getEffectKey();
        if (!row.getFingerprint().equals(fingerprint.hex())) {
            log.warn("Effect {} requested with fingerprint {} but reserved with {}: refused, nothing changed",
                    key, fingerprint, row.getFingerprint());
            return new Reservation.FingerprintMismatch(key, new Fingerprint(row.getFingerprint()), fingerprint);
        }
        EffectState state = EffectState.fromDb(row.getState());
        return switch (state) {
            case SUCCEEDED -> new Reservation.AlreadySucceeded(key, row.getResultRef(), row.getCompletedAt());
            case FAILED -> reserveNext(tx, row, reservedBy, descriptor, now, false);
            case RESERVED, AMBIGUOUS -> {
                Reservation.OutcomeUnknown current = outcomeUnknown(row, state);
                if (repeat != null && repeat.getClass() == current.getClass()
                        && repeat.reservations() == current.reservations()) {
                    Reservation.Reserved repeated = reserveNext(tx, row, reservedBy, descriptor, now, true);
                    if (repeated != null) {
                        log.info("Effect {} repeated by {} after {} reservation(s) with unknown outcome ({})",
                                key, reservedBy, current.reservations(), state);
                    }
                    yield repeated;
                }
                yield current;
            }
        };
    }

    /**
     * Grants the next reservation if the row is still exactly as read (state and count); else null.
     * {@code repeat}: the earlier outcome is unknown, so this one is counted in {@code repeats}.
     */
    private Reservation.Reserved reserveNext(DSLContext tx, IdempotencyRecordRecord row, String reservedBy,
                                             JSONB descriptor, Field<Instant> now, boolean repeat) {
        var updated = tx.update(R)
                .set(R.STATE, EffectState.RESERVED.dbValue())
                .set(R.RESERVATIONS, R.RESERVATIONS.plus(1))
                .set(R.REPEATS, repeat ? R.REPEATS.plus(1) : R.REPEATS)
                .set(R.RESERVED_BY, reservedBy)
                .set(R.RESERVED_AT, now)
                .setNull(R.COMPLETED_AT)
                .setNull(R.RESULT_REF)
                .set(R.DESCRIPTOR, DSL.coalesce(DSL.val(descriptor, R.DESCRIPTOR), R.DESCRIPTOR))
                .set(R.UPDATED_AT, now)
                .where(R.EFFECT_KEY.eq(row.getEffectKey()))
                .and(R.STATE.eq(row.getState()))
                .and(R.RESERVATIONS.eq(row.getReservations()))
                .returningResult(R.RESERVATIONS, R.FIRST_RESERVED_AT, R.REPEATS)
                .fetchOne();
        if (updated == null) {
            return null;
        }
        log.debug("Reserved {} for {} (reservation {}, previously {})", row.getEffectKey(), reservedBy,
                updated.value1(), row.getState());
        return new Reservation.Reserved(row.getEffectKey(), updated.value1(), updated.value2(), updated.value3());
    }

    private RuntimeException translate(String effectKey, DataAccessException e) {
        String state = SqlStates.sqlState(e);
        // 40001: REPEATABLE READ / SERIALIZABLE met a key committed after the snapshot. A 23505 on the
        // primary key cannot come from ON CONFLICT on that very constraint; should one ever surface
        // (a changed statement, a trigger), it means the same thing: another transaction has the key.
        if (SqlStates.SERIALIZATION_FAILURE.equals(state) || SqlStates.isUniqueViolation(e, PKEY)) {
            return new ReservationConflictException(effectKey, state, "Reservation of '" + effectKey
                    + "' conflicted with a concurrent transaction (SQLSTATE " + state
                    + "); roll back and retry, at READ COMMITTED", e);
        }
        if (SqlStates.INVALID_TEXT_REPRESENTATION.equals(state)) {
            return new IllegalArgumentException("descriptorJson is not valid JSON: " + e.getMessage(), e);
        }
        return e;
    }

    private static Reservation.OutcomeUnknown outcomeUnknown(IdempotencyRecordRecord row, EffectState state) {
        if (state == EffectState.AMBIGUOUS) {
            return new Reservation.Ambiguous(row.getEffectKey(), row.getLastError(), row.getUpdatedAt(),
                    row.getReservedAt(), row.getReservedBy(), row.getReservations(), row.getFirstReservedAt(),
                    row.getRepeats());
        }
        return new Reservation.Unrecorded(row.getEffectKey(), row.getReservedAt(), row.getReservedBy(),
                row.getReservations(), row.getFirstReservedAt(), row.getRepeats());
    }
}
