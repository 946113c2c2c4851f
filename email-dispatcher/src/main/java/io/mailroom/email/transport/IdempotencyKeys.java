package io.mailroom.email.transport;

/**
 * The shape every transport accepts for an idempotency key: it travels in an HTTP header or in a
 * Message-ID, so it must be printable ASCII without spaces (nothing that could break a header).
 */
public final class IdempotencyKeys {

    public static final int MAX_LENGTH = 255;

    private IdempotencyKeys() {
    }

    /** What is wrong with the key, or null if it is acceptable. */
    public static String problem(String key) {
        if (key == null || key.isEmpty()) {
            return "idempotency key is missing";
        }
        if (key.length() > MAX_LENGTH) {
            return "idempotency key is longer than " + MAX_LENGTH + " characters";
        }
        for (int i = 0; i < key.length(); i++) {
            char c = key.charAt(i);
            if (c < 0x21 || c > 0x7E) {
                return String.format("idempotency key contains U+%04X at index %d; only printable ASCII without spaces is allowed", (int) c, i);
            }
        }
        return null;
    }

    /** A {@link SendResult.Permanent} for a bad key, or null if the key is fine. */
    public static SendResult.Permanent check(String key) {
        String problem = problem(key);
        return problem == null ? null : new SendResult.Permanent("invalid-idempotency-key", problem);
    }
}
