package io.mailroom.chaos;

import io.mailroom.outbox.Durations;

import java.time.Duration;
import java.util.HashMap;
import java.util.Map;
import java.util.function.Function;

/** {@code --name value} and {@code --name=value} command-line options; {@code --flag} alone means true. */
final class Args {

    private final Map<String, String> values;

    private Args(Map<String, String> values) {
        this.values = values;
    }

    static Args parse(String[] args) {
        Map<String, String> values = new HashMap<>();
        for (int i = 0; i < args.length; i++) {
            String a = args[i];
            if (!a.startsWith("--")) {
                throw new IllegalArgumentException("unexpected argument '" + a + "' (options are --name value)");
            }
            String name = a.substring(2);
            int eq = name.indexOf('=');
            if (eq >= 0) {
                values.put(name.substring(0, eq), name.substring(eq + 1));
            } else if (i + 1 < args.length && !args[i + 1].startsWith("--")) {
                values.put(name, args[++i]);
            } else {
                values.put(name, "true");
            }
        }
        return new Args(values);
    }

    boolean has(String name) {
        return values.containsKey(name);
    }

    String string(String name, String defaultValue) {
        return values.getOrDefault(name, defaultValue);
    }

    String required(String name) {
        String v = values.get(name);
        if (v == null || v.isBlank()) {
            throw new IllegalArgumentException("--" + name + " is required");
        }
        return v;
    }

    int integer(String name, int defaultValue) {
        return number(name, defaultValue, Integer::parseInt, "an integer");
    }

    long longValue(String name, long defaultValue) {
        return number(name, defaultValue, Long::parseLong, "an integer");
    }

    double decimal(String name, double defaultValue) {
        return number(name, defaultValue, Double::parseDouble, "a number");
    }

    private <T> T number(String name, T defaultValue, Function<String, T> parse, String what) {
        String v = values.get(name);
        try {
            return v == null ? defaultValue : parse.apply(v.trim());
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException("--" + name + " must be " + what + ", got '" + v + "'");
        }
    }

    boolean flag(String name) {
        String v = values.get(name);
        return v != null && !v.equalsIgnoreCase("false");
    }

    /** As {@link Durations} reads it: 500ms, 30s, 5m, 1h, PT30S. */
    Duration duration(String name, Duration defaultValue) {
        String v = values.get(name);
        return v == null ? defaultValue : Durations.parse("--" + name, v);
    }
}
