package io.mailroom.email.metrics;

import io.github.resilience4j.micrometer.tagged.TaggedBulkheadMetrics;
import io.github.resilience4j.micrometer.tagged.TaggedCircuitBreakerMetrics;
import io.github.resilience4j.micrometer.tagged.TaggedRetryMetrics;
import io.mailroom.email.resilience.PolicyRegistries;
import io.micrometer.core.instrument.binder.jvm.JvmGcMetrics;
import io.micrometer.core.instrument.binder.jvm.JvmMemoryMetrics;
import io.micrometer.core.instrument.binder.jvm.JvmThreadMetrics;
import io.micrometer.core.instrument.binder.system.ProcessorMetrics;
import io.micrometer.prometheusmetrics.PrometheusConfig;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;

/**
 * The service's Prometheus registry: Mailroom's own meters, the Resilience4j policies (circuit
 * breaker state per transport, retries, bulkhead) and the JVM's basics. {@link #scrape()} is what
 * {@code /metrics} serves.
 */
public final class MetricsRegistry implements AutoCloseable {

    private final PrometheusMeterRegistry registry = new PrometheusMeterRegistry(PrometheusConfig.DEFAULT);
    private final JvmGcMetrics gc = new JvmGcMetrics();

    public MetricsRegistry(PolicyRegistries policies) {
        TaggedCircuitBreakerMetrics.ofCircuitBreakerRegistry(policies.circuitBreakers()).bindTo(registry);
        TaggedRetryMetrics.ofRetryRegistry(policies.retries()).bindTo(registry);
        TaggedBulkheadMetrics.ofBulkheadRegistry(policies.bulkheads()).bindTo(registry);
        new JvmMemoryMetrics().bindTo(registry);
        new JvmThreadMetrics().bindTo(registry);
        new ProcessorMetrics().bindTo(registry);
        gc.bindTo(registry);
    }

    public PrometheusMeterRegistry registry() {
        return registry;
    }

    public String scrape() {
        return registry.scrape();
    }

    @Override
    public void close() {
        gc.close();
        registry.close();
    }
}
