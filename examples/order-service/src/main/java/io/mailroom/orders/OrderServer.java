package io.mailroom.orders;

import io.javalin.Javalin;
import io.javalin.json.JavalinJackson;
import org.eclipse.jetty.server.Connector;
import org.eclipse.jetty.server.HttpConnectionFactory;
import org.eclipse.jetty.server.ServerConnector;
import org.eclipse.jetty.util.thread.QueuedThreadPool;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import javax.sql.DataSource;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetSocketAddress;
import java.net.URI;
import java.nio.channels.ServerSocketChannel;
import java.util.Objects;

/**
 * The order service's HTTP server (Javalin 7 on Jetty 12), startable and stoppable from code so
 * that tests and the one-command demo can embed it:
 *
 * <pre>{@code
 * try (OrderServer server = OrderServer.start(dataSource, HttpSettings.of("127.0.0.1", 0))) {
 *     URI orders = server.baseUri().resolve("/orders");
 *     ...
 * }
 * }</pre>
 *
 * It does not own the {@link DataSource}: whoever created the pool closes it after {@link #stop()}.
 * See {@link OrderHttpApi} for the routes.
 */
public final class OrderServer implements AutoCloseable {

    private static final Logger log = LoggerFactory.getLogger(OrderServer.class);
    /** On 2 cores Jetty's defaults over-provision and warn: one acceptor, one selector suffice here. */
    private static final int ACCEPTORS = 1;
    private static final int SELECTORS = 1;
    private static final int MIN_THREADS = 4;

    private final Javalin app;
    private final HttpSettings settings;
    private boolean stopped;

    private OrderServer(Javalin app, HttpSettings settings) {
        this.app = app;
        this.settings = settings;
    }

    /** Starts the server over {@code dataSource} (a pool; migrated already). */
    public static OrderServer start(DataSource dataSource, HttpSettings settings) {
        Objects.requireNonNull(dataSource, "dataSource");
        return start(OrderService.withWakeUpsAfterCommit(dataSource), settings);
    }

    /** Starts the server in front of {@code service}. */
    public static OrderServer start(OrderService service, HttpSettings settings) {
        Objects.requireNonNull(service, "service");
        Objects.requireNonNull(settings, "settings");
        OrderHttpApi api = new OrderHttpApi(service, settings.maxBodyBytes());
        Javalin app = Javalin.create(config -> {
            config.startup.showJavalinBanner = false;
            config.startup.showOldJavalinVersionWarning = false;
            config.http.maxRequestSize = settings.maxBodyBytes();
            config.http.prefer405over404 = true;
            config.jsonMapper(new JavalinJackson(OrderJson.mapper(), false));

            QueuedThreadPool threads = new QueuedThreadPool(settings.maxThreads(), MIN_THREADS);
            threads.setName("orders-http");
            config.jetty.threadPool = threads;
            config.jetty.modifyServer(server -> server.setErrorHandler(new ClosingErrorHandler()));
            config.jetty.addConnector((server, httpConfig) -> {
                ServerConnector connector = new ServerConnector(server, ACCEPTORS, SELECTORS,
                        new HttpConnectionFactory(httpConfig));
                connector.setHost(settings.host());
                connector.setPort(settings.port());
                return connector;
            });
            api.register(config);
        });
        try {
            app.start();
        } catch (RuntimeException e) {
            // e.g. the port is taken: do not leave Jetty's threads behind in an embedding JVM
            try {
                app.stop();
            } catch (RuntimeException stopFailure) {
                e.addSuppressed(stopFailure);
            }
            throw e;
        }
        OrderServer server = new OrderServer(app, settings);
        log.info("Order service listening on {}:{}", settings.host(), server.port());
        if (!BindAddress.isLoopback(settings.host())) {
            log.warn("Order service is reachable from other machines on {}:{} over plain HTTP; put it behind a"
                    + " TLS-terminating proxy or bind {} to 127.0.0.1 (docs/OPERATIONS.md, \"Plain HTTP and TLS\")",
                    settings.host(), server.port(), OrderServiceConfig.ENV_HOST);
        }
        return server;
    }

    /** The address the server's socket is bound to (the host it listens on, and the port actually bound). */
    public InetSocketAddress localAddress() {
        for (Connector connector : app.jettyServer().server().getConnectors()) {
            if (connector instanceof ServerConnector server && server.getTransport() instanceof ServerSocketChannel channel) {
                try {
                    return (InetSocketAddress) channel.getLocalAddress();
                } catch (IOException e) {
                    throw new UncheckedIOException(e);
                }
            }
        }
        throw new IllegalStateException("the server has no bound connector");
    }

    /** The port actually bound (the chosen one when the settings said 0). */
    public int port() {
        return app.port();
    }

    /** {@code http://host:port/}, with a wildcard bind address replaced by the loopback address. */
    public URI baseUri() {
        String host = settings.host();
        if (host.equals("0.0.0.0") || host.equals("::") || host.equals("[::]")) {
            host = "127.0.0.1";
        } else if (host.contains(":") && !host.startsWith("[")) {
            host = "[" + host + "]";
        }
        return URI.create("http://" + host + ":" + port() + "/");
    }

    /** Stops accepting requests and stops Jetty; safe to call more than once. */
    public synchronized void stop() {
        if (stopped) {
            return;
        }
        stopped = true;
        app.stop();
        log.info("Order service stopped");
    }

    @Override
    public void close() {
        stop();
    }
}
