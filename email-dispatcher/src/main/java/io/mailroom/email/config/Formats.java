package io.mailroom.email.config;

import io.mailroom.outbox.Durations;

import java.time.Duration;

/** How configuration values appear in toString() and logs: durations compact, secrets never. */
public final class Formats {

    private Formats() {
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
