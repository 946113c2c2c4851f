package io.mailroom.email.service;

import com.zaxxer.hikari.HikariDataSource;
import io.javalin.Javalin;
import io.mailroom.delivery.DeliveryEventStore;
import io.mailroom.delivery.suppression.SuppressionList;
import io.mailroom.delivery.suppression.SuppressionPolicy;
import io.mailroom.delivery.webhook.NeutralEventAdapter;
import io.mailroom.delivery.webhook.ResendEventAdapter;
import io.mailroom.delivery.webhook.WebhookVerifier;
import io.mailroom.email.config.EmailTopics;
import io.mailroom.email.config.TransportChain;
import io.mailroom.email.resilience.FallbackTransport;
import io.mailroom.email.dispatch.BreakerRecovery;
import io.mailroom.email.dispatch.EmailHandler;
import io.mailroom.email.dispatch.EndedEmailLog;
import io.mailroom.email.dispatch.SuppressionCheck;
import io.mailroom.email.dispatch.TransportGate;
import io.mailroom.email.metrics.DeliveryMetrics;
import io.mailroom.email.metrics.DispatcherMetrics;
import io.mailroom.email.metrics.MetricsRegistry;
import io.mailroom.email.metrics.QueueSampler;
import io.mailroom.email.render.EnvelopeAttachments;
import io.mailroom.email.render.TemplatedComposer;
import io.mailroom.email.resilience.BreakerReport;
import io.mailroom.email.resilience.PolicyRegistries;
import io.mailroom.email.resilience.ResilientTransport;
import io.mailroom.email.dkim.DkimDnsCheck;
import io.mailroom.email.dkim.TxtLookup;
import io.mailroom.idempotency.IdempotencyStore;
import io.mailroom.outbox.runtime.ConnectionBudget;
import io.mailroom.outbox.DbTimeouts;
import io.mailroom.outbox.runtime.Dispatcher;
import io.mailroom.outbox.runtime.DispatcherListener;
import io.mailroom.outbox.InvalidSettingException;
import io.mailroom.outbox.runtime.MessageHandler;
import io.mailroom.outbox.runtime.WaitingMessages;
import io.mailroom.support.BindAddress;
import io.mailroom.support.SupportServer;
import io.mailroom.support.TransportStatus;
import io.mailroom.templates.TemplateCatalogue;
import io.mailroom.templates.TemplateException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.security.SecureRandom;
import java.time.Clock;
import java.time.Duration;
import java.util.Collections;
import java.util.HashMap;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.atomic.AtomicReference;
import java.util.stream.Collectors;

/**
 * Assembles a running dispatcher from its {@link ServiceConfig}, in the order start-up needs: the
 * health server first (live, not ready), the database awaited and migrated, the connection budget
 * checked, the templates joined, then the transports in their policies, one handler per transport,
 * the outbox {@link Dispatcher} gated by each topic's breaker, and the optional support and webhook
 * servers on pools of their own. Whatever fails, everything opened so far is closed before the
 * error is rethrown: a failed start leaves no thread and no session behind.
 */
final class ServiceWiring {

    private static final Logger log = LoggerFactory.getLogger(DispatcherService.class);

    private ServiceWiring() {
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
            throw new InvalidSettingException(DispatchEnv.TEMPLATES_DIR, e.getMessage());
        }
        List<TemplateException> problems = catalogue.check();
        if (!problems.isEmpty()) {
            throw new InvalidSettingException(DispatchEnv.TEMPLATES_DIR, problems.size() + " template problem(s): "
                    + problems.stream().map(TemplateException::getMessage).collect(Collectors.joining("; ")));
        }
        for (EmailTopics.Route route : topics.routes().values()) {
            if (!catalogue.has(route.template())) {
                throw new InvalidSettingException(DispatchEnv.TOPICS, "topic " + route.topic() + " names template '" + route.template()
                        + "', which is not in the catalogue (" + String.join(", ", catalogue.names()) + ")");
            }
        }
        if (catalogue.names().isEmpty()) {
            // Mailroom ships layouts, no email: a dispatcher without a template would claim nothing
            throw new InvalidSettingException(DispatchEnv.TEMPLATES_DIR, "no email template to serve: the built-in files are"
                    + " layouts only; set " + DispatchEnv.TEMPLATES_DIR + " to a directory of templates (one folder per"
                    + " kind of email; the example shop's are in examples/order-service/templates)");
        }
        log.info("Topics rendered from templates{}: {}", topics.routes().isEmpty() ? " (the default: every template on email.<template>)" : "",
                topics.routesFor(catalogue.names()).values().stream().map(r -> r.topic() + " -> " + r.template()).toList());
        return catalogue;
    }

    /** Starts everything, with {@code extra} told about dispatcher events beside the metrics (tests, tools). */
    static DispatcherService start(ServiceConfig config, DispatcherListener extra, TxtLookup dkimDns) {
        return start(config, extra, dkimDns, (key, from, why, to) -> {
        });
    }

    /**
     * Starts everything: {@code dkimDns} answers the start-up check of the DKIM selector records,
     * {@code failover} is told when a fallback list passes an email on (tests).
     */
    static DispatcherService start(ServiceConfig config, DispatcherListener extra, TxtLookup dkimDns,
                                   FallbackTransport.Listener failover) {
        log.info("Starting dispatcher with {}", config);
        if (config.smtp() != null && config.smtp().dkim() != null) {
            // before anything is opened: a configured key that DNS contradicts refuses start (MAILROOM_DKIM_DNS_CHECK)
            new DkimDnsCheck(dkimDns).check(config.smtp().dkim());
        }
        StartupPhases phases = new StartupPhases();
        // the templates are checked beside the database wait, and joined before anything is claimed
        TemplateCheck checkedTemplates = TemplateCheck.start(() -> templates(config.topics()), phases);
        // one name for all this instance's sessions, so that the connection budget can tell them from
        // other clients' (and an operator can in pg_stat_activity)
        String applicationName = "mailroom-dispatcher-" + HexFormat.of().toHexDigits(new SecureRandom().nextInt());
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
            http = HealthServer.start(config, self::get, database, metrics);
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
            retention = new RetentionSchedule(DbTimeouts.withSocketTimeout(pool,
                    config.retention().statementTimeout().plus(config.db().timeouts().socket())), config.retention(), config.retentionInterval(),
                    config.dispatcher().sessionSettings());
            for (String name : config.transports()) {
                transports.put(name, new ResilientTransport(TransportRoutes.raw(name, config, reservationPool), config.policies(),
                        policies, Clock.systemUTC()));
            }
            Map<String, EmailTopics.Route> routes = config.topics().routesFor(catalogue.names());
            Map<String, String> transportOf = new HashMap<>();
            routes.forEach((topic, route) -> transportOf.put(topic, TransportChain.canonical(route.transportOr(config.transport()))));
            DispatcherListener listener = Listeners.both(Listeners.both(new DispatcherMetrics(metrics.registry(), transportOf, config.transport()),
                    new EndedEmailLog()), Listeners.both(new DispatcherListener() {
                        @Override
                        public void claimed(int requested, int claimed, Duration took) {
                            phases.claimed();
                        }
                    }, extra));
            sampler = new QueueSampler(pool, metrics.registry(), config.metricsSampleInterval());
            // One handler per transport, each with that transport's ambiguity policy; one composer for all.
            // The handlers' reservations (the only sessions a send takes) come from their own pool: 32
            // handlers can then never take the sessions the claimers and the completer need.
            TemplatedComposer composer = new TemplatedComposer(catalogue, routes, config.mail().from(), config.mail().maxBodyBytes(),
                    TemplatedComposer.installedReaders(), EnvelopeAttachments.database(reservationPool));
            // every send is checked against the suppression list, under its topic's policy
            SuppressionList suppressions = new SuppressionList(config.suppression(), null);
            SuppressionCheck check = new SuppressionCheck(suppressions, topic -> {
                EmailTopics.Route route = routes.get(topic);
                return route == null ? SuppressionPolicy.STRICT : route.suppression();
            });
            // one handler per transport or fallback list (smtp,http) that a topic sends through
            Map<String, EmailHandler> handlerOf = new HashMap<>();
            for (String chain : new java.util.TreeSet<>(transportOf.values())) {
                handlerOf.put(chain, new EmailHandler(reservationPool, new IdempotencyStore(), composer,
                        TransportRoutes.sender(chain, transports, failover), config.ambiguity(chain), config.dispatcher().workerId(), null, check));
            }
            Map<String, MessageHandler> handlers = new HashMap<>();
            Map<String, ResilientTransport> gates = new HashMap<>();
            transportOf.forEach((topic, name) -> {
                handlers.put(topic, handlerOf.get(name));
                // a topic is claimed only while its own transport's breaker lets it; a fallback list's
                // topic always is (an open breaker passes the email to the next provider)
                if (transports.containsKey(name)) {
                    gates.put(topic, transports.get(name));
                }
            });
            if (config.dispatcher().listenForNotifications() && config.db().listenUrl() != null) {
                listenPool = ServicePools.direct(config, config.db().listenUrl(), "mailroom-listen", applicationName);
            }
            dispatcher = new Dispatcher(pool, config.dispatcher(), handlers, new TransportGate(gates), listener, listenPool);
            // each heartbeat's registry row says how this process's breakers stand (support's dispatchers page)
            List<ResilientTransport> reported = List.copyOf(transports.values());
            dispatcher.registrationDetails(() -> BreakerReport.json(reported));
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
                        .map(t -> new TransportStatus.TransportState(t.name(), t.breakerState().name().toLowerCase(Locale.ROOT)))
                        .toList(), config.dispatcher().sessionSettings(), config.suppression().erasureKey());
                if (!BindAddress.isLoopback(config.support().host())) {
                    log.warn("Support server is reachable from other machines on {}:{} over plain HTTP; put it behind a"
                            + " TLS-terminating proxy or bind {} to 127.0.0.1 (docs/OPERATIONS.md, \"Plain HTTP and TLS\")",
                            config.support().host(), support.port(), SupportEnv.HOST);
                }
            }
            if (config.webhooks() != null) {
                // its own pool and threads: a flood of delivery events never takes what sending needs
                webhookPool = ServicePools.pool(config, WebhookConfig.POOL_SIZE, "mailroom-webhooks", applicationName);
                DeliveryEventStore events = new DeliveryEventStore(
                        // events are counted in the database for every process (delivery_event_count); the
                        // recipient mismatches this endpoint meets are counted here
                        List.of(suppressions, new DeliveryMetrics(metrics.registry(), config.webhooks().metricTags())), null);
                webhooks = WebhookServer.start(webhookPool, config.webhooks(), events,
                        List.of(new NeutralEventAdapter(), new ResendEventAdapter()), new WebhookVerifier(null),
                        config.smtp() == null || config.smtp().verp() == null ? null : config.smtp().verp()::keyOf);
            }
            self.set(new DispatcherService(config, new ServiceParts(pool, reservationPool, listenPool, supportPool, webhookPool,
                    Collections.unmodifiableMap(transports), dispatcher, retention, metrics, sampler, http, support, webhooks)));
            phases.end("support and webhook servers");
            log.info("Dispatcher {} ready: health on http://{}:{}/health/ready", config.dispatcher().workerId(),
                    config.host(), http.port());
            phases.ready();
            return self.get();
        } catch (InterruptedException | RuntimeException e) {
            new ServiceParts(pool, reservationPool, listenPool, supportPool, webhookPool, transports, dispatcher, retention,
                    metrics, sampler, http, support, webhooks).closeOpened();
            checkedTemplates.rethrowFailure(); // the interrupt was the failed check's: its error, not "interrupted"
            if (e instanceof InterruptedException) {
                Thread.currentThread().interrupt();
                throw new IllegalStateException("interrupted while waiting for the database", e);
            }
            throw (RuntimeException) e;
        }
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
}
