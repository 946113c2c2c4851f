package io.mailroom.email.transport;

import java.time.Duration;
import java.util.Objects;

/**
 * What a transport can say about one send, classified by protocol code (SMTP reply code, HTTP
 * status) or by the failure's type, never by message text. The variants differ in the question
 * that matters for an at-most-once effect: <em>could the provider have accepted the email?</em>
 *
 * <ul>
 *   <li>{@link Sent}: yes, it did.</li>
 *   <li>{@link Transient}, {@link Permanent}, {@link Misconfigured}, {@link NotAttempted}: no, the
 *       provider answered that it did not accept it, or it was never asked.</li>
 *   <li>{@link Ambiguous}: maybe; the request may have reached the provider and no answer came.</li>
 * </ul>
 *
 * Error texts are bounded and never contain the email body or a credential.
 */
public sealed interface SendResult {

    /** True for {@link Sent} and {@link Ambiguous}: repeating without an idempotency key could duplicate the email. */
    default boolean mayHaveBeenDelivered() {
        return this instanceof Sent || this instanceof Ambiguous;
    }

    /**
     * The provider accepted the email.
     *
     * @param providerMessageId the provider's id (HTTP) or the Message-ID we set (SMTP); null only
     *                          if a provider accepted without returning a readable id
     * @param detailJson        a JSON object for the attempt history (status, ids, server reply)
     */
    record Sent(String providerMessageId, String detailJson) implements SendResult {
        public Sent {
            Objects.requireNonNull(detailJson, "detailJson");
        }
    }

    /**
     * What a transient failure is about, which decides whether a circuit breaker counts it.
     */
    enum Scope {
        /**
         * The provider as a whole, so the next email would most likely fail the same way: no
         * connection or a connect/read timeout, SMTP 421, a TLS failure, HTTP 5xx, 408 and 429.
         * Counts toward the breaker.
         */
        PROVIDER,
        /**
         * This one email or recipient, e.g. a greylisting SMTP 451 at RCPT or an HTTP 409 for a key
         * still in progress. The provider answered, so it says nothing against the provider, and
         * other customers' email must not be held back because of it.
         */
        EMAIL,
        /**
         * Our session or configuration as this server sees it, not the email: our HELO name refused
         * ({@code 504 5.5.2 Helo command rejected} at RCPT), relaying denied ({@code 554 5.7.1}),
         * authentication required ({@code 530 5.7.0}), our envelope sender refused. Every email
         * would be refused the same way, so none of them fails for it: the transport pauses
         * (its breaker is opened), readiness says why, and the email is handed back without
         * counting the attempt.
         */
        SESSION
    }

    /**
     * Not accepted this time; the same email may succeed later.
     *
     * @param code               e.g. {@code smtp-451}, {@code http-503}, {@code connect}
     * @param retryAfter         the provider's hint (HTTP {@code Retry-After}), or null
     * @param retryableInAttempt false when even a quick in-attempt retry is not wanted, e.g. an SMTP
     *                           4xx reply that came after the message data had been sent, or a
     *                           greylisting 451 at RCPT (which needs minutes, not milliseconds)
     * @param scope              whether the failure is about the provider or about this email
     */
    record Transient(String code, String error, Duration retryAfter, boolean retryableInAttempt, Scope scope) implements SendResult {
        public Transient {
            Objects.requireNonNull(code, "code");
            Objects.requireNonNull(error, "error");
            Objects.requireNonNull(scope, "scope");
            if (retryAfter != null && retryAfter.isNegative()) {
                throw new IllegalArgumentException("retryAfter must not be negative: " + retryAfter);
            }
        }

        /** A failure of the provider as a whole ({@link Scope#PROVIDER}). */
        public Transient(String code, String error, Duration retryAfter, boolean retryableInAttempt) {
            this(code, error, retryAfter, retryableInAttempt, Scope.PROVIDER);
        }

        public Transient(String code, String error, Duration retryAfter) {
            this(code, error, retryAfter, true);
        }

        public Transient(String code, String error) {
            this(code, error, null, true);
        }
    }

    /** Refused for good (bad address, validation error, 5xx SMTP reply): sending it again cannot help. */
    record Permanent(String code, String error) implements SendResult {
        public Permanent {
            Objects.requireNonNull(code, "code");
            Objects.requireNonNull(error, "error");
        }
    }

    /**
     * The request may have reached the provider and no answer came (timeout or connection loss
     * after the request or the SMTP message data was written). Whether a repeat is safe depends on
     * the transport: an HTTP provider deduplicates by idempotency key, SMTP cannot.
     */
    record Ambiguous(String error) implements SendResult {
        public Ambiguous {
            Objects.requireNonNull(error, "error");
        }
    }

    /**
     * The provider rejects us, not the email (HTTP 401/403, SMTP authentication failure): every
     * further send would fail the same way. Stop sending through this transport and alert.
     */
    record Misconfigured(String code, String error) implements SendResult {
        public Misconfigured {
            Objects.requireNonNull(code, "code");
            Objects.requireNonNull(error, "error");
        }
    }

    /**
     * Nothing was sent and the provider was not asked, because a local policy refused the call
     * (breaker open, transport halted, bulkhead full, rate limit). The message's attempt should be
     * handed back without counting it.
     *
     * @param retryAfter when trying again makes sense, or null if unknown
     * @param byBreaker   the circuit breaker refused (or the halt that holds it open): the email may
     *                    go as soon as the breaker lets calls through again, before
     *                    {@code retryAfter} if that comes sooner
     */
    record NotAttempted(String reason, Duration retryAfter, boolean byBreaker) implements SendResult {
        public NotAttempted {
            Objects.requireNonNull(reason, "reason");
        }

        /** Refused by a policy other than the breaker (bulkhead, rate limit). */
        public NotAttempted(String reason, Duration retryAfter) {
            this(reason, retryAfter, false);
        }
    }
}
