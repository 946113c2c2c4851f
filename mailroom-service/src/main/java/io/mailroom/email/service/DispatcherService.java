package io.mailroom.email.service;

import com.zaxxer.hikari.HikariDataSource;
import io.javalin.Javalin;
import io.mailroom.delivery.DeliveryEventStore;
import io.mailroom.delivery.suppression.SuppressionList;
import io.mailroom.delivery.suppression.SuppressionPolicy;
import io.mailroom.delivery.webhook.NeutralEventAdapter;
import io.mailroom.delivery.webhook.ResendEventAdapter;
import io.mailroom.delivery.webhook.WebhookVerifier;
import io.mailroom.email.dispatch.EmailHandler;
import io.mailroom.email.dispatch.SuppressionCheck;
import io.mailroom.email.dispatch.BreakerRecovery;
import io.mailroom.email.metrics.DeliveryMetrics;
import io.mailroom.email.dispatch.TransportGate;
import io.mailroom.email.metrics.DispatcherMetrics;
import io.mailroom.email.metrics.MetricsRegistry;
import io.mailroom.email.metrics.QueueSampler;
import io.mailroom.email.resilience.PolicyRegistries;
import io.mailroom.email.render.TemplatedComposer;
import io.mailroom.email.config.EmailTopics;
import io.mailroom.outbox.InvalidSettingException;
import io.mailroom.templates.TemplateCatalogue;
import io.mailroom.templates.TemplateException;
import io.mailroom.email.resilience.ResilientTransport;
import io.mailroom.email.transport.MailTransport;
import io.mailroom.email.transport.http.HttpMailTransport;
import io.mailroom.email.transport.smtp.SmtpTransport;
import io.mailroom.idempotency.IdempotencyStore;
import io.mailroom.outbox.runtime.ConnectionBudget;
import io.mailroom.outbox.runtime.Dispatcher;
import io.mailroom.outbox.runtime.DispatcherListener;
import io.mailroom.outbox.admin.OutboxControl;
import io.mailroom.outbox.runtime.WaitingMessages;
import io.mailroom.support.BindAddress;
import io.mailroom.support.SupportServer;
import io.mailroom.support.TransportStatus;
import org.eclipse.jetty.server.Connector;
import org.eclipse.jetty.server.ServerConnector;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetSocketAddress;
import java.nio.channels.ServerSocketChannel;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicReference;

/**
 * The runnable dispatcher: HikariCP pools of its own (TCP keepalive on; session timeouts set by
 * the runtime), one for the runtime and one for the handlers' reservations, sized by
 * {@link ServiceConfig#dispatcherSessions()} and {@link ServiceConfig#reservationSessions()} and
 * checked against the server's free slots before they fill; optional Flyway migration, the configured transport wrapped in its Resilience4j
 * policies, one {@link EmailHandler} rendering every configured topic from its template (by
 * default every template on {@code email.<template>}), the outbox {@link Dispatcher} gated by
 * the transport's breaker, {@code /health/live} + {@code /health/ready} and {@code /metrics}
 * (Prometheus). {@link #close()} is the
 * graceful stop (also run on SIGTERM by {@link MailroomCli}).
 *
 * <p>Start-up survives a database that is not there yet: the health server starts first
 * ({@code /health/live} UP, {@code /health/ready} 503 STARTING), then {@link DatabaseStartup} waits
 * for the database, logging each attempt, for up to {@code MAILROOM_DB_STARTUP_TIMEOUT} (default:
 * as long as it takes), and only then migrates and starts the rest. At run time the pool reconnects
 * by itself, retention retries within seconds ({@link RetentionSchedule}) and {@code /health/ready}
 * answers within {@link DatabaseCheck#DEFAULT_ANSWER_WITHIN} even while the database is away.
 */
public final class DispatcherService implements AutoCloseable {

    private static final Logger log = LoggerFactory.getLogger(DispatcherService.class);
    /** The order confirmation's topic, served by default (it is {@code email.<template>} of a built-in template). */
    public static final String TOPIC = "email.order_confirmation";

    private final ServiceConfig config;
    private final HikariDataSource pool;
    private final HikariDataSource reservationPool;
    /** Every transport this service sends through, the default one first. */
    private final Map<String, ResilientTransport> transports;
    private final Dispatcher dispatcher;
    private final DatabaseCheck databaseCheck;
    private final Javalin http;
    private final RetentionSchedule retention;
    private final MetricsRegistry metrics;
    private final QueueSampler sampler;
    private final HikariDataSource supportPool;
    private final SupportServer support;
    private final HikariDataSource webhookPool;
    private final WebhookServer webhooks;
    /** The direct session for LISTEN behind a pooler (MAILROOM_LISTEN_DB_URL); null otherwise. */
    private final HikariDataSource listenPool;

    private DispatcherService(ServiceConfig config, HikariDataSource pool, HikariDataSource reservationPool,
                              Map<String, ResilientTransport> transports, Dispatcher dispatcher, Javalin http, RetentionSchedule retention,
                              MetricsRegistry metrics, QueueSampler sampler, HikariDataSource supportPool,
                              SupportServer support, HikariDataSource webhookPool, WebhookServer webhooks,
                              HikariDataSource listenPool) {
        this.config = config;
        this.listenPool = listenPool;
        this.pool = pool;
        this.reservationPool = reservationPool;
        this.transports = transports;
        this.dispatcher = dispatcher;
        this.databaseCheck = new DatabaseCheck(pool, new OutboxControl(pool, config.dispatcher().sessionSettings()),
                DatabaseCheck.DEFAULT_ANSWER_WITHIN);
        this.http = http;
        this.retention = retention;
        this.metrics = metrics;
        this.sampler = sampler;
        this.supportPool = supportPool;
        this.support = support;
        this.webhookPool = webhookPool;
        this.webhooks = webhooks;
    }

    /** Starts everything; on failure, closes what was opened and rethrows. */
    public static DispatcherService start(ServiceConfig config) {
        return start(config, DispatcherListener.NONE);
    }

    /**
     * The template catalogue this dispatcher renders from, refused at start, before anything is
     * opened, when a template does not compile or its sample does not render, or when a configured
     * topic names a template the catalogue does not have.
     */
    static TemplateCatalogue templates(EmailTopics topics) {
        TemplateCatalogue catalogue;
        try {
            catalogue = TemplateCatalogue.load(topics.templatesDir());
        } catch (TemplateException e) {
            throw new InvalidSettingException(EmailTopics.TEMPLATES_DIR, e.getMessage());
        }
        List<TemplateException> problems = catalogue.check();
        if (!problems.isEmpty()) {
            throw new InvalidSettingException(EmailTopics.TEMPLATES_DIR, problems.size() + " template problem(s): "
                    + problems.stream().map(TemplateException::getMessage).collect(java.util.stream.Collectors.joining("; ")));
        }
        for (EmailTopics.Route route : topics.routes().values()) {
            if (!catalogue.has(route.template())) {
                throw new InvalidSettingException(EmailTopics.TOPICS, "topic " + route.topic() + " names template '" + route.template()
                        + "', which is not in the catalogue (" + String.join(", ", catalogue.names()) + ")");
            }
        }
        log.info("Topics rendered from templates{}: {}", topics.routes().isEmpty() ? " (the default: every template on email.<template>)" : "",
                topics.routesFor(catalogue.names()).values().stream().map(r -> r.topic() + " -> " + r.template()).toList());
        return catalogue;
    }

    /** Starts everything, with {@code extra} told about dispatcher events beside the metrics (tests, tools). */
    public static DispatcherService start(ServiceConfig config, DispatcherListener extra) {
        log.info("Starting dispatcher with {}", config);
        StartupPhases phases = new StartupPhases();
        // the templates are checked beside the database wait, and joined before anything is claimed
        TemplateCheck checkedTemplates = TemplateCheck.start(() -> templates(config.topics()), phases);
        // one name for all this instance's sessions, so that the connection budget can tell them from
        // other clients' (and an operator can in pg_stat_activity)
        String applicationName = "mailroom-dispatcher-" + java.util.HexFormat.of().toHexDigits(new java.security.SecureRandom().nextInt());
        HikariDataSource pool = ServicePools.pool(config, config.dispatcherSessions(), "mailroom-dispatcher", applicationName);
        HikariDataSource reservationPool = ServicePools.pool(config, config.reservationSessions(), "mailroom-reservations", applicationName);
        PolicyRegistries policies = PolicyRegistries.create();
        MetricsRegistry metrics = new MetricsRegistry(policies);
        DatabaseStartup database = new DatabaseStartup(pool, ServiceConfig.maskUrl(config.jdbcUrl()),
                config.dbStartupTimeout(), config.migrate()).migrationReadsWithin(config.db().timeouts().migration());
        if (config.db().migrateUrl() != null) {
            database.migrateThrough(config.db().timeouts().jdbcUrl(config.db().migrateUrl()), ServiceConfig.maskUrl(config.db().migrateUrl()),
                    config.dbUser(), config.dbPassword());
        }
        AtomicReference<DispatcherService> self = new AtomicReference<>();
        Javalin http = null;
        QueueSampler sampler = null;
        HikariDataSource supportPool = null;
        HikariDataSource listenPool = null;
        SupportServer support = null;
        HikariDataSource webhookPool = null;
        WebhookServer webhooks = null;
        Map<String, ResilientTransport> transports = new LinkedHashMap<>();
        Dispatcher dispatcher = null;
        RetentionSchedule retention = null;
        try {
            // first, so that an orchestrator sees a live process that is not ready while the database is awaited
            phases.begin("health server");
            http = health(config, self::get, database, metrics);
            phases.end("health server");
            phases.begin("database (wait, version, migrations)");
            checkedTemplates.interruptOnFailure(database::await);
            if (!config.migrate()) {
                // another service owns the migrations (docker compose: the order service) and may not have run them yet
                new SchemaWait(pool, ServiceConfig.maskUrl(config.jdbcUrl()), config.dbStartupTimeout()).await();
            }
            phases.end("database (wait, version, migrations)");
            phases.begin("connection checks");
            if (config.db().pooled()) {
                // what PostgreSQL sees is the pooler's server sessions, not these pools: the budget is the pooler's
                log.info("Behind a transaction-mode pooler ({}): {} client sessions to the pooler; the server sessions"
                        + " are its default_pool_size (docs/OPERATIONS.md, \"Through PgBouncer\")", config.db(), config.totalSessions());
            } else {
                requireConnectionSlots(config, pool, applicationName);
            }
            ServicePools.fill(pool);
            ServicePools.fill(reservationPool);
            phases.end("connection checks");
            phases.begin("waiting for the template check");
            TemplateCatalogue catalogue = checkedTemplates.join();
            phases.end("waiting for the template check");
            phases.begin("dispatcher start");
            // retention statements may run for their statement timeout (minutes): reads wait that long, plus the usual bound
            retention = new RetentionSchedule(io.mailroom.outbox.DbTimeouts.withSocketTimeout(pool,
                    config.retention().statementTimeout().plus(config.db().timeouts().socket())), config.retention(), config.retentionInterval(),
                    config.dispatcher().sessionSettings());
            for (String name : config.transports()) {
                MailTransport raw = name.equals("smtp") ? new SmtpTransport(config.smtp()) : new HttpMailTransport(config.http());
                transports.put(name, new ResilientTransport(raw, config.policies(), policies, java.time.Clock.systemUTC()));
            }
            Map<String, EmailTopics.Route> routes = config.topics().routesFor(catalogue.names());
            Map<String, String> transportOf = new java.util.HashMap<>();
            routes.forEach((topic, route) -> transportOf.put(topic, route.transportOr(config.transport())));
            DispatcherListener listener = Listeners.both(Listeners.both(new DispatcherMetrics(metrics.registry(), transportOf, config.transport()),
                    new io.mailroom.email.dispatch.EndedEmailLog()), Listeners.both(new DispatcherListener() {
                        @Override
                        public void claimed(int requested, int claimed, java.time.Duration took) {
                            phases.claimed();
                        }
                    }, extra));
            sampler = new QueueSampler(pool, metrics.registry(), config.metricsSampleInterval());
            // One handler per transport, each with that transport's ambiguity policy; one composer for all.
            // The handlers' reservations (the only sessions a send takes) come from their own pool: 32
            // handlers can then never take the sessions the claimers and the completer need.
            TemplatedComposer composer = new TemplatedComposer(catalogue, routes, config.mail().from(), config.mail().maxBodyBytes());
            // every send is checked against the suppression list, under its topic's policy
            SuppressionList suppressions = new SuppressionList(config.suppression(), null);
            SuppressionCheck check = new SuppressionCheck(suppressions, topic -> {
                EmailTopics.Route route = routes.get(topic);
                return route == null ? SuppressionPolicy.STRICT : route.suppression();
            });
            Map<String, EmailHandler> handlerOf = new java.util.HashMap<>();
            for (Map.Entry<String, ResilientTransport> t : transports.entrySet()) {
                handlerOf.put(t.getKey(), new EmailHandler(reservationPool, new IdempotencyStore(), composer, t.getValue(),
                        config.ambiguity(t.getKey()), config.dispatcher().workerId(), null, check));
            }
            Map<String, io.mailroom.outbox.runtime.MessageHandler> handlers = new java.util.HashMap<>();
            Map<String, ResilientTransport> gates = new java.util.HashMap<>();
            transportOf.forEach((topic, name) -> {
                handlers.put(topic, handlerOf.get(name));
                gates.put(topic, transports.get(name)); // a topic is claimed only while its own transport's breaker lets it
            });
            if (config.dispatcher().listenForNotifications() && config.db().listenUrl() != null) {
                listenPool = ServicePools.direct(config, config.db().listenUrl(), "mailroom-listen", applicationName);
            }
            dispatcher = new Dispatcher(pool, config.dispatcher(), handlers, new TransportGate(gates), listener, listenPool);
            // emails a breaker held back go when it lets calls through again, not a whole open wait later
            BreakerRecovery.watchAll(gates, new WaitingMessages(pool, config.dispatcher()), dispatcher::wake);
            dispatcher.start();
            phases.end("dispatcher start");
            phases.begin("support and webhook servers");
            if (config.support() != null) {
                // its own small pool: the support actions set session timeouts of their own
                supportPool = ServicePools.pool(config, ServiceConfig.SUPPORT_POOL_SIZE, "mailroom-support", applicationName);
                ServicePools.fill(supportPool);
                List<ResilientTransport> all = List.copyOf(transports.values());
                support = SupportServer.start(supportPool, config.support(), () -> all.stream()
                        .map(t -> new TransportStatus.TransportState(t.name(), t.breakerState().name().toLowerCase(java.util.Locale.ROOT)))
                        .toList(), config.dispatcher().sessionSettings());
            }
            if (config.webhooks() != null) {
                // its own pool and threads: a flood of delivery events never takes what sending needs
                webhookPool = ServicePools.pool(config, WebhookConfig.POOL_SIZE, "mailroom-webhooks", applicationName);
                DeliveryEventStore events = new DeliveryEventStore(
                        // events are counted in the database for every process (delivery_event_count); the
                        // recipient mismatches this endpoint meets are counted here
                        List.of(suppressions, new DeliveryMetrics(metrics.registry())), null);
                webhooks = WebhookServer.start(webhookPool, config.webhooks(), events,
                        List.of(new NeutralEventAdapter(), new ResendEventAdapter()), new WebhookVerifier(null),
                        config.smtp() == null || config.smtp().verp() == null ? null : config.smtp().verp()::keyOf);
            }
            self.set(new DispatcherService(config, pool, reservationPool, java.util.Collections.unmodifiableMap(transports), dispatcher, http, retention, metrics,
                    sampler, supportPool, support, webhookPool, webhooks, listenPool));
            phases.end("support and webhook servers");
            log.info("Dispatcher {} ready: health on http://{}:{}/health/ready", config.dispatcher().workerId(),
                    config.host(), http.port());
            phases.ready();
            return self.get();
        } catch (InterruptedException | RuntimeException e) {
            if (http != null) {
                stopQuietly(http);
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
            checkedTemplates.rethrowFailure(); // the interrupt was the failed check's: its error, not "interrupted"
            if (e instanceof InterruptedException) {
                Thread.currentThread().interrupt();
                throw new IllegalStateException("interrupted while waiting for the database", e);
            }
            throw (RuntimeException) e;
        }
    }

    public int port() {
        return http.port();
    }

    /** The delivery-event webhook server's port, or -1 when webhooks are off. */
    public int webhookPort() {
        return webhooks == null ? -1 : webhooks.port();
    }

    /** The support server's port, or -1 when support is off. */
    public int supportPort() {
        return support == null ? -1 : support.port();
    }

    public Dispatcher dispatcher() {
        return dispatcher;
    }

    /** The default transport ({@code MAILROOM_TRANSPORT}). */
    public ResilientTransport transport() {
        return transports.get(config.transport());
    }

    /** Every transport this service sends through, by name, the default one first. */
    public Map<String, ResilientTransport> transports() {
        return transports;
    }

    public HikariDataSource dataSource() {
        return pool;
    }

    /** Graceful stop: no new claims, in-flight sends finish or are handed back, then the pool closes. */
    @Override
    public synchronized void close() {
        if (pool.isClosed()) {
            return;
        }
        stopQuietly(http);
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

    /** The Prometheus registry ({@code /metrics}). */
    public MetricsRegistry metrics() {
        return metrics;
    }

    /** Samples the database-derived gauges now instead of waiting for the schedule. */
    public void sampleNow() {
        sampler.sample();
    }

    /**
     * Readiness as data, for the health endpoint and tests. Answers within about
     * {@link DatabaseCheck#DEFAULT_ANSWER_WITHIN} even while the database is away: one check on one
     * connection, its paused scopes "unknown" when the database did not answer.
     */
    public Map<String, Object> readiness() {
        Map<String, Object> body = new LinkedHashMap<>();
        DatabaseCheck.Result db = databaseCheck.check();
        // Halted (the provider refused our credentials or configuration): nothing is sent until an
        // operator resumes it, so the dispatcher is not ready. An open breaker is not: it closes by itself.
        ResilientTransport transport = transport();
        java.util.Optional<ResilientTransport.Halt> halted = transport.halted();
        boolean anyHalted = transports.values().stream().anyMatch(t -> t.halted().isPresent());
        // The server refuses our session (HELO name, relaying, authentication): nothing is sent until
        // the setting or the relay is fixed, so not ready either, though a probe finds the fix by itself.
        boolean anyRefused = transports.values().stream().anyMatch(t -> t.sessionRefusal().isPresent());
        body.put("status", db.up() && dispatcher.isRunning() && !anyHalted && !anyRefused ? "UP" : "DOWN");
        body.put("database", db.up() ? "UP" : "DOWN");
        if (db.problem() != null) {
            body.put("databaseProblem", db.problem());
        }
        body.put("dispatcher", dispatcher.isRunning() ? "RUNNING" : "STOPPED");
        body.put("worker", config.dispatcher().workerId());
        body.put("transport", transport.name());
        body.put("breaker", transport.breakerState().name());
        halted.ifPresent(h -> {
            body.put("halted", h.code() + " " + h.error() + " at " + h.at());
            body.put("cannotSend", "transport " + transport.name() + " is halted since " + h.at() + ": the provider answered "
                    + h.code() + " (" + h.error() + "); nothing is sent until the configuration is fixed and the dispatcher restarted");
        });
        transports.forEach((name, t) -> t.sessionRefusal().ifPresent(r -> body.putIfAbsent("cannotSend",
                "transport " + name + ": the server refuses our session since " + r.since() + ": " + r.code() + " " + r.error()
                        + "; emails wait (not counted as attempts)")));
        if (transports.size() > 1) {
            // topics may name another transport than the default: each one's state, the same way
            Map<String, Object> each = new LinkedHashMap<>();
            transports.forEach((name, t) -> {
                Map<String, Object> state = new LinkedHashMap<>();
                state.put("breaker", t.breakerState().name());
                t.halted().ifPresent(h -> {
                    state.put("halted", h.code() + " " + h.error() + " at " + h.at());
                    if (t != transport) {
                        body.putIfAbsent("cannotSend", "transport " + name + " is halted since " + h.at() + ": the provider answered "
                                + h.code() + " (" + h.error() + "); its topics are not sent until the configuration is fixed"
                                + " and the dispatcher restarted");
                    }
                });
                each.put(name, state);
            });
            body.put("transports", each);
        }
        body.put("inFlight", dispatcher.inFlightCount());
        body.put("paused", db.paused() == null ? "unknown" : db.paused());
        return body;
    }

    /** The pool the handlers take their reservation sessions from (see {@link ServiceConfig#reservationSessions()}). */
    public HikariDataSource reservationDataSource() {
        return reservationPool;
    }

    /**
     * Fails start-up, naming the numbers, when the server has fewer free slots than this service's
     * pools ask for; checked before they are filled, so that a fleet that does not fit does not
     * take the last slots of every other client.
     */
    private static void requireConnectionSlots(ServiceConfig config, HikariDataSource pool, String applicationName) {
        int wanted = config.totalSessions();
        String who = "dispatcher " + config.dispatcher().workerId() + " (pool " + config.dispatcherSessions()
                + " + reservations " + config.reservationSessions()
                + (config.support() == null ? "" : " + support " + ServiceConfig.SUPPORT_POOL_SIZE)
                + (config.webhooks() == null ? "" : " + webhooks " + WebhookConfig.POOL_SIZE) + ")";
        try {
            ConnectionBudget.Slots slots = ConnectionBudget.require(pool, applicationName, wanted, who,
                    "raise max_connections, or lower MAILROOM_DB_POOL_SIZE / MAILROOM_CONCURRENCY here or in the other"
                            + " clients (docs/OPERATIONS.md, \"Connection budget\")");
            log.info("Connection budget: {} sessions for {}; PostgreSQL has {}", wanted, who, slots);
        } catch (ConnectionBudget.Exhausted e) {
            log.error("{}", e.getMessage());
            throw new DatabaseStartupException(e.getMessage(), e);
        }
    }

    private static void stopQuietly(Javalin http) {
        try {
            http.stop();
        } catch (RuntimeException e) {
            log.warn("Health server did not stop cleanly: {}", e.toString());
        }
    }

    private static Javalin health(ServiceConfig config, java.util.function.Supplier<DispatcherService> service,
                                  DatabaseStartup database, MetricsRegistry metrics) {
        Javalin app = Javalin.create(c -> {
            HttpListeners.listen(c, "dispatcher-http", 8, config.host(), config.port());
            c.routes.get("/health/live", ctx -> ctx.json(Map.of("status", "UP")));
            c.routes.get("/metrics", ctx -> ctx.contentType("text/plain; version=0.0.4; charset=utf-8").result(metrics.scrape()));
            c.routes.get("/health/ready", ctx -> {
                DispatcherService s = service.get();
                if (s == null) {
                    ctx.status(503).json(Map.of("status", "STARTING", "database", database.answered() ? "UP" : "DOWN"));
                    return;
                }
                Map<String, Object> body = s.readiness();
                ctx.status("UP".equals(body.get("status")) ? 200 : 503).json(body);
            });
        });
        app.start();
        if (!BindAddress.isLoopback(config.host())) {
            log.warn("Dispatcher health and metrics are reachable from other machines on {}:{} over plain HTTP; put them"
                    + " behind a TLS-terminating proxy or bind MAILROOM_DISPATCHER_HOST to 127.0.0.1"
                    + " (docs/OPERATIONS.md, \"Plain HTTP and TLS\")", config.host(), app.port());
        }
        return app;
    }

    /** The address the health server's socket is bound to (the host it listens on, and the port actually bound). */
    public InetSocketAddress localAddress() {
        for (Connector connector : http.jettyServer().server().getConnectors()) {
            if (connector instanceof ServerConnector server && server.getTransport() instanceof ServerSocketChannel channel) {
                try {
                    return (InetSocketAddress) channel.getLocalAddress();
                } catch (IOException e) {
                    throw new UncheckedIOException(e);
                }
            }
        }
        throw new IllegalStateException("the health server has no bound connector");
    }
}
