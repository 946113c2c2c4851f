package io.mailroom.idempotency;

import io.mailroom.db.jooq.tables.records.IdempotencyRecordRecord;
import io.mailroom.db.sql.HotSql;
import io.mailroom.db.sql.SqlClock;
import org.jooq.Condition;
import org.jooq.DSLContext;
import org.jooq.Field;
import org.jooq.impl.DSL;
import org.jooq.impl.SQLDataType;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

import static io.mailroom.db.jooq.Tables.IDEMPOTENCY_RECORD;
import static io.mailroom.idempotency.IdempotencyStore.MAX_ACTOR_LENGTH;
import static io.mailroom.idempotency.IdempotencyStore.MAX_ERROR_LENGTH;
import static io.mailroom.idempotency.IdempotencyStore.MAX_KEY_LENGTH;
import static io.mailroom.idempotency.IdempotencyStore.MAX_RESULT_REF_LENGTH;
import static io.mailroom.idempotency.IdempotencyStore.RELEASED_NOTE;

/**
 * The outcome-recording role of {@link IdempotencyStore}: the transitions of a held (or read)
 * reservation to succeeded, failed or ambiguous, a person's confirmation, and the release of a
 * reservation that performed nothing. Invariant: every transition is one conditional statement on
 * the expected state and the expected reservation number, so a stale holder changes nothing and is
 * told what it found ({@link TransitionRejectedException}); {@code SUCCEEDED} is final.
 */
final class OutcomeRecorder {

    private static final Logger log = LoggerFactory.getLogger(OutcomeRecorder.class);

    private static final io.mailroom.db.jooq.tables.IdempotencyRecord R = IDEMPOTENCY_RECORD;

    /**
     * The batch transition of the dispatcher's hot path, as a finished text ({@link HotSql}); its rows
     * go in as one array per column, so the text is the same for every batch size.
     */
    static final String RECORD_ALL = """
            UPDATE {schema}.idempotency_record AS r SET
              state = v.s,
              result_ref = CASE WHEN v.s = 'succeeded' THEN v.ref ELSE r.result_ref END,
              last_error = CASE WHEN v.s = 'succeeded' THEN r.last_error ELSE v.err END,
              completed_at = CASE WHEN v.s = 'ambiguous' THEN r.completed_at ELSE {now} END,
              updated_at = {now}
            FROM unnest(?::varchar[], ?::int[], ?::varchar[], ?::varchar[], ?::varchar[]) AS v(k, n, s, ref, err)
            WHERE r.effect_key = v.k AND r.state = 'reserved' AND r.reservations = v.n
            RETURNING r.effect_key""";

    private final SqlClock time;
    private final HotSql recordAllSql;

    OutcomeRecorder(SqlClock time) {
        this.time = time;
        this.recordAllSql = HotSql.of(RECORD_ALL, time);
    }

    /** See {@link IdempotencyStore#recordSucceeded}. */
    EffectRecord recordSucceeded(DSLContext tx, String effectKey, int reservation, String resultRef) {
        Inputs.requireText("effectKey", effectKey, MAX_KEY_LENGTH);
        Inputs.requireReservation(reservation);
        Inputs.requireText("resultRef", resultRef, MAX_RESULT_REF_LENGTH);
        Field<Instant> now = time.now();
        Map<Field<?>, Object> set = new LinkedHashMap<>();
        set.put(R.STATE, EffectState.SUCCEEDED.dbValue());
        set.put(R.RESULT_REF, resultRef);
        set.put(R.COMPLETED_AT, now);
        set.put(R.UPDATED_AT, now);
        EffectRecord done = transition(tx, "recordSucceeded", effectKey, reservation, Set.of(EffectState.RESERVED), set);
        log.debug("Recorded {} as succeeded ({})", effectKey, resultRef);
        return done;
    }

    /** See {@link IdempotencyStore#recordFailed}. */
    EffectRecord recordFailed(DSLContext tx, String effectKey, int reservation, String error) {
        Inputs.requireText("effectKey", effectKey, MAX_KEY_LENGTH);
        Inputs.requireReservation(reservation);
        String bounded = Inputs.boundedText("error", error, MAX_ERROR_LENGTH);
        Field<Instant> now = time.now();
        Map<Field<?>, Object> set = new LinkedHashMap<>();
        set.put(R.STATE, EffectState.FAILED.dbValue());
        set.put(R.LAST_ERROR, bounded);
        set.put(R.COMPLETED_AT, now);
        set.put(R.UPDATED_AT, now);
        EffectRecord failed = transition(tx, "recordFailed", effectKey, reservation, Set.of(EffectState.RESERVED), set);
        log.debug("Recorded {} as failed", effectKey);
        return failed;
    }

    /** See {@link IdempotencyStore#recordAll}. */
    void recordAll(DSLContext tx, List<IdempotencyStore.Transition> transitions) {
        int n = transitions.size();
        if (n == 0) {
            return;
        }
        List<IdempotencyStore.Transition> sorted = new ArrayList<>(n);
        for (int i = 0; i < n; i++) {
            IdempotencyStore.Transition t = transitions.get(i);
            if (t == null) {
                throw new IllegalArgumentException("transitions[" + i + "] must not be null");
            }
            try {
                Inputs.requireText("effectKey", t.effectKey(), MAX_KEY_LENGTH);
                Inputs.requireReservation(t.reservation());
                if (t.to() == null || t.to() == EffectState.RESERVED) {
                    throw new IllegalArgumentException("to must be SUCCEEDED, FAILED or AMBIGUOUS, got " + t.to());
                }
                String text = t.to() == EffectState.SUCCEEDED
                        ? Inputs.requireText("resultRef", t.text(), MAX_RESULT_REF_LENGTH)
                        : Inputs.boundedText(t.to() == EffectState.FAILED ? "error" : "reason", t.text(), MAX_ERROR_LENGTH);
                sorted.add(new IdempotencyStore.Transition(t.effectKey(), t.reservation(), t.to(), text));
            } catch (IllegalArgumentException e) {
                throw new IllegalArgumentException("transitions[" + i + "]: " + e.getMessage(), e);
            }
        }
        sorted.sort(java.util.Comparator.comparing(IdempotencyStore.Transition::effectKey));
        String[] keys = new String[n];
        Integer[] numbers = new Integer[n];
        String[] states = new String[n];
        String[] refs = new String[n];
        String[] errors = new String[n];
        for (int i = 0; i < n; i++) {
            IdempotencyStore.Transition t = sorted.get(i);
            keys[i] = t.effectKey();
            numbers[i] = t.reservation();
            states[i] = t.to().dbValue();
            refs[i] = t.to() == EffectState.SUCCEEDED ? t.text() : null;
            errors[i] = t.to() == EffectState.SUCCEEDED ? null : t.text();
        }
        Set<String> applied = new java.util.HashSet<>(recordAllSql.query(tx, rs -> rs.getString(1),
                keys, numbers, states, refs, errors));
        if (applied.size() == n) {
            log.debug("Recorded {} outcomes", n);
            return;
        }
        Set<String> taken = new java.util.HashSet<>();
        for (IdempotencyStore.Transition t : sorted) {
            // a key twice in one statement changes its row once: the second finds it moved on
            if (!applied.contains(t.effectKey()) || !taken.add(t.effectKey())) {
                EffectRecord current = EffectReads.find(tx, t.effectKey()).orElse(null);
                throw new TransitionRejectedException(t.effectKey(), "recordAll(" + t.to() + ")",
                        Set.of(EffectState.RESERVED), t.reservation(), current);
            }
        }
        throw new IllegalStateException("recordAll: " + applied.size() + " of " + n + " applied, none rejected");
    }

    /** See {@link IdempotencyStore#markAmbiguous}. */
    EffectRecord markAmbiguous(DSLContext tx, String effectKey, int reservation, String reason) {
        Inputs.requireText("effectKey", effectKey, MAX_KEY_LENGTH);
        Inputs.requireReservation(reservation);
        String bounded = Inputs.boundedText("reason", reason, MAX_ERROR_LENGTH);
        Field<Instant> now = time.now();
        Map<Field<?>, Object> set = new LinkedHashMap<>();
        set.put(R.STATE, EffectState.AMBIGUOUS.dbValue());
        set.put(R.LAST_ERROR, bounded);
        set.put(R.UPDATED_AT, now);
        EffectRecord marked = transition(tx, "markAmbiguous", effectKey, reservation, Set.of(EffectState.RESERVED), set);
        log.info("Effect {} marked ambiguous: outcome unknown", effectKey);
        return marked;
    }

    /** See {@link IdempotencyStore#confirmSucceeded}. */
    EffectRecord confirmSucceeded(DSLContext tx, String effectKey, int reservation, String resultRef,
                                         String actor) {
        Inputs.requireText("effectKey", effectKey, MAX_KEY_LENGTH);
        Inputs.requireReservation(reservation);
        if (resultRef != null) {
            Inputs.requireText("resultRef", resultRef, MAX_RESULT_REF_LENGTH);
        }
        Inputs.requireText("actor", actor, MAX_ACTOR_LENGTH);
        Field<Instant> now = time.now();
        Map<Field<?>, Object> set = new LinkedHashMap<>();
        set.put(R.STATE, EffectState.SUCCEEDED.dbValue());
        set.put(R.RESULT_REF, resultRef);
        set.put(R.COMPLETED_AT, now);
        set.put(R.DESCRIPTOR, DSL.field("coalesce({0}, '{}'::jsonb) || jsonb_build_object('confirmedBy', {1}::text)",
                SQLDataType.JSONB, R.DESCRIPTOR, DSL.val(actor)));
        set.put(R.UPDATED_AT, now);
        EffectRecord confirmed = transition(tx, "confirmSucceeded", effectKey, reservation, Set.of(EffectState.AMBIGUOUS), set);
        log.info("Effect {} confirmed as succeeded by {}", effectKey, actor);
        return confirmed;
    }

    /** See {@link IdempotencyStore#release}. */
    IdempotencyStore.Release release(DSLContext tx, String effectKey, int reservation) {
        Inputs.requireText("effectKey", effectKey, MAX_KEY_LENGTH);
        Inputs.requireReservation(reservation);
        Condition reserved = R.EFFECT_KEY.eq(effectKey).and(R.STATE.eq(EffectState.RESERVED.dbValue()));
        if (reservation == 1 && tx.deleteFrom(R).where(reserved).and(R.RESERVATIONS.eq(1)).execute() == 1) {
            log.debug("Released {}: forgotten", effectKey);
            return IdempotencyStore.Release.FORGOTTEN;
        }
        Field<Instant> now = time.now();
        Map<Field<?>, Object> set = new LinkedHashMap<>();
        set.put(R.STATE, EffectState.FAILED.dbValue());
        set.put(R.LAST_ERROR, RELEASED_NOTE);
        set.put(R.COMPLETED_AT, now);
        set.put(R.UPDATED_AT, now);
        transition(tx, "release", effectKey, reservation, Set.of(EffectState.RESERVED), set);
        log.debug("Released {}: kept as failed", effectKey);
        return IdempotencyStore.Release.KEPT_AS_FAILED;
    }

    /**
     * One fenced transition: a single UPDATE whose WHERE names the expected states and reservation.
     * At READ COMMITTED an UPDATE that waited for a concurrent writer re-checks its WHERE on the
     * version that writer committed, so a transition whose precondition was taken away (another
     * state, or a newer reservation) updates nothing.
     */
    private EffectRecord transition(DSLContext tx, String name, String effectKey, int reservation,
                                    Set<EffectState> from, Map<Field<?>, Object> set) {
        IdempotencyRecordRecord row = tx.update(R)
                .set(set)
                .where(R.EFFECT_KEY.eq(effectKey))
                .and(R.STATE.in(from.stream().map(EffectState::dbValue).toList()))
                .and(R.RESERVATIONS.eq(reservation))
                .returning()
                .fetchOne();
        if (row != null) {
            return EffectReads.toRecord(row);
        }
        EffectRecord current = EffectReads.find(tx, effectKey).orElse(null);
        log.debug("{} of {} at reservation {} rejected: found {}", name, effectKey, reservation,
                current == null ? "no record" : current.state() + " at reservation " + current.reservations());
        throw new TransitionRejectedException(effectKey, name, from, reservation, current);
    }
}
