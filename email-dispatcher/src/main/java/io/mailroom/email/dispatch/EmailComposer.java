package io.mailroom.email.dispatch;

import io.mailroom.email.Email;
import io.mailroom.email.InvalidEmailException;
import io.mailroom.email.render.RenderException;
import io.mailroom.outbox.ClaimedMessage;

import java.util.List;

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

    /** The email, and what the idempotency store fingerprints for its key. */
    record Composed(Email email, List<String> fingerprintParts) {
        public Composed {
            fingerprintParts = List.copyOf(fingerprintParts);
        }
    }
}
