package io.mailroom.email.resilience;

import io.mailroom.email.Email;
import io.mailroom.email.TestEmails;
import io.mailroom.email.transport.SendResult;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * {@link FallbackTransport}: a proven refusal ends the attempt (recorded) and the next attempt starts
 * at the next provider; a provider that was not asked is passed over at once; anything that may have
 * been accepted stays where it was.
 */
class FallbackTransportTest {

    private static final Email EMAIL = TestEmails.sample();
    private static final SendResult.Sent SENT_HTTP = new SendResult.Sent("prov-1", "{\"transport\":\"http\"}");

    @Test
    void aRefusedConnectionEndsTheAttemptAndTheNextAttemptGoesToTheNextProviderWithTheSameKey() {
        List<String> keys = new ArrayList<>();
        ScriptedTransport smtp = new ScriptedTransport("smtp", n -> new SendResult.Transient("smtp-connect", "refused"));
        ScriptedTransport sent = new ScriptedTransport("http", n -> SENT_HTTP);
        io.mailroom.email.transport.MailTransport http = new io.mailroom.email.transport.MailTransport() {
            @Override
            public String name() {
                return "http";
            }

            @Override
            public SendResult send(Email email, String key) {
                keys.add(key);
                return sent.send(email, key);
            }
        };
        List<String> told = new ArrayList<>();
        FallbackTransport chain = new FallbackTransport(List.of(smtp, http), (key, from, why, to) -> told.add(key + ":" + from + "->" + to));
        assertThat(chain.name()).isEqualTo("smtp,http");

        SendResult first = chain.send(EMAIL, "email-order-102");
        // not sent yet: a transient failure retried at once, about this email (the breaker of smtp counted it already)
        assertThat(first).isInstanceOfSatisfying(SendResult.Transient.class, t -> {
            assertThat(t.code()).isEqualTo("smtp-connect");
            assertThat(t.retryAfter()).isEqualTo(Duration.ZERO);
            assertThat(t.scope()).isEqualTo(SendResult.Scope.EMAIL);
            assertThat(t.error()).contains("failing over to http");
        });
        assertThat(sent.calls).hasValue(0);
        assertThat(told).containsExactly("email-order-102:smtp->http");

        assertThat(chain.send(EMAIL, "email-order-102")).isEqualTo(SENT_HTTP);
        assertThat(smtp.calls).hasValue(1);
        assertThat(keys).containsExactly("email-order-102");
        // the next email starts at the first provider again
        chain.send(EMAIL, "email-order-103");
        assertThat(smtp.calls).hasValue(2);
    }

    @Test
    void anOpenBreakerOfTheFirstPassesTheEmailToTheNextWithinTheSameAttempt() {
        ScriptedTransport smtp = new ScriptedTransport("smtp", n -> new SendResult.NotAttempted("breaker OPEN", Duration.ofSeconds(30), true));
        ScriptedTransport http = new ScriptedTransport("http", n -> SENT_HTTP);
        FallbackTransport chain = new FallbackTransport(List.of(smtp, http));

        assertThat(chain.send(EMAIL, "k1")).isEqualTo(SENT_HTTP);
        assertThat(http.calls).hasValue(1);
    }

    @Test
    void whenNoProviderCouldBeAskedTheAttemptIsHandedBackUncounted() {
        SendResult.NotAttempted open = new SendResult.NotAttempted("breaker OPEN", Duration.ofSeconds(30), true);
        FallbackTransport chain = new FallbackTransport(List.of(ScriptedTransport.always(open), ScriptedTransport.always(open)));

        assertThat(chain.send(EMAIL, "k1")).isInstanceOfSatisfying(SendResult.NotAttempted.class, n -> {
            assertThat(n.retryAfter()).isEqualTo(Duration.ofSeconds(30));
            // no breaker of this list's own name to wait for: it waits its time
            assertThat(n.byBreaker()).isFalse();
        });
    }

    @Test
    void anAmbiguousResultNeverFailsOver() {
        ScriptedTransport smtp = new ScriptedTransport("smtp", n -> new SendResult.Ambiguous("no reply after DATA"));
        ScriptedTransport http = new ScriptedTransport("http", n -> SENT_HTTP);
        FallbackTransport chain = new FallbackTransport(List.of(smtp, http));

        assertThat(chain.send(EMAIL, "k1")).isInstanceOf(SendResult.Ambiguous.class);
        assertThat(chain.resend(EMAIL, "k1")).isInstanceOf(SendResult.Ambiguous.class);
        assertThat(http.calls).hasValue(0);
    }

    @Test
    void aPermanentRefusalOrAnAfterDataDeferralStaysWithTheProvider() {
        ScriptedTransport smtp = new ScriptedTransport("smtp", n -> n == 0 ? new SendResult.Permanent("smtp-550", "no such user")
                : new SendResult.Transient("smtp-451", "deferred after DATA", null, false, SendResult.Scope.EMAIL));
        ScriptedTransport http = new ScriptedTransport("http", n -> SENT_HTTP);
        FallbackTransport chain = new FallbackTransport(List.of(smtp, http));

        assertThat(chain.send(EMAIL, "k1")).isInstanceOf(SendResult.Permanent.class);
        assertThat(chain.send(EMAIL, "k2")).isInstanceOfSatisfying(SendResult.Transient.class,
                t -> assertThat(t.code()).isEqualTo("smtp-451"));
        assertThat(http.calls).hasValue(0);
    }

    @Test
    void theLastProvidersRefusalIsItsOwnResultAndTheNextAttemptStartsAtTheFirstAgain() {
        ScriptedTransport smtp = new ScriptedTransport("smtp", n -> new SendResult.Transient("smtp-connect", "refused"));
        SendResult.Transient unavailable = new SendResult.Transient("http-503", "unavailable", Duration.ofSeconds(7));
        ScriptedTransport http = new ScriptedTransport("http", n -> unavailable);
        FallbackTransport chain = new FallbackTransport(List.of(smtp, http));

        chain.send(EMAIL, "k1");
        assertThat(chain.send(EMAIL, "k1")).isEqualTo(unavailable);
        chain.send(EMAIL, "k1");
        assertThat(smtp.calls).hasValue(2);
        assertThat(http.calls).hasValue(1);
    }

    @Test
    void aMisconfiguredFirstProviderIsPassedOverAsARecordedRefusal() {
        ScriptedTransport http = new ScriptedTransport("http", n -> new SendResult.Misconfigured("http-401", "bad token"));
        ScriptedTransport smtp = new ScriptedTransport("smtp", n -> new SendResult.Sent("<k1@x>", "{}"));
        FallbackTransport chain = new FallbackTransport(List.of(http, smtp));

        assertThat(chain.send(EMAIL, "k1")).isInstanceOfSatisfying(SendResult.Transient.class,
                t -> assertThat(t.code()).isEqualTo("http-401"));
        assertThat(chain.send(EMAIL, "k1")).isInstanceOf(SendResult.Sent.class);
    }

    @Test
    void needsTwoProviders() {
        assertThatThrownBy(() -> new FallbackTransport(List.of(ScriptedTransport.always(SENT_HTTP))))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("at least two");
    }
}
