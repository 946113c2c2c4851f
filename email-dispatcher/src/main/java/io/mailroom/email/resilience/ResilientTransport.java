package io.mailroom.email.resilience;

import io.github.resilience4j.bulkhead.Bulkhead;
import io.github.resilience4j.bulkhead.BulkheadConfig;
import io.github.resilience4j.circuitbreaker.CircuitBreaker;
import io.github.resilience4j.circuitbreaker.CircuitBreakerConfig;
import io.github.resilience4j.core.functions.Either;
import io.github.resilience4j.ratelimiter.RateLimiter;
import io.github.resilience4j.ratelimiter.RateLimiterConfig;
import io.github.resilience4j.retry.Retry;
import io.github.resilience4j.retry.RetryConfig;
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
import java.util.concurrent.atomic.AtomicInteger;
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
 */
public final class ResilientTransport implements MailTransport {

    private static final Logger log = LoggerFactory.getLogger(ResilientTransport.class);

    private final MailTransport delegate;
    private final TransportPolicyConfig config;
    private final Clock clock;
    private final CircuitBreaker breaker;
    private final Retry retry;
    private final Bulkhead bulkhead;
    private final RateLimiter rateLimiter;
    private final AtomicInteger inFlight = new AtomicInteger();
    private final AtomicReference<Halt> halt = new AtomicReference<>();
    private final AtomicReference<Refusal> refusal = new AtomicReference<>();
    /** When the breaker last went OPEN, by {@link #clock}; null before it ever did. */
    private volatile Instant openedAt;
    private static final Duration HALF_OPEN_RECHECK = Duration.ofSeconds(1);

    /** Why and when a transport was halted. */
    public record Halt(String code, String error, Instant at) {
    }

    public ResilientTransport(MailTransport delegate, TransportPolicyConfig config) {
        this(delegate, config, PolicyRegistries.create(), Clock.systemUTC());
    }

    public ResilientTransport(MailTransport delegate, TransportPolicyConfig config, PolicyRegistries registries, Clock clock) {
        this.delegate = Objects.requireNonNull(delegate, "delegate");
        this.config = Objects.requireNonNull(config, "config");
        this.clock = Objects.requireNonNull(clock, "clock");
        String name = delegate.name();
        if (registries.circuitBreakers().find(name).isPresent()) {
            throw new IllegalStateException("a circuit breaker named '" + name + "' already exists; transport names must be unique");
        }
        TransportPolicyConfig.BreakerSettings b = config.breaker();
        this.breaker = registries.circuitBreakers().circuitBreaker(name, CircuitBreakerConfig.custom()
                .slidingWindow(b.window(), b.minimumCalls(), CircuitBreakerConfig.SlidingWindowType.COUNT_BASED)
                .failureRateThreshold(b.failureRatePercent())
                .waitDurationInOpenState(b.openWait())
                .permittedNumberOfCallsInHalfOpenState(b.halfOpenCalls())
                // Without it the breaker would stay OPEN until someone calls, and the dispatcher
                // (which asks acceptingWork() before claiming) would never call.
                .automaticTransitionFromOpenToHalfOpenEnabled(true)
                .writableStackTraceEnabled(false)
                .build());
        this.retry = registries.retries().retry(name, RetryConfig.<SendResult>custom()
                .maxAttempts(config.retry().attempts())
                .retryOnResult(this::retryWithinCall)
                .retryOnException(e -> false)
                .intervalBiFunction(this::pauseMillis)
                .writableStackTraceEnabled(false)
                .build());
        this.bulkhead = registries.bulkheads().bulkhead(name, BulkheadConfig.custom()
                .maxConcurrentCalls(config.bulkhead().maxConcurrent())
                .maxWaitDuration(config.bulkhead().maxWait())
                .writableStackTraceEnabled(false)
                .build());
        this.rateLimiter = !config.rateLimit().enabled() ? null : registries.rateLimiters().rateLimiter(name, RateLimiterConfig.custom()
                .limitForPeriod(config.rateLimit().perSecond())
                .limitRefreshPeriod(Duration.ofSeconds(1))
                .timeoutDuration(config.rateLimit().timeout())
                .writableStackTraceEnabled(false)
                .build());
        breaker.getEventPublisher().onStateTransition(e -> {
            if (e.getStateTransition().getToState() == CircuitBreaker.State.OPEN) {
                openedAt = clock.instant();
            }
            log.warn("Circuit breaker of transport {}: {}", name, e.getStateTransition());
        });
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
        if (halt.get() == null && state != CircuitBreaker.State.CLOSED && state != CircuitBreaker.State.DISABLED
                && state != CircuitBreaker.State.METRICS_ONLY) {
            return new SendResult.NotAttempted("circuit breaker of transport " + name() + " is " + state
                    + ": a resend of an unknown outcome waits until it is CLOSED", config.breaker().openWait());
        }
        return call(email, idempotencyKey, false);
    }

    private SendResult call(Email email, String idempotencyKey, boolean counted) {
        Halt h = halt.get();
        if (h != null) {
            return halted(h);
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
        Halt h = halt.get();
        if (h != null) {
            return halted(h);
        }
        if (breaker.getState() != CircuitBreaker.State.CLOSED && breaker.getState() != CircuitBreaker.State.DISABLED
                && breaker.getState() != CircuitBreaker.State.METRICS_ONLY) {
            // opened between tries of this call: what HALF_OPEN lets through is for probes
            return new SendResult.NotAttempted("circuit breaker of transport " + name() + " is " + breaker.getState()
                    + ": a resend of an unknown outcome waits until it is CLOSED", config.breaker().openWait());
        }
        if (rateLimiter != null && !rateLimiter.acquirePermission()) {
            return new SendResult.NotAttempted("rate limit of transport " + name() + " (" + config.rateLimit().perSecond()
                    + "/s) not available within " + config.rateLimit().timeout().toMillis() + " ms", Duration.ofSeconds(1));
        }
        SendResult result = sendThroughDelegate(email, idempotencyKey);
        if (result instanceof SendResult.Misconfigured m) {
            halt(m);
        } else if (result instanceof SendResult.Transient t && t.scope() == SendResult.Scope.SESSION) {
            result = sessionRefused(t);
        } else if (result instanceof SendResult.Sent) {
            clearRefusal();
        }
        if (!(result instanceof SendResult.NotAttempted)) {
            lastAnswered.set(result);
        }
        return result;
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
        Halt h = halt.get();
        if (h != null) {
            return halted(h);
        }
        CircuitBreaker.State before = breaker.getState();
        if (!breaker.tryAcquirePermission()) {
            // the state that refused: read before asking, since a probe may close the breaker a
            // moment later ("... is CLOSED" was logged for refusals of an open breaker)
            CircuitBreaker.State refusedBy = permits(before) ? breaker.getState() : before;
            return new SendResult.NotAttempted("circuit breaker of transport " + name() + " is " + refusedBy,
                    nextCallAllowedIn(refusedBy));
        }
        if (rateLimiter != null && !rateLimiter.acquirePermission()) {
            breaker.releasePermission();
            return new SendResult.NotAttempted("rate limit of transport " + name() + " (" + config.rateLimit().perSecond()
                    + "/s) not available within " + config.rateLimit().timeout().toMillis() + " ms", Duration.ofSeconds(1));
        }
        long start = System.nanoTime();
        inFlight.incrementAndGet();
        SendResult result;
        try {
            result = sendThroughDelegate(email, idempotencyKey);
        } finally {
            inFlight.decrementAndGet();
        }
        long elapsed = System.nanoTime() - start;
        switch (result) {
            case SendResult.Sent ignored -> {
                breaker.onSuccess(elapsed, TimeUnit.NANOSECONDS);
                clearRefusal();
            }
            case SendResult.Permanent ignored -> breaker.onSuccess(elapsed, TimeUnit.NANOSECONDS);
            // A reply about one email (greylisting at RCPT, a key still in progress) came from a
            // provider that is up and answering; it must not hold back everyone else's email.
            case SendResult.Transient t when t.scope() == SendResult.Scope.EMAIL -> breaker.onSuccess(elapsed, TimeUnit.NANOSECONDS);
            case SendResult.Transient t when t.scope() == SendResult.Scope.SESSION -> {
                breaker.releasePermission();
                result = sessionRefused(t);
            }
            case SendResult.Transient t -> breaker.onError(elapsed, TimeUnit.NANOSECONDS, new ProviderFailure(t.code()));
            case SendResult.Ambiguous ignored -> breaker.onError(elapsed, TimeUnit.NANOSECONDS, new ProviderFailure("ambiguous"));
            case SendResult.Misconfigured m -> {
                breaker.releasePermission();
                halt(m);
            }
            case SendResult.NotAttempted ignored -> breaker.releasePermission();
        }
        if (!(result instanceof SendResult.NotAttempted)) {
            lastAnswered.set(result);
        }
        return result;
    }

    private static boolean permits(CircuitBreaker.State state) {
        return state == CircuitBreaker.State.CLOSED || state == CircuitBreaker.State.DISABLED
                || state == CircuitBreaker.State.METRICS_ONLY;
    }

    /**
     * When a refused email may be tried again: while OPEN, the rest of the open wait (from the
     * moment it opened, by this transport's clock), not the whole wait again, so emails handed back
     * just before HALF_OPEN are not claimed a full open wait later behind the backlog; while
     * HALF_OPEN, a second (the probes decide soon, and the gate lets through only what they allow).
     */
    Duration nextCallAllowedIn(CircuitBreaker.State refusedBy) {
        Duration openWait = config.breaker().openWait();
        return switch (refusedBy) {
            case OPEN -> {
                Instant opened = openedAt;
                if (opened == null) {
                    yield openWait;
                }
                Duration left = Duration.between(clock.instant(), opened.plus(openWait));
                yield left.isNegative() ? Duration.ZERO : left;
            }
            case HALF_OPEN -> HALF_OPEN_RECHECK.compareTo(openWait) < 0 ? HALF_OPEN_RECHECK : openWait;
            default -> openWait;
        };
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
        if (halt.get() != null) {
            return 0;
        }
        return switch (breaker.getState()) {
            case CLOSED, DISABLED, METRICS_ONLY -> Integer.MAX_VALUE;
            case HALF_OPEN -> Math.max(0, config.breaker().halfOpenCalls() - breaker.getMetrics().getNumberOfBufferedCalls() - inFlight.get());
            case OPEN, FORCED_OPEN -> 0;
        };
    }

    public CircuitBreaker.State breakerState() {
        return breaker.getState();
    }

    /**
     * Why the server last refused our session (HELO name, relaying, authentication: see
     * {@link SendResult.Scope#SESSION}), until a send is accepted again; readiness reports it.
     */
    public Optional<Refusal> sessionRefusal() {
        return Optional.ofNullable(refusal.get());
    }

    /** A refusal of the session: the result's code and text (which says what to change), and since when. */
    public record Refusal(String code, String error, Instant since) {
    }

    /**
     * The server refused the session, so it would refuse every email the same way: the breaker is
     * opened (claims stop; after {@code MAILROOM_BREAKER_OPEN_WAIT} a half-open probe tries again,
     * so a fixed relay is found without a restart) and the result comes back with that wait as its
     * retry-after, for the email to be handed back uncounted. Logged once per episode, at error,
     * with what to change.
     */
    private SendResult sessionRefused(SendResult.Transient t) {
        Refusal previous = refusal.get();
        Refusal now = new Refusal(t.code(), t.error(), previous == null ? clock.instant() : previous.since());
        refusal.set(now);
        if (previous == null || !previous.code().equals(t.code())) {
            log.error("Transport {} paused: {} {}. Emails wait (not counted as attempts); a probe retries every {}.",
                    name(), t.code(), t.error(), config.breaker().openWait());
        }
        CircuitBreaker.State state = breaker.getState();
        if (state == CircuitBreaker.State.CLOSED || state == CircuitBreaker.State.HALF_OPEN) {
            try {
                breaker.transitionToOpenState();
            } catch (RuntimeException raced) {
                // another send opened it first
            }
        }
        return new SendResult.Transient(t.code(), t.error(), config.breaker().openWait(), false, SendResult.Scope.SESSION);
    }

    private void clearRefusal() {
        Refusal previous = refusal.getAndSet(null);
        if (previous != null) {
            log.warn("Transport {}: the server accepts our session again (it refused it since {} with {})", name(),
                    previous.since(), previous.code());
        }
    }

    /** The reason this transport is halted, if it is. */
    public Optional<Halt> halted() {
        return Optional.ofNullable(halt.get());
    }

    /** Operator action after fixing the configuration: clears the halt and closes the breaker. */
    public void resume() {
        Halt previous = halt.getAndSet(null);
        refusal.set(null);
        breaker.transitionToClosedState();
        if (previous != null) {
            log.warn("Transport {} resumed by an operator (it was halted since {} by {})", name(), previous.at(), previous.code());
        }
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

    private void halt(SendResult.Misconfigured m) {
        Halt h = new Halt(m.code(), m.error(), clock.instant());
        if (halt.compareAndSet(null, h)) {
            breaker.transitionToForcedOpenState();
            log.error("Transport {} halted: {} {}. Nothing more is sent through it until an operator fixes the configuration and resumes it.",
                    name(), m.code(), m.error());
        }
    }

    private SendResult.NotAttempted halted(Halt h) {
        return new SendResult.NotAttempted("transport " + name() + " is halted since " + h.at() + " (" + h.code() + ")", null);
    }

    private boolean retryWithinCall(SendResult result) {
        return result instanceof SendResult.Transient t
                && t.retryableInAttempt()
                && (t.retryAfter() == null || t.retryAfter().compareTo(config.retry().maxWait()) <= 0);
    }

    private long pauseMillis(int attempt, Either<Throwable, SendResult> outcome) {
        long base = config.retry().initialWait().toMillis();
        long max = config.retry().maxWait().toMillis();
        long pause = Math.min(max, base << Math.min(attempt - 1, 20));
        if (outcome.isRight() && outcome.get() instanceof SendResult.Transient t && t.retryAfter() != null) {
            pause = Math.max(pause, Math.min(max, t.retryAfter().toMillis()));
        }
        return pause;
    }

    /** What the breaker records for a transient or ambiguous result; carries only the result code. */
    static final class ProviderFailure extends RuntimeException {
        private static final long serialVersionUID = 1L;

        ProviderFailure(String code) {
            super(code, null, false, false);
        }
    }
}
