package io.mailroom.support;

import io.javalin.Javalin;
import io.javalin.http.Context;
import io.javalin.http.HttpResponseException;
import io.javalin.json.JavalinJackson;
import io.javalin.security.RouteRole;
import io.mailroom.db.sql.SqlStates;
import io.mailroom.outbox.SessionSettings;
import org.eclipse.jetty.server.HttpConnectionFactory;
import org.eclipse.jetty.server.ServerConnector;
import org.eclipse.jetty.util.thread.QueuedThreadPool;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import javax.sql.DataSource;
import java.net.URI;
import java.time.Clock;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;

/**
 * The support server: the JSON API under {@code /api} (bearer tokens) and the web console under
 * {@code /console} (login form, session cookie, CSRF-protected forms), on Javalin 7. Startable and
 * stoppable from code, so the dispatcher service can run it in-process:
 *
 * <pre>{@code
 * SupportServer support = SupportServer.start(dataSource,
 *         SupportConfig.builder().tokens("alice:operator:" + aliceToken).build(), transportStatus);
 * ...
 * support.stop();
 * }</pre>
 *
 * <p>Access: every route names the least {@link Role} it needs; a request without valid
 * credentials gets 401 (API) or the login page (console), one with too small a role 403. In demo
 * mode (loopback only) a request without credentials is the operator {@code demo}.
 *
 * <p>It speaks plain HTTP: bound beyond loopback ({@link BindAddress#isLoopback}) it belongs behind a
 * TLS-terminating proxy; the service that starts it warns its operator when it is not on loopback.
 *
 * <p>It does not own the {@link DataSource}: whoever created the pool closes it after {@link #stop()}.
 */
public final class SupportServer implements AutoCloseable {

    private static final Logger log = LoggerFactory.getLogger(SupportServer.class);

    static final String ACTOR = "mailroom.actor";
    static final String SESSION = "mailroom.session";
    /** Largest request body: forms and JSON actions are small. */
    static final int MAX_BODY_BYTES = 16 * 1024;
    private static final int ACCEPTORS = 1;
    private static final int SELECTORS = 1;
    private static final int MIN_THREADS = 4;

    /** Only this server's own files; {@code connect-src 'self'}: app.js fetches the open page again for its live parts. */
    static final String CSP = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; "
            + "form-action 'self'; frame-src 'self'; frame-ancestors 'none'; base-uri 'none'";

    private final Javalin app;
    private final SupportConfig config;
    private boolean stopped;

    private SupportServer(Javalin app, SupportConfig config) {
        this.app = app;
        this.config = config;
    }

    /** Starts the server; breaker states are unknown (see {@link TransportStatus}). */
    public static SupportServer start(DataSource dataSource, SupportConfig config) {
        return start(dataSource, config, TransportStatus.UNKNOWN);
    }

    /** Starts the server; {@code transports} reports the breaker state of each mail transport. */
    public static SupportServer start(DataSource dataSource, SupportConfig config, TransportStatus transports) {
        return start(dataSource, config, transports, SessionSettings.SESSION);
    }

    /** As above, with the session settings of the pool's topology ({@link SessionSettings#TRANSACTION} behind a transaction-mode pooler). */
    public static SupportServer start(DataSource dataSource, SupportConfig config, TransportStatus transports, SessionSettings settings) {
        Objects.requireNonNull(dataSource, "dataSource");
        return start(new SupportService(dataSource, transports, settings), config);
    }

    /** As above, with the key an erased address's suppression is kept under (the dispatchers' {@code MAILROOM_ERASURE_KEY}). */
    public static SupportServer start(DataSource dataSource, SupportConfig config, TransportStatus transports, SessionSettings settings,
                                      io.mailroom.delivery.suppression.ErasureKey erasureKey) {
        Objects.requireNonNull(dataSource, "dataSource");
        return start(new SupportService(dataSource, transports, settings, erasureKey), config);
    }

    /** Starts the server in front of {@code service}. */
    public static SupportServer start(SupportService service, SupportConfig config) {
        Objects.requireNonNull(service, "service");
        Objects.requireNonNull(config, "config");
        Authenticator auth = new Authenticator(config.tokens(), config.demo());
        Sessions sessions = new Sessions(config.sessionTtl(), Clock.systemUTC());
        ApiRoutes api = new ApiRoutes(service);
        ConsolePages pages = new ConsolePages();
        ConsoleRoutes console = new ConsoleRoutes(service, auth, sessions, config, pages);
        BulkRoutes bulk = new BulkRoutes(service, pages);
        CapturedRoutes captured = new CapturedRoutes(service.captured(), pages, console);
        Javalin app = Javalin.create(c -> {
            c.startup.showJavalinBanner = false;
            c.startup.showOldJavalinVersionWarning = false;
            c.http.maxRequestSize = MAX_BODY_BYTES;
            c.http.prefer405over404 = true;
            c.jsonMapper(new JavalinJackson(SupportJson.mapper(), false));

            QueuedThreadPool threads = new QueuedThreadPool(config.maxThreads(), MIN_THREADS);
            threads.setName("support-http");
            c.jetty.threadPool = threads;
            c.jetty.modifyServer(server -> server.setErrorHandler(new ClosingErrorHandler()));
            c.jetty.addConnector((server, httpConfig) -> {
                httpConfig.setSendServerVersion(false);
                ServerConnector connector = new ServerConnector(server, ACCEPTORS, SELECTORS, new HttpConnectionFactory(httpConfig));
                connector.setHost(config.host());
                connector.setPort(config.port());
                return connector;
            });

            c.routes.before(SupportServer::securityHeaders);
            c.routes.beforeMatched(ctx -> {
                authorize(ctx, auth, console);
                onlyKnownQuery(ctx);
            });
            api.register(c);
            console.register(c);
            bulk.register(c);
            captured.register(c);

            c.routes.exception(HttpFailure.class, (e, ctx) -> fail(ctx, console, e.status(), e.code(), e.getMessage(), e.parameter()));
            c.routes.exception(ConsoleRoutes.Redirect.class, (e, ctx) -> ctx.status(303).header("Location", e.location()));
            c.routes.exception(InvalidParameterException.class,
                    (e, ctx) -> fail(ctx, console, 400, "bad_request", e.getMessage(), e.parameter()));
            c.routes.exception(AccessDeniedException.class,
                    (e, ctx) -> fail(ctx, console, 403, "forbidden", e.getMessage(), null));
            // Javalin's own refusals (unknown path, wrong method, body too large) in the same shapes
            c.routes.exception(HttpResponseException.class,
                    (e, ctx) -> fail(ctx, console, e.getStatus(), "http_" + e.getStatus(), e.getMessage(), null));
            c.routes.exception(Exception.class, (e, ctx) -> unexpected(e, ctx, console));
        });
        try {
            app.start();
        } catch (RuntimeException e) {
            try {
                app.stop();
            } catch (RuntimeException stopFailure) {
                e.addSuppressed(stopFailure);
            }
            throw e;
        }
        SupportServer server = new SupportServer(app, config);
        log.info("Support server listening on {}:{} ({} people with tokens{})", config.host(), server.port(),
                config.tokens().size(), config.demo() ? ", DEMO MODE: requests without credentials act as operator 'demo'" : "");
        return server;
    }

    /** The port actually bound (the chosen one when the configuration said 0). */
    public int port() {
        return app.port();
    }

    /** {@code http://host:port/}, with a wildcard bind address replaced by the loopback address. */
    public URI baseUri() {
        String host = config.host();
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
        log.info("Support server stopped");
    }

    @Override
    public void close() {
        stop();
    }

    // ------------------------------------------------------------------------------- security

    private static void securityHeaders(Context ctx) {
        ctx.header("X-Content-Type-Options", "nosniff");
        ctx.header("X-Frame-Options", "DENY");
        // same-origin (not no-referrer): browsers then send a real Origin on same-origin form posts
        ctx.header("Referrer-Policy", "same-origin");
        ctx.header("Content-Security-Policy", CSP);
        if (!ctx.path().startsWith("/console/assets/")) {
            ctx.header("Cache-Control", "no-store");
        }
    }

    /** Runs before every matched route, once the asker is known: a query parameter the route does not read is a 400. */
    private static void onlyKnownQuery(Context ctx) {
        Map<String, List<String>> query = ctx.queryParamMap();
        if (query.isEmpty()) {
            return;
        }
        io.javalin.router.Endpoint route = ctx.endpoints().matchedHttpEndpoint();
        String name = route.method.name() + " " + route.path;
        Map<String, Set<String>> table = isApi(ctx) ? ApiRoutes.QUERY : ConsoleRoutes.QUERY;
        Params.onlyKnown(query.keySet(), table.getOrDefault(name, Set.of()));
    }

    /** Runs before every matched route: who is asking, and may they? */
    private static void authorize(Context ctx, Authenticator auth, ConsoleRoutes console) {
        Set<RouteRole> roles = ctx.routeRoles();
        if (roles.isEmpty()) {
            return; // public: login page, assets, redirects
        }
        Role required = (Role) roles.iterator().next();
        Actor actor;
        if (isApi(ctx)) {
            actor = apiActor(ctx, auth);
        } else {
            Sessions.Session session = console.requireSession(ctx);
            ctx.attribute(SESSION, session);
            actor = session.actor;
        }
        if (!actor.role().includes(required)) {
            log.info("Refused {} {} to {} ({}): needs {}", ctx.method(), ctx.path(), actor.name(), actor.role().word(), required.word());
            throw HttpFailure.forbidden(actor.name() + " (" + actor.role().word() + ") may not do this; it needs the role "
                    + required.word());
        }
        ctx.attribute(ACTOR, actor);
        if (!isApi(ctx) && ctx.method().name().equals("POST")) {
            console.checkCsrf(ctx, ctx.attribute(SESSION));
        }
    }

    private static Actor apiActor(Context ctx, Authenticator auth) {
        String header = ctx.header("Authorization");
        if (header == null || header.isBlank()) {
            if (auth.demo()) {
                return Authenticator.DEMO;
            }
            throw bearer(ctx, "this API needs a token: send Authorization: Bearer <token>");
        }
        if (header.length() < 8 || !header.regionMatches(true, 0, "Bearer ", 0, 7)) {
            throw bearer(ctx, "the Authorization header must be Bearer <token>");
        }
        return auth.byToken(header.substring(7).trim()).orElseThrow(() -> {
            log.info("Rejected a token for {} {} from {}", ctx.method(), ctx.path(), ctx.ip());
            return bearer(ctx, "the token is not valid");
        });
    }

    private static HttpFailure bearer(Context ctx, String message) {
        ctx.header("WWW-Authenticate", "Bearer realm=\"mailroom-support\"");
        return HttpFailure.unauthorized(message);
    }

    static boolean isApi(Context ctx) {
        return ctx.path().startsWith("/api/") || ctx.path().equals("/api");
    }

    static Actor actor(Context ctx) {
        Actor a = ctx.attribute(ACTOR);
        if (a == null) {
            throw new IllegalStateException("no actor on " + ctx.path() + ": the route has no role");
        }
        return a;
    }

    // ------------------------------------------------------------------------------- failures

    private static void fail(Context ctx, ConsoleRoutes console, int status, String code, String message, String parameter) {
        if (isApi(ctx)) {
            ctx.status(status).json(new ApiError(message, code, parameter));
        } else {
            console.errorPage(ctx, status, message, parameter);
        }
    }

    private static void unexpected(Exception e, Context ctx, ConsoleRoutes console) {
        String state = SqlStates.sqlState(e);
        if (SqlStates.isConnectionLoss(e)) {
            log.warn("{} {} failed: database unavailable (SQLSTATE {})", ctx.method(), ctx.path(), state);
            fail(ctx, console, 503, "unavailable", "the database is not reachable; try again in a moment", null);
            return;
        }
        if (SqlStates.QUERY_CANCELED.equals(state)) {
            log.warn("{} {} took longer than the statement timeout", ctx.method(), ctx.path());
            fail(ctx, console, 503, "timeout", "the database took too long to answer; try again in a moment", null);
            return;
        }
        log.error("{} {} failed", ctx.method(), ctx.path(), e);
        fail(ctx, console, 500, "internal", "internal error", null);
    }
}
