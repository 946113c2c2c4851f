package io.mailroom.email.resilience;

import io.mailroom.email.transport.SendResult;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

import java.time.Duration;
import java.util.stream.Stream;

import static io.mailroom.email.resilience.FailoverDecision.DONE;
import static io.mailroom.email.resilience.FailoverDecision.NEXT;
import static io.mailroom.email.resilience.FailoverDecision.SKIP;
import static org.assertj.core.api.Assertions.assertThat;

/** The decision table of {@link FailoverDecision}: each kind of {@link SendResult}, by code and scope, never by text. */
class FailoverDecisionTest {

    static Stream<Arguments> table() {
        SendResult.Scope email = SendResult.Scope.EMAIL;
        SendResult.Scope session = SendResult.Scope.SESSION;
        return Stream.of(
                // accepted, or maybe accepted: the result stands
                Arguments.of("sent", new SendResult.Sent("<k@x>", "{}"), DONE),
                Arguments.of("SMTP: no final reply after the message data", new SendResult.Ambiguous("read timed out"), DONE),
                Arguments.of("HTTP: no response after the request was written", new SendResult.Ambiguous("no response"), DONE),
                // refused for this email by whoever sends it
                Arguments.of("SMTP 550 5.1.1 at RCPT", new SendResult.Permanent("smtp-550", "user unknown"), DONE),
                Arguments.of("HTTP 422 validation", new SendResult.Permanent("http-422", "bad"), DONE),
                Arguments.of("the MIME message cannot be built", new SendResult.Permanent("invalid-message", "x"), DONE),
                // not asked at all
                Arguments.of("breaker open", new SendResult.NotAttempted("breaker OPEN", Duration.ofSeconds(30), true), SKIP),
                Arguments.of("bulkhead full", new SendResult.NotAttempted("bulkhead", null), SKIP),
                // the provider refused us, before any email
                Arguments.of("HTTP 401", new SendResult.Misconfigured("http-401", "token"), NEXT),
                Arguments.of("SMTP 535 authentication", new SendResult.Misconfigured("smtp-535", "auth"), NEXT),
                Arguments.of("SMTP 554 to the greeting", new SendResult.Misconfigured("smtp-554", "no service"), NEXT),
                // nothing was written: SMTP before DATA
                Arguments.of("SMTP connection refused / connect timeout", new SendResult.Transient("smtp-connect", "refused"), NEXT),
                Arguments.of("SMTP TLS handshake", new SendResult.Transient("smtp-tls", "handshake"), NEXT),
                Arguments.of("SMTP session lost before DATA", new SendResult.Transient("smtp-io", "reset"), NEXT),
                Arguments.of("SMTP 421 before DATA", new SendResult.Transient("smtp-421", "closing", null, true), NEXT),
                Arguments.of("SMTP 451 to MAIL FROM", new SendResult.Transient("smtp-451", "sender deferred"), NEXT),
                Arguments.of("SMTP 554 5.7.1 relay denied at RCPT",
                        new SendResult.Transient("smtp-554", "relay", null, false, session), NEXT),
                // after DATA, or about this email: the result stands
                Arguments.of("SMTP 421 after DATA", new SendResult.Transient("smtp-421", "closing", null, false), DONE),
                Arguments.of("SMTP 451 after DATA", new SendResult.Transient("smtp-451", "deferred", null, false, email), DONE),
                Arguments.of("SMTP 450 greylisting at RCPT", new SendResult.Transient("smtp-450", "grey", null, false, email), DONE),
                Arguments.of("SMTP unexpected failure", new SendResult.Transient("smtp-error", "x"), DONE),
                // HTTP: nothing written, or a status that says it was not processed
                Arguments.of("HTTP connection refused", new SendResult.Transient("http-connect", "refused"), NEXT),
                Arguments.of("HTTP connect timeout", new SendResult.Transient("http-connect-timeout", "t"), NEXT),
                Arguments.of("HTTP TLS handshake", new SendResult.Transient("http-tls", "t"), NEXT),
                Arguments.of("HTTP 503", new SendResult.Transient("http-503", "unavailable", Duration.ofSeconds(5)), NEXT),
                Arguments.of("HTTP 429", new SendResult.Transient("http-429", "slow down"), NEXT),
                Arguments.of("HTTP 408", new SendResult.Transient("http-408", "request timeout"), NEXT),
                Arguments.of("HTTP 425", new SendResult.Transient("http-425", "too early"), NEXT),
                // HTTP: may have been taken, or the provider holds the key: stay with it
                Arguments.of("HTTP 500", new SendResult.Transient("http-500", "oops"), DONE),
                Arguments.of("HTTP 502", new SendResult.Transient("http-502", "bad gateway"), DONE),
                Arguments.of("HTTP 504", new SendResult.Transient("http-504", "gateway timeout"), DONE),
                Arguments.of("HTTP 409 key in progress", new SendResult.Transient("http-409", "in progress", null, true, email), DONE),
                Arguments.of("interrupted", new SendResult.Transient("interrupted", "x"), DONE));
    }

    @ParameterizedTest(name = "{0} -> {2}")
    @MethodSource("table")
    void decidesByKindCodeAndScope(String what, SendResult result, FailoverDecision expected) {
        assertThat(FailoverDecision.of(result)).isEqualTo(expected);
    }

    @ParameterizedTest(name = "{0}: the text does not decide")
    @MethodSource("table")
    void theErrorTextNeverDecides(String what, SendResult result, FailoverDecision expected) {
        SendResult reworded = switch (result) {
            case SendResult.Transient t -> new SendResult.Transient(t.code(), "connection refused 503 before DATA", t.retryAfter(),
                    t.retryableInAttempt(), t.scope());
            case SendResult.Ambiguous a -> new SendResult.Ambiguous("connection refused, nothing accepted");
            case SendResult.Permanent p -> new SendResult.Permanent(p.code(), "connection refused");
            default -> result;
        };
        assertThat(FailoverDecision.of(reworded)).isEqualTo(expected);
    }
}
