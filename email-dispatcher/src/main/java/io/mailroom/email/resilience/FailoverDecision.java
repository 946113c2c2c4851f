package io.mailroom.email.resilience;

import io.mailroom.email.transport.SendResult;

import java.util.Set;

/**
 * Whether a send's result lets {@link FallbackTransport} hand the email to the next provider: only
 * when the result <em>proves</em> that this provider accepted nothing, decided by the result's kind
 * and code (SMTP reply code, HTTP status, the failure's type), never by its text.
 *
 * <table>
 *   <caption>The decision per result</caption>
 *   <tr><th>Result</th><th>Decision</th><th>Why</th></tr>
 *   <tr><td>{@code Sent}</td><td>{@link #DONE}</td><td>accepted</td></tr>
 *   <tr><td>{@code Ambiguous}</td><td>{@link #DONE}</td><td>may have been accepted (a timeout after DATA or after
 *       the request was written, a connection lost mid-response): never elsewhere, to review as without a fallback</td></tr>
 *   <tr><td>{@code NotAttempted}</td><td>{@link #SKIP}</td><td>the provider was not asked (breaker open, halted, bulkhead full)</td></tr>
 *   <tr><td>{@code Misconfigured}</td><td>{@link #NEXT}</td><td>the provider refused us before taking any email (401/403,
 *       SMTP authentication, 5xx to the greeting or EHLO)</td></tr>
 *   <tr><td>{@code Transient}, SMTP, before DATA</td><td>{@link #NEXT}</td><td>{@code smtp-connect} (refused, connect
 *       timeout), {@code smtp-tls}, {@code smtp-io} (session lost before DATA), a 4xx to MAIL FROM or 421 before DATA,
 *       the session refused (scope {@code SESSION}: relaying denied, HELO refused)</td></tr>
 *   <tr><td>{@code Transient}, HTTP</td><td>{@link #NEXT} for {@code http-connect}, {@code http-connect-timeout},
 *       {@code http-tls}, 408, 425, 429, 503</td><td>nothing was written, or a status that says the request was not
 *       processed. Other 5xx (500, 502, 504) may come after the provider took the email: they stay with that provider,
 *       whose idempotency key makes its own retry safe</td></tr>
 *   <tr><td>{@code Transient} of scope {@code EMAIL}</td><td>{@link #DONE}</td><td>about this email at this provider:
 *       greylisting at RCPT, a 4xx after DATA, HTTP 409 (the provider holds the key in progress)</td></tr>
 *   <tr><td>{@code Permanent}</td><td>{@link #DONE}</td><td>the email itself is refused (a 5xx for the mailbox or the
 *       message, a 4xx validation error): another provider would refuse it the same way</td></tr>
 * </table>
 */
public enum FailoverDecision {
    /** The result stands: accepted, maybe accepted, or refused for this email whoever sends it. */
    DONE,
    /** This provider accepted nothing: the next one may be tried. */
    NEXT,
    /** This provider was not asked: the next one may be tried at once. */
    SKIP;

    /** HTTP codes that prove the request was not processed. */
    private static final Set<String> HTTP_NOT_ACCEPTED = Set.of("http-connect", "http-connect-timeout", "http-tls",
            "http-408", "http-425", "http-429", "http-503");
    /** SMTP codes that, with the flags below, come before the message data was written. */
    private static final Set<String> SMTP_BEFORE_DATA = Set.of("smtp-connect", "smtp-tls", "smtp-io", "smtp-pool-exhausted");

    public static FailoverDecision of(SendResult result) {
        return switch (result) {
            case SendResult.Sent s -> DONE;
            case SendResult.Ambiguous a -> DONE;
            case SendResult.Permanent p -> DONE;
            case SendResult.NotAttempted n -> SKIP;
            case SendResult.Misconfigured m -> NEXT;
            case SendResult.Transient t -> transientDecision(t);
        };
    }

    private static FailoverDecision transientDecision(SendResult.Transient t) {
        if (t.scope() == SendResult.Scope.EMAIL) {
            return DONE;
        }
        String code = t.code();
        if (HTTP_NOT_ACCEPTED.contains(code) || SMTP_BEFORE_DATA.contains(code)) {
            return NEXT;
        }
        if (t.scope() == SendResult.Scope.SESSION && code.startsWith("smtp-")) {
            return NEXT; // refused at MAIL FROM or RCPT: before DATA, by construction
        }
        // a 4xx to MAIL FROM, a 421 or a temporary authentication failure: provider-wide and, while
        // retryable within the attempt, before the message data (SmtpFailures clears the flag after DATA)
        if (code.matches("smtp-4\\d\\d") && t.retryableInAttempt()) {
            return NEXT;
        }
        return DONE;
    }
}
