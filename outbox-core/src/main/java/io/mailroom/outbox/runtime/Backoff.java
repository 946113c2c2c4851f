package io.mailroom.outbox.runtime;

import java.time.Duration;
import java.util.Objects;
import java.util.function.DoubleSupplier;

/**
 * Exponential backoff with a cap and jitter: attempt {@code n} (1-based) waits
 * {@code min(cap, base * multiplier^(n-1))}, of which a random share up to {@code jitter} is taken
 * off, so that messages failing together do not come back together.
 *
 * @param base       delay after the first failed attempt
 * @param cap        the longest delay
 * @param multiplier growth per attempt, ≥ 1
 * @param jitter     share of the delay that is random, 0 (none) to 1 (full jitter)
 */
public record Backoff(Duration base, Duration cap, double multiplier, double jitter) {

    public static final Duration DEFAULT_BASE = Duration.ofSeconds(2);
    public static final Duration DEFAULT_CAP = Duration.ofMinutes(15);
    public static final double DEFAULT_MULTIPLIER = 2.0;
    public static final double DEFAULT_JITTER = 0.5;

    public static final Backoff DEFAULT = new Backoff(DEFAULT_BASE, DEFAULT_CAP, DEFAULT_MULTIPLIER, DEFAULT_JITTER);

    public Backoff {
        Objects.requireNonNull(base, "backoff base");
        Objects.requireNonNull(cap, "backoff cap");
        if (base.isNegative() || base.isZero()) {
            throw new IllegalArgumentException("backoff base must be positive, got " + base);
        }
        if (cap.compareTo(base) < 0) {
            throw new IllegalArgumentException("backoff cap (" + cap + ") must not be below its base (" + base + ")");
        }
        if (!(multiplier >= 1.0) || multiplier > 100) {
            throw new IllegalArgumentException("backoff multiplier must be between 1 and 100, got " + multiplier);
        }
        if (!(jitter >= 0.0 && jitter <= 1.0)) {
            throw new IllegalArgumentException("backoff jitter must be between 0 and 1, got " + jitter);
        }
    }

    /** The delay before the attempt after failed attempt {@code attempt}, with {@code random} in [0, 1). */
    public Duration delay(int attempt, DoubleSupplier random) {
        double exponent = Math.max(0, attempt - 1);
        double millis = Math.min(cap.toMillis(), base.toMillis() * Math.pow(multiplier, Math.min(exponent, 64)));
        double jittered = millis * (1.0 - jitter * random.getAsDouble());
        return Duration.ofMillis(Math.max(1, Math.round(jittered)));
    }

    /** The same delay with the JVM's random numbers. */
    public Duration delay(int attempt) {
        return delay(attempt, () -> java.util.concurrent.ThreadLocalRandom.current().nextDouble());
    }
}
