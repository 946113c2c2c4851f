package io.mailroom.email.service;

import com.zaxxer.hikari.HikariDataSource;
import io.mailroom.email.dkim.JndiTxtLookup;
import io.mailroom.email.dkim.TxtLookup;
import io.mailroom.email.metrics.MetricsRegistry;
import io.mailroom.email.resilience.ResilientTransport;
import io.mailroom.outbox.runtime.Dispatcher;
import io.mailroom.outbox.runtime.DispatcherListener;
import io.mailroom.outbox.admin.OutboxControl;

import java.net.InetSocketAddress;
import java.util.Map;

/**
 * The runnable dispatcher: HikariCP pools of its own (TCP keepalive on; session timeouts set by
 * the runtime), one for the runtime and one for the handlers' reservations, sized by
 * {@link ServiceConfig#dispatcherSessions()} and {@link ServiceConfig#reservationSessions()} and
 * checked against the server's free slots before they fill; optional Flyway migration, the configured transport wrapped in its Resilience4j
 * policies, one {@link EmailHandler} rendering every configured topic from its template (by
 * default every template on {@code email.<template>}), the outbox {@link Dispatcher} gated by
 * the transport's breaker, {@code /health/live} + {@code /health/ready} and {@code /metrics}
 * (Prometheus). {@link #close()} is the
 * graceful stop (also run on SIGTERM by {@link MailroomCli}). {@link ServiceWiring} assembles it,
 * {@link ServiceParts} holds what it opened, {@link HealthServer} serves its health and metrics.
 *
 * <p>Start-up survives a database that is not there yet: the health server starts first
 * ({@code /health/live} UP, {@code /health/ready} 503 STARTING), then {@link DatabaseStartup} waits
 * for the database, logging each attempt, for up to {@code MAILROOM_DB_STARTUP_TIMEOUT} (default:
 * as long as it takes), and only then migrates and starts the rest. At run time the pool reconnects
 * by itself, retention retries within seconds ({@link RetentionSchedule}) and {@code /health/ready}
 * answers within {@link DatabaseCheck#DEFAULT_ANSWER_WITHIN} even while the database is away.
 */
public final class DispatcherService implements AutoCloseable {


    private final ServiceConfig config;
    private final ServiceParts parts;
    private final DatabaseCheck databaseCheck;

    DispatcherService(ServiceConfig config, ServiceParts parts) {
        this.config = config;
        this.parts = parts;
        this.databaseCheck = new DatabaseCheck(parts.pool(), new OutboxControl(parts.pool(), config.dispatcher().sessionSettings()),
                DatabaseCheck.DEFAULT_ANSWER_WITHIN);
    }

    /** Starts everything; on failure, closes what was opened and rethrows. */
    public static DispatcherService start(ServiceConfig config) {
        return start(config, DispatcherListener.NONE);
    }

    /** Starts everything, with {@code extra} told about dispatcher events beside the metrics (tests, tools). */
    public static DispatcherService start(ServiceConfig config, DispatcherListener extra) {
        return ServiceWiring.start(config, extra, new JndiTxtLookup(JndiTxtLookup.DEFAULT_TIMEOUT));
    }

    /** As {@link #start(ServiceConfig, DispatcherListener)}, with the DNS lookup of the DKIM key check given (tests). */
    static DispatcherService start(ServiceConfig config, DispatcherListener extra, TxtLookup dkimDns) {
        return ServiceWiring.start(config, extra, dkimDns);
    }

    /** Starts everything, with {@code failover} told when a fallback list passes an email to its next provider (tests). */
    public static DispatcherService start(ServiceConfig config, DispatcherListener extra,
                                          io.mailroom.email.resilience.FallbackTransport.Listener failover) {
        return ServiceWiring.start(config, extra, new JndiTxtLookup(JndiTxtLookup.DEFAULT_TIMEOUT), failover);
    }

    public int port() {
        return parts.http().port();
    }

    /** The delivery-event webhook server's port, or -1 when webhooks are off. */
    public int webhookPort() {
        return parts.webhooks() == null ? -1 : parts.webhooks().port();
    }

    /** The support server's port, or -1 when support is off. */
    public int supportPort() {
        return parts.support() == null ? -1 : parts.support().port();
    }

    public Dispatcher dispatcher() {
        return parts.dispatcher();
    }

    /** The default transport ({@code MAILROOM_TRANSPORT}; of a fallback list, the first). */
    public ResilientTransport transport() {
        return parts.transports().get(config.firstTransport());
    }

    /** Every transport this service sends through, by name, the default one first. */
    public Map<String, ResilientTransport> transports() {
        return parts.transports();
    }

    public HikariDataSource dataSource() {
        return parts.pool();
    }

    /** The pool the handlers take their reservation sessions from (see {@link ServiceConfig#reservationSessions()}). */
    public HikariDataSource reservationDataSource() {
        return parts.reservationPool();
    }

    /** Graceful stop: no new claims, in-flight sends finish or are handed back, then the pool closes. */
    @Override
    public synchronized void close() {
        if (parts.pool().isClosed()) {
            return;
        }
        parts.close();
    }

    /** The Prometheus registry ({@code /metrics}). */
    public MetricsRegistry metrics() {
        return parts.metrics();
    }

    /** Samples the database-derived gauges now instead of waiting for the schedule. */
    public void sampleNow() {
        parts.sampler().sample();
    }

    /**
     * Readiness as data, for the health endpoint and tests. Answers within about
     * {@link DatabaseCheck#DEFAULT_ANSWER_WITHIN} even while the database is away.
     */
    public Map<String, Object> readiness() {
        return HealthServer.readiness(config, databaseCheck, parts.dispatcher(), parts.transports());
    }

    /** The address the health server's socket is bound to (the host it listens on, and the port actually bound). */
    public InetSocketAddress localAddress() {
        return HealthServer.localAddress(parts.http());
    }
}
