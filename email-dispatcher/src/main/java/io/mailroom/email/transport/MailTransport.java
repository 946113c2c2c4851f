package io.mailroom.email.transport;

import io.mailroom.email.Email;

/**
 * Hands one email to a provider. Implementations classify every outcome into a {@link SendResult}
 * and do not throw for provider or network failures (only for programming errors, e.g. a null
 * argument). They are safe to call from many threads at once.
 *
 * <p>{@code idempotencyKey} names the business effect ({@code email-order-102}) and is the same on
 * every attempt of that effect; a transport passes it to the provider in whatever form the
 * provider understands (an {@code Idempotency-Key} header, a deterministic {@code Message-ID}).
 * It must be 1..{@value IdempotencyKeys#MAX_LENGTH} printable ASCII characters without spaces; any
 * other key is a {@link SendResult.Permanent} and nothing is sent.
 */
public interface MailTransport extends AutoCloseable {

    /** Short, stable name used in logs, metrics and attempt details, e.g. {@code smtp}. */
    String name();

    SendResult send(Email email, String idempotencyKey);

    /**
     * Sends again an email whose earlier send has an unknown outcome (same key). A wrapper that
     * judges the provider's health by its results ({@code ResilientTransport}) must not let such a
     * resend decide it; a plain transport sends as {@link #send} does.
     */
    default SendResult resend(Email email, String idempotencyKey) {
        return send(email, idempotencyKey);
    }

    /** Releases connections; the default has none. */
    @Override
    default void close() {
    }
}
