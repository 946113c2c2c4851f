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
import io.mailroom.email.transport.SendResult;

import java.time.Duration;

/**
 * The Resilience4j instances of one transport, made from its {@link TransportPolicyConfig} in the
 * shared {@link PolicyRegistries} under the transport's name (so their metrics carry it). The rate
 * limiter is null when rate limiting is off.
 */
record TransportPolicies(CircuitBreaker breaker, Retry retry, Bulkhead bulkhead, RateLimiter rateLimiter) {

    static TransportPolicies create(String name, TransportPolicyConfig config, PolicyRegistries registries) {
        if (registries.circuitBreakers().find(name).isPresent()) {
            throw new IllegalStateException("a circuit breaker named '" + name + "' already exists; transport names must be unique");
        }
        TransportPolicyConfig.BreakerSettings b = config.breaker();
        CircuitBreaker breaker = registries.circuitBreakers().circuitBreaker(name, CircuitBreakerConfig.custom()
                .slidingWindow(b.window(), b.minimumCalls(), CircuitBreakerConfig.SlidingWindowType.COUNT_BASED)
                .failureRateThreshold(b.failureRatePercent())
                .waitDurationInOpenState(b.openWait())
                .permittedNumberOfCallsInHalfOpenState(b.halfOpenCalls())
                // Without it the breaker would stay OPEN until someone calls, and the dispatcher
                // (which asks acceptingWork() before claiming) would never call.
                .automaticTransitionFromOpenToHalfOpenEnabled(true)
                .writableStackTraceEnabled(false)
                .build());
        Retry retry = registries.retries().retry(name, RetryConfig.<SendResult>custom()
                .maxAttempts(config.retry().attempts())
                .retryOnResult(result -> retryWithinCall(config, result))
                .retryOnException(e -> false)
                .intervalBiFunction((attempt, outcome) -> pauseMillis(config, attempt, outcome))
                .writableStackTraceEnabled(false)
                .build());
        Bulkhead bulkhead = registries.bulkheads().bulkhead(name, BulkheadConfig.custom()
                .maxConcurrentCalls(config.bulkhead().maxConcurrent())
                .maxWaitDuration(config.bulkhead().maxWait())
                .writableStackTraceEnabled(false)
                .build());
        RateLimiter rateLimiter = !config.rateLimit().enabled() ? null : registries.rateLimiters().rateLimiter(name, RateLimiterConfig.custom()
                .limitForPeriod(config.rateLimit().perSecond())
                .limitRefreshPeriod(Duration.ofSeconds(1))
                .timeoutDuration(config.rateLimit().timeout())
                .writableStackTraceEnabled(false)
                .build());
        return new TransportPolicies(breaker, retry, bulkhead, rateLimiter);
    }

    /** Only transient results that allow it, and whose Retry-After (if any) fits within MAILROOM_RETRY_MAX_WAIT. */
    private static boolean retryWithinCall(TransportPolicyConfig config, SendResult result) {
        return result instanceof SendResult.Transient t
                && t.retryableInAttempt()
                && (t.retryAfter() == null || t.retryAfter().compareTo(config.retry().maxWait()) <= 0);
    }

    private static long pauseMillis(TransportPolicyConfig config, int attempt, Either<Throwable, SendResult> outcome) {
        long base = config.retry().initialWait().toMillis();
        long max = config.retry().maxWait().toMillis();
        long pause = Math.min(max, base << Math.min(attempt - 1, 20));
        if (outcome.isRight() && outcome.get() instanceof SendResult.Transient t && t.retryAfter() != null) {
            pause = Math.max(pause, Math.min(max, t.retryAfter().toMillis()));
        }
        return pause;
    }
}
