package io.mailroom.email.dispatch;

import io.mailroom.email.Email;
import io.mailroom.email.InvalidEmailException;
import io.mailroom.email.render.RenderException;
import io.mailroom.outbox.runtime.ClaimedMessage;

import java.util.List;
import java.util.Objects;

/**
 * Turns a claimed outbox message into the email to send and the fingerprint of the request it
 * came from. {@link EmailHandler} does everything else (reservation, ambiguity, sending, outcome)
 * the same way for every kind of email.
 *
 * <p>The fingerprint parts describe the caller's request (recipient, data), never the rendering:
 * a template deploy changes the rendering, and must not turn a sent key into a "different email".
 */
public interface EmailComposer {

    Composed compose(ClaimedMessage message) throws RenderException, InvalidEmailException;

    /**
     * The email, what the idempotency store fingerprints for its key, and the template it was
     * rendered from (null when the composer uses no named template); the handler stores the latter
     * with the rendering for support.
     */
    record Composed(Email email, List<String> fingerprintParts, Template template) {
        public Composed {
            fingerprintParts = List.copyOf(fingerprintParts);
        }

        /** An email not rendered from a named template: support shows it as custom. */
        public Composed(Email email, List<String> fingerprintParts) {
            this(email, fingerprintParts, null);
        }
    }

    /**
     * Which template rendered an email, and in which locale (a BCP 47 tag, the one the catalogue
     * actually used); the version is {@link Email#templateVersion()}.
     */
    record Template(String name, String locale) {
        public Template {
            Objects.requireNonNull(name, "name");
        }
    }
}
