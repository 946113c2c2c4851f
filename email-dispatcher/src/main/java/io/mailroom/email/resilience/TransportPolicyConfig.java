package io.mailroom.email.resilience;

import io.mailroom.outbox.Checks;
import io.mailroom.outbox.InvalidSettingException;
import io.mailroom.email.config.Formats;

import java.time.Duration;
import java.util.Objects;

/**
 * Limits that {@link ResilientTransport} puts around one transport: in-attempt retry, circuit
 * breaker, bulkhead and optional rate limiter. Each group is its own record with {@code DEFAULT_*}
 * constants; the compact constructors reject bad values naming the environment variable.
 */
public record TransportPolicyConfig(RetrySettings retry, BreakerSettings breaker, BulkheadSettings bulkhead,
                                    RateLimitSettings rateLimit) {

    public TransportPolicyConfig {
        Objects.requireNonNull(retry, "retry");
        Objects.requireNonNull(breaker, "breaker");
        Objects.requireNonNull(bulkhead, "bulkhead");
        Objects.requireNonNull(rateLimit, "rateLimit");
    }

    public static TransportPolicyConfig defaults() {
        return new TransportPolicyConfig(RetrySettings.DEFAULT, BreakerSettings.DEFAULT, BulkheadSettings.DEFAULT, RateLimitSettings.DISABLED);
    }

    public TransportPolicyConfig withRetry(RetrySettings retry) {
        return new TransportPolicyConfig(retry, breaker, bulkhead, rateLimit);
    }

    public TransportPolicyConfig withBreaker(BreakerSettings breaker) {
        return new TransportPolicyConfig(retry, breaker, bulkhead, rateLimit);
    }

    public TransportPolicyConfig withBulkhead(BulkheadSettings bulkhead) {
        return new TransportPolicyConfig(retry, breaker, bulkhead, rateLimit);
    }

    public TransportPolicyConfig withRateLimit(RateLimitSettings rateLimit) {
        return new TransportPolicyConfig(retry, breaker, bulkhead, rateLimit);
    }

    /**
     * Retry of transient results inside one send call, before the result goes back to the outbox.
     *
     * @param attempts total tries per call, 1 = no in-attempt retry ({@code MAILROOM_RETRY_ATTEMPTS})
     * @param initialWait first pause, doubled per retry ({@code MAILROOM_RETRY_WAIT})
     * @param maxWait  cap of the pause, and the longest provider {@code Retry-After} honoured inside
     *                 the call; a longer one ends the call so the outbox schedules the retry
     *                 ({@code MAILROOM_RETRY_MAX_WAIT})
     */
    public record RetrySettings(int attempts, Duration initialWait, Duration maxWait) {
        public static final int DEFAULT_ATTEMPTS = 3;
        public static final Duration DEFAULT_WAIT = Duration.ofMillis(200);
        public static final Duration DEFAULT_MAX_WAIT = Duration.ofSeconds(2);
        public static final RetrySettings DEFAULT = new RetrySettings(DEFAULT_ATTEMPTS, DEFAULT_WAIT, DEFAULT_MAX_WAIT);

        public RetrySettings {
            Checks.range("MAILROOM_RETRY_ATTEMPTS", attempts, 1, 10);
            Checks.notNegative("MAILROOM_RETRY_WAIT", initialWait);
            Checks.atMost("MAILROOM_RETRY_MAX_WAIT", Checks.notNegative("MAILROOM_RETRY_MAX_WAIT", maxWait), Duration.ofMinutes(1));
            if (initialWait.compareTo(maxWait) > 0) {
                throw new InvalidSettingException("MAILROOM_RETRY_WAIT", "MAILROOM_RETRY_WAIT (" + Formats.format(initialWait)
                        + ") must not exceed MAILROOM_RETRY_MAX_WAIT (" + Formats.format(maxWait) + ")");
            }
        }
    }

    /**
     * Count-based circuit breaker per transport. Ambiguous results and provider-wide transient ones
     * count as failures; sent, permanent and per-email transient ones (greylisting at RCPT, see
     * {@link io.mailroom.email.transport.SendResult.Scope}) as successes: a bad or greylisted
     * address says nothing about the provider.
     *
     * @param window             calls in the sliding window ({@code MAILROOM_BREAKER_WINDOW})
     * @param minimumCalls       calls needed before the failure rate is judged ({@code MAILROOM_BREAKER_MIN_CALLS})
     * @param failureRatePercent opens at or above this rate ({@code MAILROOM_BREAKER_FAILURE_RATE})
     * @param openWait           time open before half-open ({@code MAILROOM_BREAKER_OPEN_WAIT})
     * @param halfOpenCalls      probe calls let through while half-open ({@code MAILROOM_BREAKER_HALF_OPEN_CALLS})
     */
    public record BreakerSettings(int window, int minimumCalls, int failureRatePercent, Duration openWait, int halfOpenCalls) {
        public static final int DEFAULT_WINDOW = 20;
        public static final int DEFAULT_MIN_CALLS = 10;
        public static final int DEFAULT_FAILURE_RATE_PERCENT = 50;
        public static final Duration DEFAULT_OPEN_WAIT = Duration.ofSeconds(30);
        public static final int DEFAULT_HALF_OPEN_CALLS = 3;
        public static final BreakerSettings DEFAULT = new BreakerSettings(DEFAULT_WINDOW, DEFAULT_MIN_CALLS,
                DEFAULT_FAILURE_RATE_PERCENT, DEFAULT_OPEN_WAIT, DEFAULT_HALF_OPEN_CALLS);

        public BreakerSettings {
            Checks.range("MAILROOM_BREAKER_WINDOW", window, 1, 10_000);
            Checks.range("MAILROOM_BREAKER_MIN_CALLS", minimumCalls, 1, window);
            Checks.range("MAILROOM_BREAKER_FAILURE_RATE", failureRatePercent, 1, 100);
            Checks.atMost("MAILROOM_BREAKER_OPEN_WAIT", Checks.positive("MAILROOM_BREAKER_OPEN_WAIT", openWait), Duration.ofHours(1));
            Checks.range("MAILROOM_BREAKER_HALF_OPEN_CALLS", halfOpenCalls, 1, 1000);
        }
    }

    /**
     * Concurrent sends through the transport.
     *
     * @param maxConcurrent ({@code MAILROOM_BULKHEAD_MAX_CONCURRENT})
     * @param maxWait       how long a send waits for a free slot before giving up, nothing sent
     *                      ({@code MAILROOM_BULKHEAD_MAX_WAIT})
     */
    public record BulkheadSettings(int maxConcurrent, Duration maxWait) {
        public static final int DEFAULT_MAX_CONCURRENT = 16;
        public static final Duration DEFAULT_MAX_WAIT = Duration.ofSeconds(5);
        public static final BulkheadSettings DEFAULT = new BulkheadSettings(DEFAULT_MAX_CONCURRENT, DEFAULT_MAX_WAIT);

        public BulkheadSettings {
            Checks.range("MAILROOM_BULKHEAD_MAX_CONCURRENT", maxConcurrent, 1, 10_000);
            Checks.atMost("MAILROOM_BULKHEAD_MAX_WAIT", Checks.notNegative("MAILROOM_BULKHEAD_MAX_WAIT", maxWait), Duration.ofMinutes(1));
        }
    }

    /**
     * Provider rate limit. {@code perSecond} 0 disables the limiter.
     *
     * @param perSecond requests per second ({@code MAILROOM_RATE_LIMIT_PER_SECOND})
     * @param timeout   how long a send waits for a permit before giving up, nothing sent
     *                  ({@code MAILROOM_RATE_LIMIT_TIMEOUT})
     */
    public record RateLimitSettings(int perSecond, Duration timeout) {
        public static final int DEFAULT_PER_SECOND = 0;
        public static final Duration DEFAULT_TIMEOUT = Duration.ofSeconds(5);
        public static final RateLimitSettings DISABLED = new RateLimitSettings(DEFAULT_PER_SECOND, DEFAULT_TIMEOUT);

        public RateLimitSettings {
            Checks.range("MAILROOM_RATE_LIMIT_PER_SECOND", perSecond, 0, 1_000_000);
            Checks.atMost("MAILROOM_RATE_LIMIT_TIMEOUT", Checks.notNegative("MAILROOM_RATE_LIMIT_TIMEOUT", timeout), Duration.ofMinutes(1));
        }

        public boolean enabled() {
            return perSecond > 0;
        }
    }

    @Override
    public String toString() {
        return "TransportPolicyConfig[retryAttempts=" + retry.attempts() + ", retryWait=" + Formats.format(retry.initialWait())
                + ", retryMaxWait=" + Formats.format(retry.maxWait()) + ", breakerWindow=" + breaker.window()
                + ", breakerMinCalls=" + breaker.minimumCalls() + ", breakerFailureRate=" + breaker.failureRatePercent() + "%"
                + ", breakerOpenWait=" + Formats.format(breaker.openWait()) + ", breakerHalfOpenCalls=" + breaker.halfOpenCalls()
                + ", bulkheadMaxConcurrent=" + bulkhead.maxConcurrent() + ", bulkheadMaxWait=" + Formats.format(bulkhead.maxWait())
                + ", rateLimitPerSecond=" + (rateLimit.enabled() ? rateLimit.perSecond() : "off") + "]";
    }
}
