package io.mailroom.support;

import java.util.Objects;

/** The one permission check of the support surfaces: an actor may do what its role or a higher one may. */
final class Roles {

    private Roles() {
    }

    /** @throws AccessDeniedException when {@code actor}'s role does not include {@code required} */
    static void require(Actor actor, Role required) {
        Objects.requireNonNull(actor, "actor");
        if (!actor.role().includes(required)) {
            throw new AccessDeniedException(actor, required);
        }
    }
}
