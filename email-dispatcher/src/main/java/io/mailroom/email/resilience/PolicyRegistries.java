package io.mailroom.email.resilience;

import io.github.resilience4j.bulkhead.BulkheadRegistry;
import io.github.resilience4j.circuitbreaker.CircuitBreakerRegistry;
import io.github.resilience4j.ratelimiter.RateLimiterRegistry;
import io.github.resilience4j.retry.RetryRegistry;

import java.util.Objects;

/**
 * The Resilience4j registries in which {@link ResilientTransport} creates its instances, named
 * after the transport. Share one set across transports and bind it to Micrometer
 * ({@code TaggedCircuitBreakerMetrics.ofCircuitBreakerRegistry(...)} etc.) to export breaker
 * state, retries, bulkhead and rate-limiter metrics.
 */
public record PolicyRegistries(CircuitBreakerRegistry circuitBreakers, RetryRegistry retries, BulkheadRegistry bulkheads,
                               RateLimiterRegistry rateLimiters) {

    public PolicyRegistries {
        Objects.requireNonNull(circuitBreakers, "circuitBreakers");
        Objects.requireNonNull(retries, "retries");
        Objects.requireNonNull(bulkheads, "bulkheads");
        Objects.requireNonNull(rateLimiters, "rateLimiters");
    }

    public static PolicyRegistries create() {
        return new PolicyRegistries(CircuitBreakerRegistry.ofDefaults(), RetryRegistry.ofDefaults(), BulkheadRegistry.ofDefaults(),
                RateLimiterRegistry.ofDefaults());
    }
}
