package io.mailroom.email.config;

import java.time.Duration;
import java.time.format.DateTimeParseException;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.regex.Matcher;
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

    private static final Pattern SIMPLE_DURATION = Pattern.compile("(\\d{1,12})\\s*(ms|s|m|h)?");

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

    static Duration parseDuration(String name, String value) {
        Matcher m = SIMPLE_DURATION.matcher(value.toLowerCase(Locale.ROOT));
        if (m.matches()) {
            long amount = Long.parseLong(m.group(1));
            String unit = m.group(2) == null ? "s" : m.group(2);
            return switch (unit) {
                case "ms" -> Duration.ofMillis(amount);
                case "s" -> Duration.ofSeconds(amount);
                case "m" -> Duration.ofMinutes(amount);
                default -> Duration.ofHours(amount);
            };
        }
        try {
            return Duration.parse(value);
        } catch (DateTimeParseException e) {
            throw new InvalidSettingException(name, name + " must be a duration like 500ms, 10s, 5m or PT10S, got '" + value + "'");
        }
    }

    /** Compact form for messages and effective-configuration logs: 500ms, 10s, 2m. */
    public static String format(Duration d) {
        if (d == null) {
            return "null";
        }
        long ms = d.toMillis();
        if (ms % 60_000 == 0 && ms != 0) {
            return ms / 60_000 + "m";
        }
        if (ms % 1000 == 0 && ms != 0) {
            return ms / 1000 + "s";
        }
        return ms + "ms";
    }

    /** How a secret appears in toString() and logs: never its value, not even its length. */
    public static String mask(String secret) {
        return secret == null ? "(none)" : "****";
    }
}
