package io.mailroom.delivery.suppression;

import java.util.Locale;

/** Why an address is on the suppression list; the spelling in {@code suppression.reason}. */
public enum SuppressionReason {
    HARD_BOUNCE("hard bounce"),
    COMPLAINT("complaint"),
    SOFT_BOUNCES("soft bounces in a row"),
    MANUAL("added by hand");

    private final String words;

    SuppressionReason(String words) {
        this.words = words;
    }

    public String dbValue() {
        return name().toLowerCase(Locale.ROOT);
    }

    /** For people: "hard bounce", "complaint", ... */
    public String words() {
        return words;
    }

    public static SuppressionReason fromDb(String value) {
        return valueOf(value.toUpperCase(Locale.ROOT));
    }
}
