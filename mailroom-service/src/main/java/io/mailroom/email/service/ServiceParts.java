package io.mailroom.email.service;

import com.zaxxer.hikari.HikariDataSource;
import io.javalin.Javalin;
import io.mailroom.email.metrics.MetricsRegistry;
import io.mailroom.email.metrics.QueueSampler;
import io.mailroom.email.resilience.ResilientTransport;
import io.mailroom.outbox.runtime.Dispatcher;
import io.mailroom.support.SupportServer;

import java.util.Map;

/**
 * What a running dispatcher service holds open, and the order it is let go in. {@link #close()}
 * is the graceful stop of a started service: no new requests, no new claims, in-flight sends
 * finished or handed back, then the pools. {@link #closeOpened()} is the same after a failed start,
 * where any part not opened yet is null.
 *
 * @param pool            the runtime's sessions (claimers, completer, maintenance, retention, metrics, readiness)
 * @param reservationPool the handlers' sessions for their idempotency reservations
 * @param listenPool      the direct session for LISTEN behind a pooler ({@code MAILROOM_LISTEN_DB_URL}); null otherwise
 * @param supportPool     the support server's sessions; null when support is off
 * @param webhookPool     the webhook server's sessions; null when webhooks are off
 * @param transports      every transport this service sends through, by name, the default one first
 * @param http            the health and metrics server
 */
record ServiceParts(HikariDataSource pool, HikariDataSource reservationPool, HikariDataSource listenPool,
                    HikariDataSource supportPool, HikariDataSource webhookPool, Map<String, ResilientTransport> transports,
                    Dispatcher dispatcher, RetentionSchedule retention, MetricsRegistry metrics, QueueSampler sampler,
                    Javalin http, SupportServer support, WebhookServer webhooks) {

    /** Graceful stop of a started service: every part is there. */
    void close() {
        HealthServer.stopQuietly(http);
        retention.close();
        if (support != null) {
            support.stop();
            supportPool.close();
        }
        if (webhooks != null) {
            webhooks.close();
            webhookPool.close();
        }
        dispatcher.stop();
        if (listenPool != null) {
            listenPool.close();
        }
        sampler.close();
        metrics.close();
        transports.values().forEach(ResilientTransport::close);
        reservationPool.close();
        pool.close();
    }

    /** After a failed start: closes what was opened (the pools, metrics and transports always are), nothing else. */
    void closeOpened() {
        if (http != null) {
            HealthServer.stopQuietly(http);
        }
        if (dispatcher != null) {
            dispatcher.stop();
        }
        if (retention != null) {
            retention.close();
        }
        if (support != null) {
            support.stop();
        }
        if (supportPool != null) {
            supportPool.close();
        }
        if (webhooks != null) {
            webhooks.close();
        }
        if (webhookPool != null) {
            webhookPool.close();
        }
        if (listenPool != null) {
            listenPool.close();
        }
        if (sampler != null) {
            sampler.close();
        }
        metrics.close();
        transports.values().forEach(ResilientTransport::close);
        reservationPool.close();
        pool.close();
    }
}
