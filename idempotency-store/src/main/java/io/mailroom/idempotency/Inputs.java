package io.mailroom.idempotency;

/** Argument checks shared by the store; every message names the argument. */
final class Inputs {

    private static final String TRUNCATED = " …[truncated]";

    private Inputs() {
    }

    /** Non-blank, at most {@code maxLength} characters, no control characters. */
    static String requireText(String name, String value, int maxLength) {
        if (value == null) {
            throw new IllegalArgumentException(name + " must not be null");
        }
        if (value.isBlank()) {
            throw new IllegalArgumentException(name + " must not be blank");
        }
        if (value.length() > maxLength) {
            throw new IllegalArgumentException(name + " must be at most " + maxLength + " characters, got "
                    + value.length());
        }
        for (int i = 0; i < value.length(); i++) {
            if (Character.isISOControl(value.charAt(i))) {
                throw new IllegalArgumentException(name + " must not contain control characters (found U+"
                        + String.format("%04X", (int) value.charAt(i)) + " at index " + i + ")");
            }
        }
        return value;
    }

    /** A reservation number as {@link Reservation.Reserved} gives it: 1 or more. */
    static int requireReservation(int reservation) {
        if (reservation < 1) {
            throw new IllegalArgumentException("reservation must be >= 1 (the number the caller holds), got "
                    + reservation);
        }
        return reservation;
    }

    /** Null, or a JSON object as text (the database checks that it parses). */
    static String optionalJsonObject(String name, String json) {
        if (json != null && !json.strip().startsWith("{")) {
            throw new IllegalArgumentException(name + " must be a JSON object (or null)");
        }
        return json;
    }

    /**
     * Free text (an error message, a stack-trace line, a reason) made storable in a column limited to
     * {@code maxLength} characters: NUL, which PostgreSQL text cannot hold, becomes U+FFFD, and an
     * over-long text is cut so that it ends with a marker, never in the middle of a surrogate pair.
     * PostgreSQL counts code points and Java counts UTF-16 units, so a string of at most
     * {@code maxLength} units never exceeds the column's limit.
     */
    static String boundedText(String name, String value, int maxLength) {
        if (value == null || value.isBlank()) {
            throw new IllegalArgumentException(name + " must not be blank");
        }
        String text = value.replace('\u0000', '\uFFFD');
        if (text.length() <= maxLength) {
            return text;
        }
        int cut = maxLength - TRUNCATED.length();
        if (Character.isHighSurrogate(text.charAt(cut - 1))) {
            cut--;
        }
        return text.substring(0, cut) + TRUNCATED;
    }
}
