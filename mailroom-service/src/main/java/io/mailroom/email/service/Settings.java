package io.mailroom.email.service;

import io.mailroom.outbox.Durations;
import io.mailroom.outbox.InvalidSettingException;

import java.time.Duration;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.regex.Pattern;

/**
 * Reads typed settings from a map of environment variables (usually {@code System.getenv()}).
 * Unset and blank values mean "use the default"; a value that is set but malformed is an
 * {@link InvalidSettingException} naming the variable, never silently replaced by the default.
 *
 * <p>Durations accept {@code 250ms}, {@code 10s}, {@code 5m}, {@code 1h}, ISO-8601
 * ({@code PT10S}) or a bare integer meaning seconds.
 */
public final class Settings {

    private static final Pattern BARE_SECONDS = Pattern.compile("\\d{1,12}");

    private final Map<String, String> env;

    public Settings(Map<String, String> env) {
        this.env = Map.copyOf(Objects.requireNonNull(env, "env"));
    }

    /** The trimmed value, or null when unset or blank. */
    public String string(String name) {
        String value = env.get(name);
        if (value == null || value.isBlank()) {
            return null;
        }
        return value.strip();
    }

    public String string(String name, String defaultValue) {
        String value = string(name);
        return value == null ? defaultValue : value;
    }

    /** Secrets are taken verbatim (no trimming): a password may legitimately end with a space. */
    public String secret(String name) {
        String value = env.get(name);
        return value == null || value.isEmpty() ? null : value;
    }

    public int integer(String name, int defaultValue) {
        String value = string(name);
        if (value == null) {
            return defaultValue;
        }
        try {
            return Integer.parseInt(value);
        } catch (NumberFormatException e) {
            throw new InvalidSettingException(name, name + " must be an integer, got '" + value + "'");
        }
    }

    public Duration duration(String name, Duration defaultValue) {
        String value = string(name);
        if (value == null) {
            return defaultValue;
        }
        return parseDuration(name, value);
    }

    public <E extends Enum<E>> E enumValue(String name, Class<E> type, E defaultValue) {
        String value = string(name);
        if (value == null) {
            return defaultValue;
        }
        try {
            return Enum.valueOf(type, value.toUpperCase(Locale.ROOT));
        } catch (IllegalArgumentException e) {
            throw new InvalidSettingException(name, name + " must be one of " + java.util.Arrays.toString(type.getEnumConstants())
                    + ", got '" + value + "'");
        }
    }

    /**
     * {@link Durations#parse}, the project's one duration syntax (500ms, 10s, 5m, 2h, 1d, PT10S), plus
     * the dispatcher's older spelling of a bare number as seconds ({@code MAILROOM_LEASE=30}), which
     * configurations written before may still use.
     */
    static Duration parseDuration(String name, String value) {
        String v = value.strip();
        if (BARE_SECONDS.matcher(v).matches()) {
            return Duration.ofSeconds(Long.parseLong(v));
        }
        return Durations.parse(name, v);
    }

    /** Compact form for messages and effective-configuration logs: 500ms, 10s, 2m, 3h, 1d. */
    public static String format(Duration d) {
        return Durations.format(d);
    }

    /** How a secret appears in toString() and logs: never its value, not even its length. */
    public static String mask(String secret) {
        return secret == null ? "(none)" : "****";
    }
}
