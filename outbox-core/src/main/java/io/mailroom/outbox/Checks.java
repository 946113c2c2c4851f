package io.mailroom.outbox;

import java.time.Duration;

/**
 * Validation shared by the configuration builders of this package. Each check names the setting in
 * its {@link IllegalArgumentException} and never clamps: a bad value is an error for the caller to
 * fix, not something to guess around.
 */
final class Checks {

    private Checks() {
    }

    /** {@code value} within {@code min..max} (inclusive). */
    static void range(String name, int value, int min, int max) {
        if (value < min || value > max) {
            throw new IllegalArgumentException(name + " must be between " + min + " and " + max + ", got " + value);
        }
    }

    /** {@code value} present and greater than zero. */
    static void positive(String name, Duration value) {
        if (value == null || value.isNegative() || value.isZero()) {
            throw new IllegalArgumentException(name + " must be a positive duration, got " + value);
        }
    }

    /** {@code value} present and at least {@code min}; {@code why}, when not null, is appended to the message. */
    static void atLeast(String name, Duration value, Duration min, String why) {
        if (value == null || value.compareTo(min) < 0) {
            throw new IllegalArgumentException(name + " must be at least " + min + ", got " + value
                    + (why == null ? "" : ": " + why));
        }
    }
}
