package io.mailroom.email.service;

import io.javalin.Javalin;
import io.mailroom.email.metrics.MetricsRegistry;
import io.mailroom.email.resilience.ResilientTransport;
import io.mailroom.outbox.runtime.Dispatcher;
import io.mailroom.support.BindAddress;
import org.eclipse.jetty.server.Connector;
import org.eclipse.jetty.server.ServerConnector;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetSocketAddress;
import java.nio.channels.ServerSocketChannel;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Optional;
import java.util.function.Supplier;

/**
 * The dispatcher's own HTTP server: {@code /health/live}, {@code /health/ready} and {@code /metrics}
 * (Prometheus). It starts before anything else, so an orchestrator sees a live process that is not
 * ready ({@code 503 STARTING}) while the database is awaited; readiness is computed from the running
 * service's parts and answers within {@link DatabaseCheck#DEFAULT_ANSWER_WITHIN} even while the
 * database is away.
 */
final class HealthServer {

    private static final Logger log = LoggerFactory.getLogger(DispatcherService.class);

    private HealthServer() {
    }

    static Javalin start(ServiceConfig config, Supplier<DispatcherService> service,
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

    /**
     * Readiness as data, for the health endpoint and tests. Answers within about
     * {@link DatabaseCheck#DEFAULT_ANSWER_WITHIN} even while the database is away: one check on one
     * connection, its paused scopes "unknown" when the database did not answer.
     */
    static Map<String, Object> readiness(ServiceConfig config, DatabaseCheck databaseCheck, Dispatcher dispatcher,
                                         Map<String, ResilientTransport> transports) {
        Map<String, Object> body = new LinkedHashMap<>();
        DatabaseCheck.Result db = databaseCheck.check();
        // Halted (the provider refused our credentials or configuration): nothing is sent until an
        // operator resumes it, so the dispatcher is not ready. An open breaker is not: it closes by itself.
        ResilientTransport transport = transports.get(config.firstTransport());
        Optional<ResilientTransport.Halt> halted = transport.halted();
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

    static void stopQuietly(Javalin http) {
        try {
            http.stop();
        } catch (RuntimeException e) {
            log.warn("Health server did not stop cleanly: {}", e.toString());
        }
    }

    /** The address the health server's socket is bound to (the host it listens on, and the port actually bound). */
    static InetSocketAddress localAddress(Javalin http) {
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
