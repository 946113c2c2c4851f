package io.mailroom.email.resilience;

import io.github.resilience4j.circuitbreaker.CircuitBreaker;
import io.mailroom.email.TestEmails;
import io.mailroom.email.transport.SendResult;
import org.junit.jupiter.api.Test;

import java.time.Clock;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

/** Policy decisions of {@link ResilientTransport}, with a scripted in-memory transport. */
class ResilientTransportTest {

    static final SendResult SENT = new SendResult.Sent("id-1", "{}");
    static final SendResult TRANSIENT = new SendResult.Transient("http-503", "unavailable");

    static TransportPolicyConfig policy(int attempts, int window, Duration openWait) {
        return TransportPolicyConfig.defaults()
                .withRetry(new TransportPolicyConfig.RetrySettings(attempts, Duration.ofMillis(5), Duration.ofMillis(200)))
                .withBreaker(new TransportPolicyConfig.BreakerSettings(window, window, 50, openWait, 1));
    }

    @Test
    void neverRetriesPermanentAmbiguousMisconfiguredOrPostDataResults() {
        SendResult[] once = {
                new SendResult.Permanent("http-400", "bad"),
                new SendResult.Ambiguous("timeout"),
                new SendResult.Misconfigured("http-401", "token"),
                new SendResult.Transient("smtp-451", "deferred after DATA", null, false)};
        for (SendResult result : once) {
            ScriptedTransport delegate = ScriptedTransport.always(result);
            ResilientTransport t = new ResilientTransport(delegate, policy(3, 10, Duration.ofSeconds(30)));
            assertThat(t.send(TestEmails.sample(), "k")).isEqualTo(result);
            assertThat(delegate.calls.get()).as("calls for %s", result).isEqualTo(1);
        }
    }

    @Test
    void retriesTransientUpToTheLimitAndReturnsTheLastResult() {
        ScriptedTransport delegate = ScriptedTransport.always(TRANSIENT);
        ResilientTransport t = new ResilientTransport(delegate, policy(3, 10, Duration.ofSeconds(30)));
        assertThat(t.send(TestEmails.sample(), "k")).isEqualTo(TRANSIENT);
        assertThat(delegate.calls.get()).isEqualTo(3);
    }

    @Test
    void honoursAShortRetryAfterWithinTheCallButLeavesALongOneToTheOutbox() {
        ScriptedTransport shortHint = new ScriptedTransport("short",
                n -> n == 0 ? new SendResult.Transient("http-429", "slow", Duration.ofMillis(150)) : SENT);
        assertThat(new ResilientTransport(shortHint, policy(3, 10, Duration.ofSeconds(30))).send(TestEmails.sample(), "k")).isEqualTo(SENT);
        assertThat(shortHint.callNanos.get(1) - shortHint.callNanos.get(0)).isGreaterThanOrEqualTo(TimeUnit.MILLISECONDS.toNanos(150));

        SendResult longHint = new SendResult.Transient("http-429", "slow", Duration.ofSeconds(30));
        ScriptedTransport delegate = ScriptedTransport.always(longHint);
        assertThat(new ResilientTransport(delegate, policy(3, 10, Duration.ofSeconds(30))).send(TestEmails.sample(), "k")).isEqualTo(longHint);
        assertThat(delegate.calls.get()).isEqualTo(1);
    }

    @Test
    void permanentResultsDoNotOpenTheBreakerButAmbiguousOnesDo() {
        ResilientTransport permanent = new ResilientTransport(ScriptedTransport.always(new SendResult.Permanent("smtp-550", "no such user")),
                policy(1, 4, Duration.ofSeconds(30)));
        for (int i = 0; i < 10; i++) {
            permanent.send(TestEmails.sample(), "k" + i);
        }
        assertThat(permanent.breakerState()).isEqualTo(CircuitBreaker.State.CLOSED);

        ResilientTransport ambiguous = new ResilientTransport(ScriptedTransport.always(new SendResult.Ambiguous("timeout")),
                policy(1, 4, Duration.ofSeconds(30)));
        for (int i = 0; i < 4; i++) {
            ambiguous.send(TestEmails.sample(), "k" + i);
        }
        assertThat(ambiguous.breakerState()).isEqualTo(CircuitBreaker.State.OPEN);
        assertThat(ambiguous.acceptingWork()).isFalse();
    }

    @Test
    void transientResultsAboutOneEmailAreNotRetriedHereAndDoNotOpenTheBreaker() {
        SendResult greylisted = new SendResult.Transient("smtp-451", "greylisted", null, false, SendResult.Scope.EMAIL);
        ScriptedTransport delegate = ScriptedTransport.always(greylisted);
        ResilientTransport t = new ResilientTransport(delegate, policy(3, 4, Duration.ofSeconds(30)));
        for (int i = 0; i < 12; i++) {
            assertThat(t.send(TestEmails.sample(), "k" + i)).isEqualTo(greylisted);
        }
        assertThat(delegate.calls.get()).isEqualTo(12);
        assertThat(t.breakerState()).isEqualTo(CircuitBreaker.State.CLOSED);
        assertThat(t.acceptingWork()).isTrue();
    }

    @Test
    void whenTheBreakerOpensBetweenTriesTheCallReportsWhatTheProviderLastSaid() {
        ScriptedTransport delegate = ScriptedTransport.always(TRANSIENT);
        ResilientTransport t = new ResilientTransport(delegate, policy(3, 2, Duration.ofSeconds(30)));

        assertThat(t.send(TestEmails.sample(), "k")).isEqualTo(TRANSIENT);
        assertThat(delegate.calls.get()).isEqualTo(2);
        assertThat(t.breakerState()).isEqualTo(CircuitBreaker.State.OPEN);

        SendResult next = t.send(TestEmails.sample(), "k2");
        assertThat(next).isInstanceOf(SendResult.NotAttempted.class);
        // what is left of the open wait, which began a moment ago
        assertThat(((SendResult.NotAttempted) next).retryAfter()).isBetween(Duration.ofSeconds(25), Duration.ofSeconds(30));
        assertThat(next.mayHaveBeenDelivered()).isFalse();
        assertThat(delegate.calls.get()).isEqualTo(2);
    }

    @Test
    void aFailedProbeReopensTheBreaker() {
        ScriptedTransport delegate = ScriptedTransport.always(TRANSIENT);
        ResilientTransport t = new ResilientTransport(delegate, policy(1, 2, Duration.ofMillis(100)));
        t.send(TestEmails.sample(), "a");
        t.send(TestEmails.sample(), "b");
        assertThat(t.breakerState()).isEqualTo(CircuitBreaker.State.OPEN);

        await().atMost(Duration.ofSeconds(5)).until(t::acceptingWork);
        assertThat(t.breakerState()).isEqualTo(CircuitBreaker.State.HALF_OPEN);
        assertThat(t.claimableNow()).isEqualTo(1);
        assertThat(t.send(TestEmails.sample(), "probe")).isEqualTo(TRANSIENT);
        assertThat(t.breakerState()).isEqualTo(CircuitBreaker.State.OPEN);
        assertThat(delegate.calls.get()).isEqualTo(3);
    }

    @Test
    void resendsOfUnknownOutcomesNeitherOpenTheBreakerNorTakeAHalfOpenProbe() {
        SendResult timeout = new SendResult.Ambiguous("read timed out after the message data");
        ScriptedTransport delegate = ScriptedTransport.always(timeout);
        ResilientTransport t = new ResilientTransport(delegate, policy(1, 2, Duration.ofMillis(100)));

        // poison resends time out again and again: the breaker hears nothing of them
        for (int i = 0; i < 5; i++) {
            assertThat(t.resend(TestEmails.sample(), "poison-" + i)).isEqualTo(timeout);
        }
        assertThat(t.breakerState()).isEqualTo(CircuitBreaker.State.CLOSED);
        assertThat(t.circuitBreaker().getMetrics().getNumberOfBufferedCalls()).isZero();

        // first sends decide: two provider failures open it
        t.send(TestEmails.sample(), "a");
        t.send(TestEmails.sample(), "b");
        assertThat(t.breakerState()).isEqualTo(CircuitBreaker.State.OPEN);
        await().atMost(Duration.ofSeconds(5)).until(() -> t.breakerState() == CircuitBreaker.State.HALF_OPEN);

        int calls = delegate.calls.get();
        SendResult heldBack = t.resend(TestEmails.sample(), "poison-0");
        assertThat(heldBack).isInstanceOfSatisfying(SendResult.NotAttempted.class,
                n -> assertThat(n.reason()).contains("HALF_OPEN").contains("waits until it is CLOSED"));
        assertThat(delegate.calls.get()).as("a held-back resend reaches no provider").isEqualTo(calls);
        assertThat(t.claimableNow()).as("the probe is still there for a first send").isEqualTo(1);
        assertThat(t.circuitBreaker().getMetrics().getNumberOfBufferedCalls()).isZero();
    }

    /** A clock the test moves by hand. */
    static final class ManualClock extends Clock {
        volatile java.time.Instant now = java.time.Instant.parse("2026-12-03T09:00:00Z");

        @Override
        public java.time.ZoneId getZone() {
            return java.time.ZoneOffset.UTC;
        }

        @Override
        public Clock withZone(java.time.ZoneId zone) {
            return this;
        }

        @Override
        public java.time.Instant instant() {
            return now;
        }
    }

    @Test
    void aRefusedEmailIsHandedBackForTheRestOfTheOpenWaitNamingTheStateThatRefusedIt() {
        ManualClock clock = new ManualClock();
        ResilientTransport t = new ResilientTransport(ScriptedTransport.always(TRANSIENT), policy(1, 2, Duration.ofSeconds(30)),
                PolicyRegistries.create(), clock);
        t.send(TestEmails.sample(), "a");
        t.send(TestEmails.sample(), "b");
        assertThat(t.breakerState()).isEqualTo(CircuitBreaker.State.OPEN);

        clock.now = clock.now.plusSeconds(22);
        assertThat(t.send(TestEmails.sample(), "c")).isInstanceOfSatisfying(SendResult.NotAttempted.class, n -> {
            assertThat(n.retryAfter()).as("the 8 s left, not another 30 s").isEqualTo(Duration.ofSeconds(8));
            assertThat(n.reason()).endsWith("is OPEN");
        });
        clock.now = clock.now.plusSeconds(60);
        assertThat(((SendResult.NotAttempted) t.send(TestEmails.sample(), "d")).retryAfter()).isEqualTo(Duration.ZERO);
    }

    @Test
    void theBreakerSaysWhenItLetsCallsThroughAgainAndItsRefusalsSayTheyAreItsOwn() {
        ScriptedTransport delegate = new ScriptedTransport("relay",
                n -> n < 2 ? TRANSIENT : n == 2 ? new SendResult.Misconfigured("smtp-535", "authentication failed") : SENT);
        ResilientTransport t = new ResilientTransport(delegate, policy(1, 2, Duration.ofSeconds(30)));
        java.util.concurrent.atomic.AtomicInteger allowed = new java.util.concurrent.atomic.AtomicInteger();
        t.onCallsAllowedAgain(allowed::incrementAndGet);
        t.send(TestEmails.sample(), "a");
        t.send(TestEmails.sample(), "b");
        assertThat(t.breakerState()).isEqualTo(CircuitBreaker.State.OPEN);
        assertThat(allowed).as("opening allows nothing").hasValue(0);
        assertThat(t.send(TestEmails.sample(), "c")).isInstanceOfSatisfying(SendResult.NotAttempted.class,
                n -> assertThat(n.byBreaker()).isTrue());

        t.circuitBreaker().transitionToHalfOpenState();
        assertThat(allowed).hasValue(1);
        assertThat(t.send(TestEmails.sample(), "d")).as("the probe meets a misconfiguration")
                .isInstanceOf(SendResult.Misconfigured.class);
        assertThat(t.breakerState()).isEqualTo(CircuitBreaker.State.FORCED_OPEN);
        assertThat(allowed).as("a halt allows nothing").hasValue(1);
        assertThat(t.send(TestEmails.sample(), "e")).isInstanceOfSatisfying(SendResult.NotAttempted.class,
                n -> assertThat(n.byBreaker()).as("held open by the halt").isTrue());

        t.resume();
        assertThat(allowed).as("the operator's resume closes it").hasValue(2);
        assertThat(t.send(TestEmails.sample(), "e")).isEqualTo(SENT);
    }

    @Test
    void misconfigurationHaltsTheTransportUntilAnOperatorResumesIt() {
        ScriptedTransport delegate = new ScriptedTransport("http",
                n -> n == 0 ? new SendResult.Misconfigured("http-401", "HTTP 401: invalid api key") : SENT);
        ResilientTransport t = new ResilientTransport(delegate, policy(3, 10, Duration.ofMillis(50)));

        SendResult first = t.send(TestEmails.sample(), "k1");
        assertThat(first).isInstanceOf(SendResult.Misconfigured.class);
        assertThat(t.halted()).hasValueSatisfying(h -> assertThat(h.code()).isEqualTo("http-401"));
        assertThat(t.breakerState()).isEqualTo(CircuitBreaker.State.FORCED_OPEN);

        // Stays halted well past the breaker's open wait: only an operator ends it.
        await().during(Duration.ofMillis(200)).atMost(Duration.ofSeconds(2)).until(() -> !t.acceptingWork());
        SendResult refused = t.send(TestEmails.sample(), "k2");
        assertThat(refused).isInstanceOf(SendResult.NotAttempted.class);
        assertThat(((SendResult.NotAttempted) refused).reason()).contains("halted").contains("http-401");
        assertThat(delegate.calls.get()).isEqualTo(1);

        t.resume();
        assertThat(t.halted()).isEmpty();
        assertThat(t.acceptingWork()).isTrue();
        assertThat(t.send(TestEmails.sample(), "k2")).isEqualTo(SENT);
    }

    @Test
    void aFullBulkheadAnswersNotAttempted() throws Exception {
        CountDownLatch inside = new CountDownLatch(1);
        CountDownLatch release = new CountDownLatch(1);
        ScriptedTransport delegate = new ScriptedTransport("slow", n -> {
            inside.countDown();
            try {
                release.await(5, TimeUnit.SECONDS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
            return SENT;
        });
        ResilientTransport t = new ResilientTransport(delegate, policy(1, 10, Duration.ofSeconds(30))
                .withBulkhead(new TransportPolicyConfig.BulkheadSettings(1, Duration.ZERO)));

        CompletableFuture<SendResult> first = CompletableFuture.supplyAsync(() -> t.send(TestEmails.sample(), "k1"));
        assertThat(inside.await(5, TimeUnit.SECONDS)).isTrue();
        SendResult second = t.send(TestEmails.sample(), "k2");
        release.countDown();

        assertThat(second).isInstanceOf(SendResult.NotAttempted.class);
        assertThat(((SendResult.NotAttempted) second).reason()).contains("bulkhead");
        assertThat(((SendResult.NotAttempted) second).byBreaker()).as("not the breaker's: nothing to wake it").isFalse();
        assertThat(first.get(5, TimeUnit.SECONDS)).isEqualTo(SENT);
        assertThat(delegate.calls.get()).isEqualTo(1);
    }

    @Test
    void theRateLimiterRefusesBeyondItsRate() {
        ScriptedTransport delegate = ScriptedTransport.always(SENT);
        ResilientTransport t = new ResilientTransport(delegate, policy(1, 10, Duration.ofSeconds(30))
                .withRateLimit(new TransportPolicyConfig.RateLimitSettings(1, Duration.ZERO)));
        assertThat(t.send(TestEmails.sample(), "k1")).isEqualTo(SENT);
        SendResult second = t.send(TestEmails.sample(), "k2");
        assertThat(second).isInstanceOf(SendResult.NotAttempted.class);
        assertThat(((SendResult.NotAttempted) second).reason()).contains("rate limit");
        assertThat(delegate.calls.get()).isEqualTo(1);
        assertThat(t.breakerState()).isEqualTo(CircuitBreaker.State.CLOSED);
    }

    @Test
    void aTransportThatThrowsIsTreatedAsAmbiguous() {
        ResilientTransport t = new ResilientTransport(new ScriptedTransport("buggy", n -> {
            throw new IllegalStateException("bug");
        }), policy(3, 10, Duration.ofSeconds(30)));
        assertThat(t.send(TestEmails.sample(), "k")).isInstanceOf(SendResult.Ambiguous.class);
    }

    @Test
    void transportNamesMustBeUniqueWithinSharedRegistries() {
        PolicyRegistries shared = PolicyRegistries.create();
        new ResilientTransport(ScriptedTransport.always(SENT), TransportPolicyConfig.defaults(), shared, Clock.systemUTC());
        assertThatThrownBy(() -> new ResilientTransport(ScriptedTransport.always(SENT), TransportPolicyConfig.defaults(), shared, Clock.systemUTC()))
                .isInstanceOf(IllegalStateException.class).hasMessageContaining("scripted");
    }
}
