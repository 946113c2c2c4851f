package io.mailroom.outbox;

import java.time.Duration;

/**
 * Validation for configuration: this package's builders and the services' environment settings.
 * Each check names the setting in an {@link InvalidSettingException} and never clamps: a bad value
 * is an error to fix, not something to guess around. Each returns the value it accepted, so a check
 * can stand where the value is assigned. Durations are shown as {@link Durations#format} writes them.
 */
public final class Checks {

    private Checks() {
    }

    /** {@code value} within {@code min..max} (inclusive). */
    public static int range(String setting, int value, int min, int max) {
        if (value < min || value > max) {
            throw new InvalidSettingException(setting, setting + " must be " + min + ".." + max + ", got " + value);
        }
        return value;
    }

    /** {@code value} present and greater than zero. */
    public static Duration positive(String setting, Duration value) {
        if (value == null || value.isNegative() || value.isZero()) {
            throw new InvalidSettingException(setting, setting + " must be a positive duration, got " + Durations.format(value));
        }
        return value;
    }

    /** {@code value} present and zero or more. */
    public static Duration notNegative(String setting, Duration value) {
        if (value == null || value.isNegative()) {
            throw new InvalidSettingException(setting, setting + " must not be negative, got " + Durations.format(value));
        }
        return value;
    }

    /** {@code value} present and at most {@code max}. */
    public static Duration atMost(String setting, Duration value, Duration max) {
        if (value == null || value.compareTo(max) > 0) {
            throw new InvalidSettingException(setting, setting + " must be at most " + Durations.format(max) + ", got "
                    + Durations.format(value));
        }
        return value;
    }

    /** {@code value} present and at least {@code min}; {@code why}, when not null, is appended to the message. */
    public static Duration atLeast(String setting, Duration value, Duration min, String why) {
        if (value == null || value.compareTo(min) < 0) {
            throw new InvalidSettingException(setting, setting + " must be at least " + Durations.format(min) + ", got "
                    + Durations.format(value) + (why == null ? "" : ": " + why));
        }
        return value;
    }

    public static <T> T notNull(String setting, T value) {
        if (value == null) {
            throw new InvalidSettingException(setting, setting + " is required");
        }
        return value;
    }

    public static String notBlank(String setting, String value) {
        if (value == null || value.isBlank()) {
            throw new InvalidSettingException(setting, setting + " is required");
        }
        return value;
    }
}
