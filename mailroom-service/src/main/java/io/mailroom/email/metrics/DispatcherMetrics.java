package io.mailroom.email.metrics;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.DistributionSummary;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;
import io.mailroom.outbox.runtime.ClaimedMessage;
import io.mailroom.outbox.runtime.DispatcherListener;

import java.time.Duration;
import java.util.Map;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The dispatcher's own events as Micrometer meters: claim duration and batch size, empty claims,
 * handler (send) duration by transport and outcome, attempts per message, rescued leases, lost
 * claims and runtime errors. Called on the dispatcher's threads; Micrometer meters are thread-safe.
 */
public final class DispatcherMetrics implements DispatcherListener {

    private final MeterRegistry registry;
    private final Map<String, String> transportOf;
    private final String defaultTransport;
    private final Timer claimDuration;
    private final DistributionSummary claimBatch;
    private final Counter emptyClaims;
    private final Counter fruitfulClaims;
    private final DistributionSummary attempts;
    private final Counter rescued;
    private final AtomicLong claimsSeen = new AtomicLong();
    private final AtomicLong emptySeen = new AtomicLong();

    /** All messages through {@code transport}. */
    public DispatcherMetrics(MeterRegistry registry, String transport) {
        this(registry, Map.of(), transport);
    }

    /** Each topic's messages through its transport ({@code transportOf}), the rest through {@code defaultTransport}. */
    public DispatcherMetrics(MeterRegistry registry, Map<String, String> transportOf, String defaultTransport) {
        this.registry = registry;
        this.transportOf = Map.copyOf(transportOf);
        this.defaultTransport = defaultTransport;
        this.claimDuration = Timer.builder("mailroom.claim.duration").description("Time of one claim statement and its commit")
                .publishPercentileHistogram().minimumExpectedValue(Duration.ofMillis(1)).maximumExpectedValue(Duration.ofSeconds(10))
                .register(registry);
        this.claimBatch = DistributionSummary.builder("mailroom.claim.batch.size").description("Messages one claim returned")
                .publishPercentileHistogram().minimumExpectedValue(1.0).maximumExpectedValue(1000.0).register(registry);
        this.emptyClaims = Counter.builder("mailroom.claims").tag("result", "empty")
                .description("Claims that returned nothing (rows locked, not yet available, or none)").register(registry);
        this.fruitfulClaims = Counter.builder("mailroom.claims").tag("result", "claimed").register(registry);
        registry.gauge("mailroom.claim.empty.ratio", this, m -> {
            long all = m.claimsSeen.get();
            return all == 0 ? 0.0 : (double) m.emptySeen.get() / all;
        });
        this.attempts = DistributionSummary.builder("mailroom.message.attempts")
                .description("Attempt number at which an attempt ended").publishPercentileHistogram()
                .minimumExpectedValue(1.0).maximumExpectedValue(100.0).register(registry);
        this.rescued = Counter.builder("mailroom.leases.rescued").description("Expired leases returned to the queue")
                .register(registry);
        for (String where : new String[]{"heartbeat", "completion"}) {
            Counter.builder("mailroom.claims.lost").tag("where", where)
                    .description("Claims found lost (lease expired and taken over)").register(registry);
        }
    }

    @Override
    public void claimed(int requested, int claimed, Duration took) {
        claimDuration.record(took);
        claimsSeen.incrementAndGet();
        if (claimed == 0) {
            emptySeen.incrementAndGet();
            emptyClaims.increment();
        } else {
            fruitfulClaims.increment();
            claimBatch.record(claimed);
        }
    }

    @Override
    public void finished(ClaimedMessage message, String outcome, Duration took) {
        Timer.builder("mailroom.send.duration").description("Handler time of one attempt (render, reserve, send)")
                .tag("transport", transportOf.getOrDefault(message.topic(), defaultTransport)).tag("outcome", outcome).publishPercentileHistogram()
                .minimumExpectedValue(Duration.ofMillis(1)).maximumExpectedValue(Duration.ofSeconds(60))
                .register(registry).record(took);
        attempts.record(message.attempt());
        if ("done".equals(outcome)) {
            // the denominator of the bounce and complaint rates by topic
            registry.counter("mailroom.emails.sent", "topic", message.topic()).increment();
        }
    }

    @Override
    public void claimLost(ClaimedMessage message, String where) {
        registry.counter("mailroom.claims.lost", "where", where).increment();
    }

    @Override
    public void rescued(int count) {
        rescued.increment(count);
    }

    @Override
    public void error(String where, Throwable error) {
        registry.counter("mailroom.dispatcher.errors", "where", where).increment();
    }
}
