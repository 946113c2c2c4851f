package io.mailroom.orders;

import java.util.Optional;

/**
 * The {@code Idempotency-Key} of {@code POST /orders}: a value the client chooses per order it
 * means to place (a UUID is a good choice) and sends again when it repeats the request. 1 to
 * {@value #MAX_LENGTH} visible ASCII characters ({@code !} to {@code ~}): no spaces, no control
 * characters, nothing a header could carry differently from one client library to the next.
 */
final class RequestKey {

    /** The request header. */
    static final String HEADER = "Idempotency-Key";
    /** Same limit as the {@code order_request_key} CHECK. */
    static final int MAX_LENGTH = 255;

    private RequestKey() {
    }

    /** What is wrong with {@code key} (a present header value), phrased to follow the header's name, or empty. */
    static Optional<String> problem(String key) {
        if (key.isEmpty()) {
            return Optional.of("must not be empty");
        }
        if (key.length() > MAX_LENGTH) {
            return Optional.of("must be at most " + MAX_LENGTH + " characters, got " + key.length());
        }
        for (int i = 0; i < key.length(); i++) {
            char c = key.charAt(i);
            if (c < 0x21 || c > 0x7E) {
                return Optional.of(String.format("must be visible ASCII characters only, found U+%04X at index %d", (int) c, i));
            }
        }
        return Optional.empty();
    }

    /** @throws InvalidOrderException naming the header if {@link #problem} finds one */
    static String require(String key) {
        problem(key).ifPresent(problem -> {
            throw new InvalidOrderException(HEADER, HEADER + " " + problem);
        });
        return key;
    }
}
