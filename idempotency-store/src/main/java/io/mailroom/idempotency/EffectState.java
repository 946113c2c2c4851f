package io.mailroom.idempotency;

/**
 * The state of one business effect, as stored in {@code idempotency_record.state}, and the only
 * transitions {@link IdempotencyStore} makes between them:
 * <ul>
 *   <li>(no row) → {@code RESERVED}: {@code reserve} of a new key;</li>
 *   <li>{@code RESERVED} → {@code SUCCEEDED}: {@code recordSucceeded};</li>
 *   <li>{@code RESERVED} → {@code FAILED}: {@code recordFailed};</li>
 *   <li>{@code RESERVED} → {@code AMBIGUOUS}: {@code markAmbiguous};</li>
 *   <li>{@code RESERVED} → (no row): {@code release} of a first reservation, or
 *       {@code RESERVED} → {@code FAILED}: {@code release} of a later one (its history is kept);</li>
 *   <li>{@code FAILED} → {@code RESERVED}: {@code reserve} (nothing was performed, so trying again is safe);</li>
 *   <li>{@code RESERVED} or {@code AMBIGUOUS} → {@code RESERVED}: {@code reserveAgain}, the caller's explicit
 *       choice to repeat an effect whose outcome is unknown;</li>
 *   <li>{@code AMBIGUOUS} → {@code SUCCEEDED}: {@code confirmSucceeded} by a person.</li>
 * </ul>
 * Every transition after {@code reserve} is fenced by the reservation number the caller holds.
 * {@code SUCCEEDED} is final.
 */
public enum EffectState {

    /** An attempt holds the key; whether the effect happened is not recorded (in flight, or crashed). */
    RESERVED("reserved"),
    /** The effect happened; {@code result_ref} says how the outside world knows it. Final. */
    SUCCEEDED("succeeded"),
    /** The last attempt is known <em>not</em> to have performed the effect; a later reserve may try again. */
    FAILED("failed"),
    /** The outcome is unknown and someone said so explicitly; a person or a deliberate repeat resolves it. */
    AMBIGUOUS("ambiguous");

    private final String dbValue;

    EffectState(String dbValue) {
        this.dbValue = dbValue;
    }

    /** The value in the {@code state} column (see its CHECK constraint). */
    public String dbValue() {
        return dbValue;
    }

    public static EffectState fromDb(String value) {
        for (EffectState s : values()) {
            if (s.dbValue.equals(value)) {
                return s;
            }
        }
        throw new IllegalStateException("Unknown idempotency_record.state '" + value + "'");
    }
}
