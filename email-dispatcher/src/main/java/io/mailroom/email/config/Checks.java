package io.mailroom.email.config;

import java.time.Duration;

/**
 * Validation used by the configuration records. Each check names the setting in its message and
 * never clamps: a bad value is an error for the operator to fix, not something to guess around.
 */
public final class Checks {

    private Checks() {
    }

    public static int range(String setting, int value, int min, int max) {
        if (value < min || value > max) {
            throw new InvalidSettingException(setting, setting + " must be " + min + ".." + max + ", got " + value);
        }
        return value;
    }

    public static Duration positive(String setting, Duration value) {
        notNull(setting, value);
        if (value.isZero() || value.isNegative()) {
            throw new InvalidSettingException(setting, setting + " must be a positive duration, got " + Settings.format(value));
        }
        return value;
    }

    public static Duration notNegative(String setting, Duration value) {
        notNull(setting, value);
        if (value.isNegative()) {
            throw new InvalidSettingException(setting, setting + " must not be negative, got " + Settings.format(value));
        }
        return value;
    }

    public static Duration atMost(String setting, Duration value, Duration max) {
        if (value.compareTo(max) > 0) {
            throw new InvalidSettingException(setting, setting + " must be at most " + Settings.format(max) + ", got " + Settings.format(value));
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
