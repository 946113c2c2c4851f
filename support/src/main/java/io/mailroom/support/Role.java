package io.mailroom.support;

import io.javalin.security.RouteRole;

import java.util.Locale;

/**
 * What a person may do. Each role includes the ones before it: a {@code support} person may also
 * read, an {@code operator} may also act on emails.
 */
public enum Role implements RouteRole {
    /** Reads emails, timelines and queue statistics. */
    VIEWER,
    /** Also retries, resends, confirms and cancels emails. */
    SUPPORT,
    /** Also pauses and resumes dispatching. */
    OPERATOR;

    /** Whether this role may do what {@code required} may. */
    public boolean includes(Role required) {
        return ordinal() >= required.ordinal();
    }

    /** The name used in configuration and in the audit log, e.g. {@code operator}. */
    public String word() {
        return name().toLowerCase(Locale.ROOT);
    }

    /** Parses {@code viewer}, {@code support} or {@code operator} (any case); null if it is none of them. */
    public static Role parse(String value) {
        if (value == null) {
            return null;
        }
        for (Role r : values()) {
            if (r.word().equalsIgnoreCase(value.trim())) {
                return r;
            }
        }
        return null;
    }
}
