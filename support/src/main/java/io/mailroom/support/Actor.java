package io.mailroom.support;

import java.util.Objects;

/**
 * Who asks for something: the name and role recorded in the audit log. Built by the server from a
 * verified token or session, and by the CLI from the operating-system user.
 */
public record Actor(String name, Role role) {

    public static final int MAX_NAME_LENGTH = 100;

    public Actor {
        Objects.requireNonNull(name, "name");
        Objects.requireNonNull(role, "role");
        if (name.isBlank() || name.length() > MAX_NAME_LENGTH) {
            throw new IllegalArgumentException("actor name must be 1.." + MAX_NAME_LENGTH + " characters");
        }
    }
}
