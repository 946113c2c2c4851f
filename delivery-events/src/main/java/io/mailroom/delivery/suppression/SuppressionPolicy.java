package io.mailroom.delivery.suppression;

import java.util.Locale;

/**
 * Which suppressions stop a topic's emails. {@link #STRICT} (the default): all of them.
 * {@link #ALLOW_COMPLAINED}: everything but complaints, for mail the recipient asked for right now
 * (a password reset, a sign-in code) where a complaint about last month's newsletter must not lock
 * them out. No policy looks past a hard bounce: that mailbox does not exist, and sending to it
 * anyway damages the sender's reputation for everyone.
 */
public enum SuppressionPolicy {
    STRICT,
    ALLOW_COMPLAINED;

    public boolean blocks(SuppressionReason reason) {
        return this == STRICT || reason != SuppressionReason.COMPLAINT;
    }

    /** The spelling in a topic line ({@code suppression=allow-complained}). */
    public String configValue() {
        return name().toLowerCase(Locale.ROOT).replace('_', '-');
    }

    /** @throws IllegalArgumentException listing the accepted values */
    public static SuppressionPolicy parse(String value) {
        for (SuppressionPolicy p : values()) {
            if (p.configValue().equals(value)) {
                return p;
            }
        }
        throw new IllegalArgumentException("suppression=" + value + " is not one of strict, allow-complained");
    }
}
