package io.mailroom.support;

/** The actor's role does not allow the action (HTTP 403). */
public final class AccessDeniedException extends RuntimeException {

    private final Role required;

    public AccessDeniedException(Actor actor, Role required) {
        super(actor.name() + " (" + actor.role().word() + ") may not do this; it needs the role " + required.word());
        this.required = required;
    }

    public Role required() {
        return required;
    }
}
