package io.mailroom.email.resilience;

import io.github.resilience4j.circuitbreaker.CircuitBreaker;
import io.mailroom.email.resilience.ResilientTransport.Halt;
import io.mailroom.email.resilience.ResilientTransport.Refusal;
import io.mailroom.email.transport.SendResult;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;

/**
 * The health of one transport as {@link ResilientTransport} keeps it: whether an operator must act
 * (a halt, with its reason), whether the server refuses our session, when the breaker last opened,
 * and the sends in progress; and from these, how much work the dispatcher may claim now and when
 * a refused email may be tried again.
 *
 * <p>A halt forces the breaker open ({@code FORCED_OPEN}, which Resilience4j never leaves by
 * itself); the halt flag, not the breaker state, is what keeps the transport halted, so nothing
 * that closes the breaker from outside ends a halt by accident.
 */
final class TransportHealth {

    private static final Logger log = LoggerFactory.getLogger(ResilientTransport.class);
    private static final Duration HALF_OPEN_RECHECK = Duration.ofSeconds(1);

    private final String name;
    private final TransportPolicyConfig config;
    private final Clock clock;
    private final CircuitBreaker breaker;
    private final AtomicInteger inFlight = new AtomicInteger();
    private final AtomicReference<Halt> halt = new AtomicReference<>();
    private final AtomicReference<Refusal> refusal = new AtomicReference<>();
    /** When the breaker last went OPEN, by {@link #clock}; null before it ever did. */
    private volatile Instant openedAt;
    private final List<Runnable> whenCallsAllowed = new CopyOnWriteArrayList<>();

    TransportHealth(String name, TransportPolicyConfig config, Clock clock, CircuitBreaker breaker) {
        this.name = name;
        this.config = config;
        this.clock = clock;
        this.breaker = breaker;
        breaker.getEventPublisher().onStateTransition(e -> {
            CircuitBreaker.State to = e.getStateTransition().getToState();
            if (to == CircuitBreaker.State.OPEN) {
                openedAt = clock.instant();
            }
            log.warn("Circuit breaker of transport {}: {}", name, e.getStateTransition());
            if (to == CircuitBreaker.State.HALF_OPEN || to == CircuitBreaker.State.CLOSED) {
                callsAllowedAgain();
            }
        });
    }

    /** See {@link ResilientTransport#onCallsAllowedAgain}. */
    void onCallsAllowedAgain(Runnable action) {
        whenCallsAllowed.add(Objects.requireNonNull(action, "action"));
    }

    private void callsAllowedAgain() {
        for (Runnable action : whenCallsAllowed) {
            try {
                action.run();
            } catch (RuntimeException e) {
                // runs inside the breaker's own bookkeeping (a send's onSuccess, its timer): never let it fail that
                log.error("Transport {}: an action on the breaker letting calls through failed", name, e);
            }
        }
    }

    /** Whether {@code state} lets every call through (the breaker is not holding anything back). */
    static boolean permits(CircuitBreaker.State state) {
        return state == CircuitBreaker.State.CLOSED || state == CircuitBreaker.State.DISABLED
                || state == CircuitBreaker.State.METRICS_ONLY;
    }

    void sendStarted() {
        inFlight.incrementAndGet();
    }

    void sendEnded() {
        inFlight.decrementAndGet();
    }

    /** See {@link ResilientTransport#claimableNow()}. */
    int claimableNow() {
        if (halt.get() != null) {
            return 0;
        }
        return switch (breaker.getState()) {
            case CLOSED, DISABLED, METRICS_ONLY -> Integer.MAX_VALUE;
            case HALF_OPEN -> Math.max(0, config.breaker().halfOpenCalls() - breaker.getMetrics().getNumberOfBufferedCalls() - inFlight.get());
            case OPEN, FORCED_OPEN -> 0;
        };
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

    // ------------------------------------------------------------------------------ halt

    Halt halt() {
        return halt.get();
    }

    void halt(SendResult.Misconfigured m) {
        Halt h = new Halt(m.code(), m.error(), clock.instant());
        if (halt.compareAndSet(null, h)) {
            breaker.transitionToForcedOpenState();
            log.error("Transport {} halted: {} {}. Nothing more is sent through it until an operator fixes the configuration and resumes it.",
                    name, m.code(), m.error());
        }
    }

    SendResult.NotAttempted halted(Halt h) {
        // the halt holds the breaker FORCED_OPEN; the resume that ends it closes the breaker
        return new SendResult.NotAttempted("transport " + name + " is halted since " + h.at() + " (" + h.code() + ")", null, true);
    }

    /** Operator action after fixing the configuration: clears the halt and closes the breaker. */
    void resume() {
        Halt previous = halt.getAndSet(null);
        refusal.set(null);
        breaker.transitionToClosedState();
        if (previous != null) {
            log.warn("Transport {} resumed by an operator (it was halted since {} by {})", name, previous.at(), previous.code());
        }
    }

    // ---------------------------------------------------------------------- session refusal

    Optional<Refusal> refusal() {
        return Optional.ofNullable(refusal.get());
    }

    /**
     * The server refused the session, so it would refuse every email the same way: the breaker is
     * opened (claims stop; after {@code MAILROOM_BREAKER_OPEN_WAIT} a half-open probe tries again,
     * so a fixed relay is found without a restart) and the result comes back with that wait as its
     * retry-after, for the email to be handed back uncounted. Logged once per episode, at error,
     * with what to change.
     */
    SendResult sessionRefused(SendResult.Transient t) {
        Refusal previous = refusal.get();
        Refusal now = new Refusal(t.code(), t.error(), previous == null ? clock.instant() : previous.since());
        refusal.set(now);
        if (previous == null || !previous.code().equals(t.code())) {
            log.error("Transport {} paused: {} {}. Emails wait (not counted as attempts); a probe retries every {}.",
                    name, t.code(), t.error(), config.breaker().openWait());
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

    void clearRefusal() {
        Refusal previous = refusal.getAndSet(null);
        if (previous != null) {
            log.warn("Transport {}: the server accepts our session again (it refused it since {} with {})", name,
                    previous.since(), previous.code());
        }
    }
}
