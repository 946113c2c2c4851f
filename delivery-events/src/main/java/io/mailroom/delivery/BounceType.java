package io.mailroom.delivery;

import java.util.Locale;

/**
 * A hard bounce is permanent (no such mailbox, domain does not exist): the address is suppressed at
 * once. A soft bounce is temporary (mailbox full, greylisted past the provider's retries): only a
 * configured run of them in a row suppresses the address.
 */
public enum BounceType {
    HARD,
    SOFT;

    public String dbValue() {
        return name().toLowerCase(Locale.ROOT);
    }

    public static BounceType fromDb(String value) {
        return value == null ? null : valueOf(value.toUpperCase(Locale.ROOT));
    }
}
