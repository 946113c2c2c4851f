package io.mailroom.idempotency;

import io.mailroom.db.sql.SqlClock;
import org.jooq.DSLContext;

import java.time.Clock;
import java.time.Instant;
import java.util.List;
import java.util.Optional;

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
 * <p>One role per class behind this facade: reservations ({@code Reservations}), outcome recording
 * ({@code OutcomeRecorder}) and reads ({@code EffectReads}).
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

    public static final int MAX_KEY_LENGTH = 200;
    /** Limit of {@code reservedBy} and {@code actor}. */
    public static final int MAX_ACTOR_LENGTH = 200;
    public static final int MAX_RESULT_REF_LENGTH = 1000;
    /** The {@code last_error} column's CHECK limit; longer errors and reasons are truncated. */
    public static final int MAX_ERROR_LENGTH = 2000;

    static final String PKEY = "idempotency_record_pkey";
    static final String RELEASED_NOTE = "released: the latest attempt performed nothing";

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

    private final Reservations reservations;
    private final OutcomeRecorder outcomes;

    /** Database time. */
    public IdempotencyStore() {
        this(null);
    }

    /** @param clock the time to record, or null for the database's {@code now()} */
    public IdempotencyStore(Clock clock) {
        SqlClock time = SqlClock.of(clock);
        this.reservations = new Reservations(time);
        this.outcomes = new OutcomeRecorder(time);
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
        return reservations.reserve(tx, effectKey, fingerprint, reservedBy, descriptorJson, null);
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
        return reservations.reserveAll(tx, requests, reservedBy);
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
        return reservations.reserve(tx, seen.effectKey(), fingerprint, reservedBy, descriptorJson, seen);
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
        return outcomes.recordSucceeded(tx, effectKey, reservation, resultRef);
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
        return outcomes.recordFailed(tx, effectKey, reservation, error);
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
        outcomes.recordAll(tx, transitions);
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
        return outcomes.markAmbiguous(tx, effectKey, reservation, reason);
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
        return outcomes.confirmSucceeded(tx, effectKey, reservation, resultRef, actor);
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
        return outcomes.release(tx, effectKey, reservation);
    }

    /** The record of {@code effectKey}, as committed (or as seen by {@code dsl}'s transaction). */
    public Optional<EffectRecord> find(DSLContext dsl, String effectKey) {
        return EffectReads.find(dsl, effectKey);
    }

    /**
     * Records whose outcome is unknown ({@code RESERVED} or {@code AMBIGUOUS}) and whose latest
     * reservation is older than {@code reservedBefore}, oldest first: for a review list or a sweeper.
     */
    public List<EffectRecord> findUnfinished(DSLContext dsl, Instant reservedBefore, int limit) {
        return EffectReads.findUnfinished(dsl, reservedBefore, limit);
    }
}
