package io.mailroom.email.resilience;

import io.github.resilience4j.bulkhead.Bulkhead;
import io.github.resilience4j.circuitbreaker.CircuitBreaker;
import io.github.resilience4j.ratelimiter.RateLimiter;
import io.github.resilience4j.retry.Retry;
import io.mailroom.email.Email;
import io.mailroom.email.transport.MailTransport;
import io.mailroom.email.transport.SendResult;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;

/**
 * Wraps one transport in Resilience4j policies and tells the dispatcher whether to claim work for
 * it at all. Per {@link #send} call:
 *
 * <ol>
 *   <li>a halted transport, or a full {@link Bulkhead}, answers {@link SendResult.NotAttempted};</li>
 *   <li>a {@link Retry} repeats {@link SendResult.Transient} results that allow it, a bounded number
 *       of times, with short exponential pauses (honouring a provider's {@code Retry-After} only if
 *       it fits within {@code MAILROOM_RETRY_MAX_WAIT}); ambiguous, permanent and misconfigured
 *       results are never retried here;</li>
 *   <li>each try asks the {@link CircuitBreaker} (and the optional {@link RateLimiter}) for a permit;
 *       only provider-wide results count as breaker failures: ambiguous ones, and transient ones of
 *       {@link SendResult.Scope#PROVIDER} scope (no connection, timeouts, SMTP 421, TLS, HTTP 5xx).
 *       Sent, permanent and transient results about one email ({@link SendResult.Scope#EMAIL}, e.g.
 *       a greylisting 451 at RCPT) are successes: the provider answered, and one mailbox must not
 *       open the breaker for every other customer.</li>
 * </ol>
 *
 * <p><b>Misconfigured</b> (HTTP 401/403, SMTP authentication failure) <b>halts</b> the transport:
 * a flag, with its reason, that only {@link #resume()} clears, so an operator must act (fix
 * credentials, then resume or restart). The breaker is also forced open ({@code FORCED_OPEN},
 * which Resilience4j never leaves by itself), so the halt shows in breaker metrics; the flag is
 * checked first, so nothing that closes the breaker from outside ends a halt by accident. A plain
 * open breaker would half-open after its wait and burn real messages on probes that cannot succeed.
 *
 * <p>{@link SendResult.NotAttempted} means the provider was not asked during this call: the caller
 * should hand the message back without counting the attempt. If earlier tries of the same call did
 * reach the provider, their last result is returned instead.
 *
 * <p>This class decorates the calls; the Resilience4j instances are made by {@link TransportPolicies}
 * and the health the dispatcher asks about (halt, session refusal, what may be claimed, when a
 * refused email may come back) is kept by {@link TransportHealth}.
 */
public final class ResilientTransport implements MailTransport {

    private static final Logger log = LoggerFactory.getLogger(ResilientTransport.class);

    private final MailTransport delegate;
    private final TransportPolicyConfig config;
    private final CircuitBreaker breaker;
    private final Retry retry;
    private final Bulkhead bulkhead;
    private final RateLimiter rateLimiter;
    private final TransportHealth health;

    /** Why and when a transport was halted. */
    public record Halt(String code, String error, Instant at) {
    }

    /** A refusal of the session: the result's code and text (which says what to change), and since when. */
    public record Refusal(String code, String error, Instant since) {
    }

    public ResilientTransport(MailTransport delegate, TransportPolicyConfig config) {
        this(delegate, config, PolicyRegistries.create(), Clock.systemUTC());
    }

    public ResilientTransport(MailTransport delegate, TransportPolicyConfig config, PolicyRegistries registries, Clock clock) {
        this.delegate = Objects.requireNonNull(delegate, "delegate");
        this.config = Objects.requireNonNull(config, "config");
        Objects.requireNonNull(clock, "clock");
        TransportPolicies policies = TransportPolicies.create(delegate.name(), config, registries);
        this.breaker = policies.breaker();
        this.retry = policies.retry();
        this.bulkhead = policies.bulkhead();
        this.rateLimiter = policies.rateLimiter();
        this.health = new TransportHealth(delegate.name(), config, clock, breaker);
    }

    @Override
    public String name() {
        return delegate.name();
    }

    @Override
    public SendResult send(Email email, String idempotencyKey) {
        return call(email, idempotencyKey, true);
    }

    /**
     * Sends again an email whose earlier send has an unknown outcome. Such a resend says nothing
     * about the provider's health: a poison message that times out on every send would open the
     * breaker on its own. So its result is not recorded by the breaker, and it takes no permit:
     * only while the breaker is CLOSED does it go out at all. While HALF_OPEN (or OPEN) it is held
     * back, so the few probes decide on emails whose outcome is known, and a resend never takes
     * the place of one. A misconfiguration it meets still halts the transport.
     */
    @Override
    public SendResult resend(Email email, String idempotencyKey) {
        CircuitBreaker.State state = breaker.getState();
        if (health.halt() == null && !TransportHealth.permits(state)) {
            return resendHeldBack(state);
        }
        return call(email, idempotencyKey, false);
    }

    private SendResult.NotAttempted resendHeldBack(CircuitBreaker.State state) {
        return new SendResult.NotAttempted("circuit breaker of transport " + name() + " is " + state
                + ": a resend of an unknown outcome waits until it is CLOSED", config.breaker().openWait(), true);
    }

    private SendResult call(Email email, String idempotencyKey, boolean counted) {
        Halt h = health.halt();
        if (h != null) {
            return health.halted(h);
        }
        if (!bulkhead.tryAcquirePermission()) {
            return new SendResult.NotAttempted("transport " + name() + " has " + config.bulkhead().maxConcurrent()
                    + " sends in progress (bulkhead full)", null);
        }
        try {
            AtomicReference<SendResult> lastAnswered = new AtomicReference<>();
            SendResult result = Retry.decorateSupplier(retry, () -> counted
                    ? tryOnce(email, idempotencyKey, lastAnswered) : tryUncounted(email, idempotencyKey, lastAnswered)).get();
            if (result instanceof SendResult.NotAttempted && lastAnswered.get() != null) {
                // The breaker opened (or the transport halted) between tries of this call: report
                // what the provider last said, not "nothing was attempted".
                return lastAnswered.get();
            }
            return result;
        } finally {
            bulkhead.onComplete();
        }
    }

    /** One try outside the breaker: it is asked nothing and told nothing, except that a halt still halts. */
    private SendResult tryUncounted(Email email, String idempotencyKey, AtomicReference<SendResult> lastAnswered) {
        Halt h = health.halt();
        if (h != null) {
            return health.halted(h);
        }
        CircuitBreaker.State state = breaker.getState();
        if (!TransportHealth.permits(state)) {
            // opened between tries of this call: what HALF_OPEN lets through is for probes
            return resendHeldBack(state);
        }
        if (rateLimiter != null && !rateLimiter.acquirePermission()) {
            return rateLimited();
        }
        SendResult result = sendThroughDelegate(email, idempotencyKey);
        if (result instanceof SendResult.Misconfigured m) {
            health.halt(m);
        } else if (result instanceof SendResult.Transient t && t.scope() == SendResult.Scope.SESSION) {
            result = health.sessionRefused(t);
        } else if (result instanceof SendResult.Sent) {
            health.clearRefusal();
        }
        if (!(result instanceof SendResult.NotAttempted)) {
            lastAnswered.set(result);
        }
        return result;
    }

    private SendResult.NotAttempted rateLimited() {
        return new SendResult.NotAttempted("rate limit of transport " + name() + " (" + config.rateLimit().perSecond()
                + "/s) not available within " + config.rateLimit().timeout().toMillis() + " ms", Duration.ofSeconds(1));
    }

    private SendResult sendThroughDelegate(Email email, String idempotencyKey) {
        try {
            return delegate.send(email, idempotencyKey);
        } catch (RuntimeException e) {
            // The contract says transports classify instead of throwing; if one throws anyway we
            // cannot know whether the provider got the email.
            log.error("Transport {} threw instead of returning a result", name(), e);
            return new SendResult.Ambiguous("transport " + name() + " failed unexpectedly: " + e.getClass().getName());
        }
    }

    private SendResult tryOnce(Email email, String idempotencyKey, AtomicReference<SendResult> lastAnswered) {
        Halt h = health.halt();
        if (h != null) {
            return health.halted(h);
        }
        CircuitBreaker.State before = breaker.getState();
        if (!breaker.tryAcquirePermission()) {
            // the state that refused: read before asking, since a probe may close the breaker a
            // moment later ("... is CLOSED" was logged for refusals of an open breaker)
            CircuitBreaker.State refusedBy = TransportHealth.permits(before) ? breaker.getState() : before;
            return new SendResult.NotAttempted("circuit breaker of transport " + name() + " is " + refusedBy,
                    health.nextCallAllowedIn(refusedBy), true);
        }
        if (rateLimiter != null && !rateLimiter.acquirePermission()) {
            breaker.releasePermission();
            return rateLimited();
        }
        long start = System.nanoTime();
        health.sendStarted();
        SendResult result;
        try {
            result = sendThroughDelegate(email, idempotencyKey);
        } finally {
            health.sendEnded();
        }
        long elapsed = System.nanoTime() - start;
        switch (result) {
            case SendResult.Sent ignored -> {
                breaker.onSuccess(elapsed, TimeUnit.NANOSECONDS);
                health.clearRefusal();
            }
            case SendResult.Permanent ignored -> breaker.onSuccess(elapsed, TimeUnit.NANOSECONDS);
            // A reply about one email (greylisting at RCPT, a key still in progress) came from a
            // provider that is up and answering; it must not hold back everyone else's email.
            case SendResult.Transient t when t.scope() == SendResult.Scope.EMAIL -> breaker.onSuccess(elapsed, TimeUnit.NANOSECONDS);
            case SendResult.Transient t when t.scope() == SendResult.Scope.SESSION -> {
                breaker.releasePermission();
                result = health.sessionRefused(t);
            }
            case SendResult.Transient t -> breaker.onError(elapsed, TimeUnit.NANOSECONDS, new ProviderFailure(t.code()));
            case SendResult.Ambiguous ignored -> breaker.onError(elapsed, TimeUnit.NANOSECONDS, new ProviderFailure("ambiguous"));
            case SendResult.Misconfigured m -> {
                breaker.releasePermission();
                health.halt(m);
            }
            case SendResult.NotAttempted ignored -> breaker.releasePermission();
        }
        if (!(result instanceof SendResult.NotAttempted)) {
            lastAnswered.set(result);
        }
        return result;
    }

    /**
     * True when the dispatcher may claim messages for this transport: not halted, and the breaker
     * is closed, or half-open with probe permits left. While false, claiming would only burn
     * attempts of healthy messages.
     */
    public boolean acceptingWork() {
        return claimableNow() > 0;
    }

    /**
     * How many messages the dispatcher may claim for this transport now: unbounded
     * ({@link Integer#MAX_VALUE}) while closed, the probe permits left while half-open, 0 while
     * open or halted. Lets half-open pass a small probe batch instead of the whole backlog.
     */
    public int claimableNow() {
        return health.claimableNow();
    }

    /**
     * Runs {@code action} each time the breaker starts letting calls through again: to HALF_OPEN
     * after its open wait, to CLOSED after good probes or an operator's {@link #resume()}. It runs
     * on the thread that moved the breaker (a send finishing, or Resilience4j's timer), so it must
     * return at once and hand any work to a thread of its own.
     */
    public void onCallsAllowedAgain(Runnable action) {
        health.onCallsAllowedAgain(action);
    }

    public CircuitBreaker.State breakerState() {
        return breaker.getState();
    }

    /**
     * Why the server last refused our session (HELO name, relaying, authentication: see
     * {@link SendResult.Scope#SESSION}), until a send is accepted again; readiness reports it.
     */
    public Optional<Refusal> sessionRefusal() {
        return health.refusal();
    }

    /** The reason this transport is halted, if it is. */
    public Optional<Halt> halted() {
        return Optional.ofNullable(health.halt());
    }

    /** Operator action after fixing the configuration: clears the halt and closes the breaker. */
    public void resume() {
        health.resume();
    }

    public CircuitBreaker circuitBreaker() {
        return breaker;
    }

    public Retry retry() {
        return retry;
    }

    public Bulkhead bulkhead() {
        return bulkhead;
    }

    public Optional<RateLimiter> rateLimiter() {
        return Optional.ofNullable(rateLimiter);
    }

    public MailTransport delegate() {
        return delegate;
    }

    @Override
    public void close() {
        delegate.close();
    }

    /** What the breaker records for a transient or ambiguous result; carries only the result code. */
    static final class ProviderFailure extends RuntimeException {
        private static final long serialVersionUID = 1L;

        ProviderFailure(String code) {
            super(code, null, false, false);
        }
    }
}
