package io.mailroom.idempotency;

import io.mailroom.db.jooq.Keys;
import io.mailroom.db.jooq.tables.records.IdempotencyRecordRecord;
import io.mailroom.db.sql.HotSql;
import io.mailroom.db.sql.SqlClock;
import io.mailroom.db.sql.SqlStates;
import org.jooq.Condition;
import org.jooq.DSLContext;
import org.jooq.Field;
import org.jooq.JSONB;
import org.jooq.exception.DataAccessException;
import org.jooq.impl.DSL;
import org.jooq.impl.SQLDataType;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.time.Clock;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeMap;

import static io.mailroom.db.jooq.Tables.IDEMPOTENCY_RECORD;

/**
 * Records business effects that touch the outside world (an email sent, a charge made) by a stable
 * key, so that each effect is performed at most once per decision, and an unknown outcome is never
 * mistaken for a known one. It knows nothing about what the effect is.
 *
 * <p>The flow, for one work item:
 * <ol>
 *   <li>{@link #reserve} in a short transaction, and <b>commit it before performing the effect</b>:
 *       a reservation that rolls back with a crash leaves no trace of the attempt.</li>
 *   <li>Only on {@link Reservation.Reserved}: perform the effect.</li>
 *   <li>{@link #recordSucceeded} (or {@link #recordFailed}, {@link #markAmbiguous}, {@link #release})
 *       in the same transaction that completes the work item (e.g. marks the outbox message done
 *       under its {@code claim_version} guard), so the record and the work item never disagree.</li>
 * </ol>
 *
 * <p>Every method takes the caller's {@link DSLContext} and runs in the caller's transaction; the
 * store never opens a connection or a transaction of its own.
 *
 * <p>Invariants:
 * <ul>
 *   <li>Of any number of concurrent reservers of one key, at most one gets {@code Reserved} for any
 *       one state of the row (see {@link #reserve} for why this holds at READ COMMITTED).</li>
 *   <li>A key is never reserved for a request with a different {@link Fingerprint}.</li>
 *   <li>Every transition is one conditional statement on the expected state <em>and</em> the expected
 *       reservation; when the row is not in that state at that reservation nothing changes and
 *       {@link TransitionRejectedException} says what was found.</li>
 *   <li>{@code SUCCEEDED} is final.</li>
 * </ul>
 *
 * <p><b>Fencing.</b> A reservation is named by its number ({@code reservations}, see
 * {@link Reservation.Reserved#reservationNumber()}): every grant after the first increments it in a
 * compare-and-set, and number 1 is granted only by the INSERT, so within one life of the row a number
 * is granted once. Every transition takes the number the caller holds (or, for a transition on
 * someone else's unknown outcome, the number it read) and repeats it in its WHERE, so a stale holder
 * (whose lease expired while another worker re-reserved the key) changes nothing, even outside the
 * work item's own guard: e.g. a holder that learns its claim is lost and gives its reservation back
 * cannot turn the new holder's live reservation into {@code FAILED}, which would let a later attempt
 * resend without knowing that an outcome was unknown. A row ends its life, and its numbers start again
 * at 1, only when the holder of number 1 releases it, or when retention deletes it long after it was
 * settled.
 */
public final class IdempotencyStore {

    private static final Logger log = LoggerFactory.getLogger(IdempotencyStore.class);

    public static final int MAX_KEY_LENGTH = 200;
    /** Limit of {@code reservedBy} and {@code actor}. */
    public static final int MAX_ACTOR_LENGTH = 200;
    public static final int MAX_RESULT_REF_LENGTH = 1000;
    /** The {@code last_error} column's CHECK limit; longer errors and reasons are truncated. */
    public static final int MAX_ERROR_LENGTH = 2000;

    static final String PKEY = "idempotency_record_pkey";
    static final String RELEASED_NOTE = "released: the latest attempt performed nothing";

    /**
     * A reserve round ends undecided only if the key is deleted between its INSERT and its SELECT (or,
     * in autocommit, changed between SELECT and UPDATE); bounded anyway.
     */
    private static final int MAX_RESERVE_ROUNDS = 5;

    private static final io.mailroom.db.jooq.tables.IdempotencyRecord R = IDEMPOTENCY_RECORD;

    /** What {@link #release} did. */
    public enum Release {
        /** A first reservation: the row is gone, the next reserve starts the key afresh. */
        FORGOTTEN,
        /**
         * A later reservation ({@code reservations > 1}): the row is kept as {@code FAILED}, so its
         * history (when it was first reserved, how often) survives; the next reserve gets
         * {@code Reserved} with the following number.
         */
        KEPT_AS_FAILED
    }

    /**
     * The batch statements of the dispatcher's hot path, as finished texts ({@link HotSql}): rendering
     * them through jOOQ for every batch was a quarter of the dispatcher's CPU in a profile. Their rows
     * go in as one array per column, so the text is the same for every batch size.
     */
    static final String RESERVE_ALL = """
            INSERT INTO idempotency_record AS r (effect_key, fingerprint, state, reservations, reserved_by,
                                                 first_reserved_at, reserved_at, descriptor, updated_at)
            SELECT v.k, v.f, 'reserved', 1, ?, {now}, {now}, v.d::jsonb, {now}
            FROM unnest(?::varchar[], ?::varchar[], ?::varchar[]) AS v(k, f, d)
            ON CONFLICT ON CONSTRAINT idempotency_record_pkey DO NOTHING
            RETURNING r.effect_key, r.first_reserved_at""";

    static final String RECORD_ALL = """
            UPDATE idempotency_record AS r SET
              state = v.s,
              result_ref = CASE WHEN v.s = 'succeeded' THEN v.ref ELSE r.result_ref END,
              last_error = CASE WHEN v.s = 'succeeded' THEN r.last_error ELSE v.err END,
              completed_at = CASE WHEN v.s = 'ambiguous' THEN r.completed_at ELSE {now} END,
              updated_at = {now}
            FROM unnest(?::varchar[], ?::int[], ?::varchar[], ?::varchar[], ?::varchar[]) AS v(k, n, s, ref, err)
            WHERE r.effect_key = v.k AND r.state = 'reserved' AND r.reservations = v.n
            RETURNING r.effect_key""";

    private final SqlClock time;
    private final HotSql reserveAllSql;
    private final HotSql recordAllSql;

    /** Database time. */
    public IdempotencyStore() {
        this(null);
    }

    /** @param clock the time to record, or null for the database's {@code now()} */
    public IdempotencyStore(Clock clock) {
        this.time = SqlClock.of(clock);
        this.reserveAllSql = HotSql.of(RESERVE_ALL, time);
        this.recordAllSql = HotSql.of(RECORD_ALL, time);
    }

    /**
     * Asks to perform the effect named {@code effectKey} for the request {@code fingerprint}.
     *
     * <ul>
     *   <li>new key → {@code Reserved} (number 1);</li>
     *   <li>{@code FAILED} before (known not performed) → {@code Reserved} with the next number;</li>
     *   <li>{@code SUCCEEDED} → {@code AlreadySucceeded};</li>
     *   <li>{@code RESERVED} → {@code Unrecorded}; {@code AMBIGUOUS} → {@code Ambiguous} (repeat only
     *       deliberately, with {@link #reserveAgain});</li>
     *   <li>any state, other fingerprint → {@code FingerprintMismatch}, row unchanged.</li>
     * </ul>
     *
     * <p><b>Concurrency, at READ COMMITTED.</b> Three things make it race-free:
     * <ol>
     *   <li>The INSERT uses {@code ON CONFLICT ON CONSTRAINT idempotency_record_pkey DO NOTHING}: the
     *       primary key's unique index arbitrates, so of concurrent inserters of one key exactly one
     *       inserts. The unique check waits for any transaction that is inserting or changing the
     *       key's row, then decides on its committed result (nothing to do if it committed a row; one
     *       waiter inserts if it rolled back).</li>
     *   <li>Whoever did not insert reads the row with {@code SELECT ... FOR UPDATE}: a new statement,
     *       hence a new snapshot that sees the committed row; it waits for any transaction holding the
     *       row's lock and then returns the latest committed version. The decision is taken on that
     *       version and holds until this transaction ends, since nobody else can lock or change the
     *       row meanwhile.</li>
     *   <li>A re-reservation (after {@code FAILED}, or by {@code reserveAgain}) is an UPDATE whose WHERE
     *       repeats the state and count that were read: a compare-and-set that would grant nothing if
     *       the row had moved on, even without the lock (e.g. a DSLContext in autocommit).</li>
     * </ol>
     * So two reservers never both get {@code Reserved} for the same state of a key. A concurrent
     * reserver <em>waits</em> for the holder's transaction, then sees its outcome: {@code Unrecorded}
     * when the holder committed its reservation (the normal flow), {@code AlreadySucceeded} if the
     * holder recorded success in the same transaction, {@code Reserved} if the holder rolled back.
     * Keep the transaction short, because every reserver of the same key waits for it; a
     * transaction that reserves several keys should take them in a fixed (e.g. sorted) order, so two
     * such transactions cannot deadlock.
     *
     * <p>Under REPEATABLE READ or SERIALIZABLE, a key committed after the snapshot cannot be read:
     * the database raises 40001 and this method throws {@link ReservationConflictException}.
     *
     * @param reservedBy     who reserves (a worker id), recorded for operators
     * @param descriptorJson optional JSON object describing the effect for support views; on a
     *                       repeat it replaces the stored one only when not null
     * @throws IllegalArgumentException     on bad arguments, or when {@code descriptorJson} does not parse
     *                                      (then the caller's transaction is aborted)
     * @throws ReservationConflictException see above; roll back and retry
     */
    public Reservation reserve(DSLContext tx, String effectKey, Fingerprint fingerprint, String reservedBy,
                               String descriptorJson) {
        return reserve(tx, effectKey, fingerprint, reservedBy, descriptorJson, null);
    }

    /** One key of a batch to reserve with {@link #reserveAll}: the same arguments {@link #reserve} takes. */
    public record Request(String effectKey, Fingerprint fingerprint, String descriptorJson) {
    }

    /**
     * {@link #reserve} for many keys in the caller's transaction, with the same answer for each key
     * that {@code reserve} would give, in the order of {@code requests}: a dispatcher reserves a
     * claimed batch's keys in one commit, before any of their effects is performed.
     *
     * <p>New keys are inserted by one statement (arrays unnested, {@code ON CONFLICT DO NOTHING} on
     * the primary key, in key order); the keys that already had a row are then read by one
     * {@code SELECT ... FOR UPDATE} in key order and decided one by one as {@code reserve} decides
     * (only a re-reservation, after a known failure, writes that row). A key that appears twice is
     * answered for its first request first, then for the later one as a second {@code reserve} in the
     * same transaction would be (an unknown outcome: the first holds it).
     *
     * <p>Two batches that share keys lock them in key order within each statement; should they still
     * meet in the opposite order across the two statements, PostgreSQL ends one with a deadlock
     * (40P01): roll back and reserve again, or one by one.
     *
     * @throws IllegalArgumentException     on a bad request (naming its index and argument); nothing is reserved
     * @throws ReservationConflictException as {@link #reserve}
     */
    public List<Reservation> reserveAll(DSLContext tx, List<Request> requests, String reservedBy) {
        Inputs.requireText("reservedBy", reservedBy, MAX_ACTOR_LENGTH);
        int n = requests.size();
        Map<String, Integer> first = new TreeMap<>();
        List<Integer> repeated = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            Request r = requests.get(i);
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
                Request r = requests.get(e.getValue());
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
                    Request r = requests.get(i);
                    IdempotencyRecordRecord row = rows.get(key);
                    JSONB descriptor = r.descriptorJson() == null ? null : JSONB.valueOf(r.descriptorJson());
                    Reservation decided = row == null ? null
                            : decide(tx, row, r.fingerprint(), reservedBy, descriptor, null, time.now());
                    // Released between the INSERT and the SELECT: reserve it alone, as reserve would.
                    answers[i] = decided != null ? decided : reserve(tx, key, r.fingerprint(), reservedBy, r.descriptorJson());
                }
            }
        } catch (DataAccessException e) {
            throw translate(first.size() == 1 ? first.keySet().iterator().next()
                    : "a batch of " + first.size() + " keys from " + ((TreeMap<String, Integer>) first).firstKey(), e);
        }
        for (int i : repeated) {
            Request r = requests.get(i);
            answers[i] = reserve(tx, r.effectKey(), r.fingerprint(), reservedBy, r.descriptorJson());
        }
        log.debug("Reserved a batch of {} keys for {}", n, reservedBy);
        return List.of(answers);
    }

    /**
     * Repeats an effect whose outcome is unknown, as the caller's explicit choice (e.g. an HTTP
     * provider that deduplicates by the same idempotency key, within its key window counted from
     * {@link Reservation.OutcomeUnknown#firstReservedAt()}). {@code seen} is the answer the decision
     * was made on: the repeat happens only if the row is still in that state with that number of
     * reservations (compare-and-set), so of several callers deciding on the same answer one gets
     * {@code Reserved}, the others the new {@code Unrecorded}. If the row moved on meanwhile, the
     * answer is what {@link #reserve} would give now. The fingerprint is checked as in {@code reserve}.
     * A granted repeat is counted in the record's {@code repeats} (see
     * {@link Reservation.OutcomeUnknown#repeats()}), so a caller can bound how often it repeats.
     */
    public Reservation reserveAgain(DSLContext tx, Reservation.OutcomeUnknown seen, Fingerprint fingerprint,
                                    String reservedBy, String descriptorJson) {
        if (seen == null) {
            throw new IllegalArgumentException("seen must not be null");
        }
        return reserve(tx, seen.effectKey(), fingerprint, reservedBy, descriptorJson, seen);
    }

    private Reservation reserve(DSLContext tx, String effectKey, Fingerprint fingerprint, String reservedBy,
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

    /**
     * Records that the effect happened: {@code RESERVED} → {@code SUCCEEDED}. Run it in the
     * transaction that completes the work item, so both commit or neither does.
     *
     * @param reservation the {@link Reservation.Reserved#reservationNumber() number} this attempt holds
     * @param resultRef   how the outside world knows the effect, e.g. the provider's message id
     * @throws TransitionRejectedException when the record is not {@code RESERVED} at {@code reservation}
     *                                     (or is missing)
     */
    public EffectRecord recordSucceeded(DSLContext tx, String effectKey, int reservation, String resultRef) {
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

    /**
     * Records that the attempt did <em>not</em> perform the effect (the provider refused it, or the
     * request never left): {@code RESERVED} → {@code FAILED}. Whether to try again is the work
     * item's decision; if it does, {@link #reserve} grants the next reservation. When it is unknown
     * whether the effect happened, use {@link #markAmbiguous} instead.
     *
     * @param reservation the number this attempt holds
     * @param error       kept in {@code last_error}; longer than {@value #MAX_ERROR_LENGTH} characters is truncated
     * @throws TransitionRejectedException when the record is not {@code RESERVED} at {@code reservation}
     *                                     (or is missing)
     */
    public EffectRecord recordFailed(DSLContext tx, String effectKey, int reservation, String error) {
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

    /**
     * One outcome of a held reservation for {@link #recordAll}: what {@link #recordSucceeded},
     * {@link #recordFailed} or {@link #markAmbiguous} would record.
     *
     * @param text the result reference (succeeded), the error (failed) or the reason (ambiguous)
     */
    public record Transition(String effectKey, int reservation, EffectState to, String text) {

        public static Transition succeeded(String effectKey, int reservation, String resultRef) {
            return new Transition(effectKey, reservation, EffectState.SUCCEEDED, resultRef);
        }

        public static Transition failed(String effectKey, int reservation, String error) {
            return new Transition(effectKey, reservation, EffectState.FAILED, error);
        }

        public static Transition ambiguous(String effectKey, int reservation, String reason) {
            return new Transition(effectKey, reservation, EffectState.AMBIGUOUS, reason);
        }
    }

    /**
     * Records many outcomes of held reservations in one statement, each exactly as its own method
     * would ({@code RESERVED} at the given number → the new state), in the caller's transaction: the
     * dispatcher writes a batch's idempotency outcomes with the batch's fenced completion. Either
     * every transition applies, or this throws {@link TransitionRejectedException} for the first
     * (in key order) that found its record in another state or at another reservation, and the
     * caller rolls back: the transitions that did apply are not meant to stand alone.
     *
     * @throws IllegalArgumentException    on a bad transition (naming its index and argument)
     * @throws TransitionRejectedException see above
     */
    public void recordAll(DSLContext tx, List<Transition> transitions) {
        int n = transitions.size();
        if (n == 0) {
            return;
        }
        List<Transition> sorted = new ArrayList<>(n);
        for (int i = 0; i < n; i++) {
            Transition t = transitions.get(i);
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
                sorted.add(new Transition(t.effectKey(), t.reservation(), t.to(), text));
            } catch (IllegalArgumentException e) {
                throw new IllegalArgumentException("transitions[" + i + "]: " + e.getMessage(), e);
            }
        }
        sorted.sort(java.util.Comparator.comparing(Transition::effectKey));
        String[] keys = new String[n];
        Integer[] numbers = new Integer[n];
        String[] states = new String[n];
        String[] refs = new String[n];
        String[] errors = new String[n];
        for (int i = 0; i < n; i++) {
            Transition t = sorted.get(i);
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
        for (Transition t : sorted) {
            // a key twice in one statement changes its row once: the second finds it moved on
            if (!applied.contains(t.effectKey()) || !taken.add(t.effectKey())) {
                EffectRecord current = find(tx, t.effectKey()).orElse(null);
                throw new TransitionRejectedException(t.effectKey(), "recordAll(" + t.to() + ")",
                        Set.of(EffectState.RESERVED), t.reservation(), current);
            }
        }
        throw new IllegalStateException("recordAll: " + applied.size() + " of " + n + " applied, none rejected");
    }

    /**
     * Says explicitly that the outcome is unknown (e.g. a timeout after the request was written, or
     * a transport that cannot repeat safely parking the work for review): {@code RESERVED} →
     * {@code AMBIGUOUS}. Later reserves answer {@link Reservation.Ambiguous} until a person confirms
     * ({@link #confirmSucceeded}) or a caller deliberately repeats ({@link #reserveAgain}).
     *
     * @param reservation the number this attempt holds, or the number of the unrecorded reservation
     *                    that was read ({@link Reservation.OutcomeUnknown#reservations()}) when marking
     *                    someone else's attempt whose holder is gone
     * @param reason      kept in {@code last_error}; truncated like an error
     * @throws TransitionRejectedException when the record is not {@code RESERVED} at {@code reservation}
     *                                     (or is missing)
     */
    public EffectRecord markAmbiguous(DSLContext tx, String effectKey, int reservation, String reason) {
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

    /**
     * A person confirms that an ambiguous effect did happen (e.g. the recipient got the email):
     * {@code AMBIGUOUS} → {@code SUCCEEDED}. The actor is kept in the descriptor as
     * {@code confirmedBy}; the ambiguity reason stays in {@code last_error}. Writing the audit log
     * entry for the action is the caller's job, in the same transaction.
     *
     * @param reservation the number of the ambiguous reservation the person looked at
     * @param resultRef   the reference if the person knows one, else null
     * @param actor       who confirms
     * @throws TransitionRejectedException when the record is not {@code AMBIGUOUS} at {@code reservation}
     *                                     (or is missing)
     */
    public EffectRecord confirmSucceeded(DSLContext tx, String effectKey, int reservation, String resultRef,
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

    /**
     * Gives a reservation back when the caller knows the effect was <em>not</em> performed (e.g. a
     * circuit breaker was open, the request was never sent). A first reservation is deleted, so a
     * later attempt reserves the key as new; a later one is kept as {@code FAILED} (see
     * {@link Release#KEPT_AS_FAILED}), because deleting it would also forget earlier attempts whose
     * outcome was unknown, and the date the key was first used.
     *
     * <p>Only the holder's own reservation is given back: a worker that learns its claim was lost
     * and releases after another worker re-reserved the key changes nothing (and is told so by the
     * exception), instead of marking the new holder's live attempt as known-not-performed.
     *
     * @param reservation the number this attempt holds
     * @throws TransitionRejectedException when the record is not {@code RESERVED} at {@code reservation}
     *                                     (or is missing)
     */
    public Release release(DSLContext tx, String effectKey, int reservation) {
        Inputs.requireText("effectKey", effectKey, MAX_KEY_LENGTH);
        Inputs.requireReservation(reservation);
        Condition reserved = R.EFFECT_KEY.eq(effectKey).and(R.STATE.eq(EffectState.RESERVED.dbValue()));
        if (reservation == 1 && tx.deleteFrom(R).where(reserved).and(R.RESERVATIONS.eq(1)).execute() == 1) {
            log.debug("Released {}: forgotten", effectKey);
            return Release.FORGOTTEN;
        }
        Field<Instant> now = time.now();
        Map<Field<?>, Object> set = new LinkedHashMap<>();
        set.put(R.STATE, EffectState.FAILED.dbValue());
        set.put(R.LAST_ERROR, RELEASED_NOTE);
        set.put(R.COMPLETED_AT, now);
        set.put(R.UPDATED_AT, now);
        transition(tx, "release", effectKey, reservation, Set.of(EffectState.RESERVED), set);
        log.debug("Released {}: kept as failed", effectKey);
        return Release.KEPT_AS_FAILED;
    }

    /** The record of {@code effectKey}, as committed (or as seen by {@code dsl}'s transaction). */
    public Optional<EffectRecord> find(DSLContext dsl, String effectKey) {
        Inputs.requireText("effectKey", effectKey, MAX_KEY_LENGTH);
        return dsl.selectFrom(R).where(R.EFFECT_KEY.eq(effectKey)).fetchOptional().map(IdempotencyStore::toRecord);
    }

    /**
     * Records whose outcome is unknown ({@code RESERVED} or {@code AMBIGUOUS}) and whose latest
     * reservation is older than {@code reservedBefore}, oldest first: for a review list or a sweeper.
     */
    public List<EffectRecord> findUnfinished(DSLContext dsl, Instant reservedBefore, int limit) {
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
                .fetch(IdempotencyStore::toRecord);
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
            return toRecord(row);
        }
        EffectRecord current = find(tx, effectKey).orElse(null);
        log.debug("{} of {} at reservation {} rejected: found {}", name, effectKey, reservation,
                current == null ? "no record" : current.state() + " at reservation " + current.reservations());
        throw new TransitionRejectedException(effectKey, name, from, reservation, current);
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

    static EffectRecord toRecord(IdempotencyRecordRecord row) {
        return new EffectRecord(row.getEffectKey(), new Fingerprint(row.getFingerprint()),
                EffectState.fromDb(row.getState()), row.getReservations(), row.getRepeats(), row.getReservedBy(),
                row.getFirstReservedAt(), row.getReservedAt(), row.getCompletedAt(), row.getResultRef(),
                row.getLastError(), row.getDescriptor() == null ? null : row.getDescriptor().data(),
                row.getUpdatedAt());
    }
}
