package io.mailroom.email.service;

import io.javalin.Javalin;
import io.javalin.http.Context;
import io.mailroom.db.sql.SqlStates;
import io.mailroom.delivery.DeliveryEventStore;
import io.mailroom.delivery.dsn.DsnIngest;
import io.mailroom.delivery.dsn.DsnParser;
import io.mailroom.delivery.webhook.DeliveryEventAdapter;
import io.mailroom.delivery.webhook.MalformedEventException;
import io.mailroom.delivery.webhook.WebhookSecrets;
import io.mailroom.delivery.webhook.WebhookVerifier;
import io.mailroom.support.BindAddress;
import io.mailroom.outbox.OneSession;
import org.jooq.exception.DataAccessException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import javax.sql.DataSource;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.Semaphore;

/**
 * The delivery-event endpoint: {@code POST /webhooks/{source}} for signed provider webhooks and
 * {@code POST /webhooks/dsn} for delivery status notifications a mail server posts with a bearer
 * token. It has a listener of its own, apart from the support console and the health port, so it can
 * be the only thing exposed to providers.
 *
 * <p>Every request is verified before its body is parsed; the body is read only up to its limit
 * (413 past it, before reading the rest) and within {@link WebhookConfig#readTimeout()} (the
 * connection is closed at that deadline; {@link BoundedBody}). A flood is bounded three ways:
 * requests on virtual threads, so slow senders hold no pool thread, at most
 * {@link WebhookConfig#maxInFlight()} requests worked on at once once their body is read (more are
 * answered 429 with {@code Retry-After}, which providers retry), and a database pool of its own
 * ({@link WebhookConfig#POOL_SIZE} sessions), so ingestion never takes a session or thread the
 * dispatcher sends with. Logs name the source, the webhook id and counts, never anything of a body.
 *
 * <p>Answers: 200 stored (or a replay, stored before), 202 stored but no event type we act on,
 * 408 body not received within the read deadline (the connection is closed), 400 malformed (the field named; "invalid data" for a value the database refused as a data
 * exception, SQLSTATE class 22, which a retry cannot fix), 401 missing, stale or bad signature (or DSN token), 404 unknown
 * source, 413 too large, 429 busy, 503 database unavailable (the provider retries later).
 */
public final class WebhookServer implements AutoCloseable {

    private static final Logger log = LoggerFactory.getLogger(WebhookServer.class);

    private final Javalin app;
    private final BoundedBody bodies;

    private WebhookServer(Javalin app, BoundedBody bodies) {
        this.app = app;
        this.bodies = bodies;
    }

    public static WebhookServer start(DataSource pool, WebhookConfig config, DeliveryEventStore store,
                                      List<DeliveryEventAdapter> adapters, WebhookVerifier verifier) {
        return start(pool, config, store, adapters, verifier, null);
    }

    /**
     * @param verpKey the idempotency key a VERP return address carries ({@code MAILROOM_SMTP_VERP}), for
     *                {@code POST /webhooks/dsn?recipient=ADDR} and the report's own {@code To}; null when off
     */
    public static WebhookServer start(DataSource pool, WebhookConfig config, DeliveryEventStore store,
                                      List<DeliveryEventAdapter> adapters, WebhookVerifier verifier,
                                      java.util.function.Function<String, String> verpKey) {
        Map<String, DeliveryEventAdapter> bySource = new LinkedHashMap<>();
        adapters.forEach(a -> bySource.put(a.source(), a));
        BoundedBody bodies = new BoundedBody(config.maxBodyBytes(), config.readTimeout());
        Handler handler = new Handler(pool, config, store, bySource, verifier, verpKey, bodies);
        Javalin app = Javalin.create(c -> {
            // Requests run on virtual threads: a slow sender parks one until the read deadline, never a
            // thread of a small pool. The platform threads are the acceptor, the selector and Jetty's own.
            HttpListeners.listen(c, "webhooks-http", config.maxInFlight() + 8, config.host(), config.port(),
                    config.readTimeout());
            // the body is read by the handler, bounded; Javalin's own limit is kept above it
            c.http.maxRequestSize = config.maxBodyBytes() + 1L;
            c.routes.post("/webhooks/{source}", handler::handle);
        });
        try {
            app.start();
        } catch (RuntimeException e) {
            bodies.close();
            throw e;
        }
        if (!BindAddress.isLoopback(config.host())) {
            log.info("Delivery-event webhooks listen on {}:{} over plain HTTP; put them behind TLS for providers"
                    + " (docs/OPERATIONS.md, \"Plain HTTP and TLS\")", config.host(), app.port());
        }
        log.info("Delivery-event webhooks on port {}: sources {}{}", app.port(), config.secrets().keySet(),
                config.dsnToken() == null ? "" : " and dsn");
        return new WebhookServer(app, bodies);
    }

    public int port() {
        return app.port();
    }

    @Override
    public void close() {
        app.stop();
        bodies.close();
    }

    private static final class Handler {
        private final DataSource pool;
        private final WebhookConfig config;
        private final DeliveryEventStore store;
        private final Map<String, DeliveryEventAdapter> adapters;
        private final WebhookVerifier verifier;
        private final Semaphore inFlight;
        private final java.util.function.Function<String, String> verpKey;
        private final BoundedBody bodies;

        Handler(DataSource pool, WebhookConfig config, DeliveryEventStore store, Map<String, DeliveryEventAdapter> adapters,
                WebhookVerifier verifier, java.util.function.Function<String, String> verpKey, BoundedBody bodies) {
            this.bodies = bodies;
            this.verpKey = verpKey;
            this.pool = Objects.requireNonNull(pool, "pool");
            this.config = config;
            this.store = store;
            this.adapters = adapters;
            this.verifier = verifier;
            this.inFlight = new Semaphore(config.maxInFlight());
        }

        void handle(Context ctx) {
            boolean held = false;
            try {
                String source = ctx.pathParam("source");
                if (source.equals(DsnIngest.SOURCE) && config.dsnToken() != null) {
                    byte[] report = dsnBody(ctx);
                    if (report != null && (held = slot(ctx))) {
                        dsn(ctx, report);
                    }
                    return;
                }
                DeliveryEventAdapter adapter = adapters.get(source);
                WebhookSecrets secrets = config.secrets().get(source);
                if (adapter == null || secrets == null) {
                    answer(ctx, 404, "unknown_source", "no delivery-event source '" + printable(source) + "' is configured");
                    return;
                }
                byte[] body = body(ctx);
                if (body == null) {
                    return;
                }
                WebhookVerifier.Result verified = verifier.verify(secrets, ctx::header, body);
                if (!(verified instanceof WebhookVerifier.Result.Verified ok)) {
                    log.info("Webhook from {} refused: {}", source, refusal(verified));
                    if (verified instanceof WebhookVerifier.Result.BadHeader) {
                        answer(ctx, 400, "malformed", refusal(verified));
                    } else {
                        answer(ctx, 401, "unauthenticated", refusal(verified));
                    }
                    return;
                }
                if (!(held = slot(ctx))) {
                    return;
                }
                var events = adapter.parse(body);
                // one session for the whole transaction: a refusing database answers 503 after one pool timeout, not three
                var stored = OneSession.transactionResult(pool, c -> store.ingest(c.dsl(), source, ok.webhookId(), events));
                log.debug("Webhook {} from {}: {}", ok.webhookId(), source, stored);
                boolean acted = events.stream().anyMatch(e -> e.kind().rank() > 0);
                ctx.status(stored.replay() || acted ? 200 : 202).json(Map.of("webhookId", ok.webhookId(),
                        "replay", stored.replay(), "stored", stored.stored(), "matched", stored.matched(),
                        "orphans", stored.orphans()));
            } catch (MalformedEventException e) {
                answer(ctx, 400, "malformed", e.getMessage());
            } catch (DataAccessException e) {
                if (SqlStates.isDataException(e)) {
                    // a value the checks before SQL missed: the sender's data, which a retry cannot fix
                    log.info("Delivery event from {} refused: invalid data (SQLSTATE {})", printable(ctx.pathParam("source")),
                            SqlStates.sqlState(e));
                    answer(ctx, 400, "malformed", "invalid data: a value the database cannot store (SQLSTATE "
                            + SqlStates.sqlState(e) + ")");
                    return;
                }
                log.warn("Delivery event not stored: database unavailable ({})", e.sqlState());
                ctx.header("Retry-After", "30");
                answer(ctx, 503, "unavailable", "the database is unavailable; retry later");
            } finally {
                if (held) {
                    inFlight.release();
                }
            }
        }

        /**
         * One of the in-flight slots for the work after the body was read (parsing, the transaction),
         * or false with 429 answered: only that work is bounded by them, so slow senders cannot take them.
         */
        private boolean slot(Context ctx) {
            if (inFlight.tryAcquire()) {
                return true;
            }
            ctx.header("Retry-After", "1");
            answer(ctx, 429, "busy", "too many delivery events at once; retry shortly");
            return false;
        }

        /** The DSN route's body once its bearer token is checked; null with the answer given otherwise. */
        private byte[] dsnBody(Context ctx) {
            String auth = ctx.header("Authorization");
            byte[] expected = ("Bearer " + config.dsnToken()).getBytes(StandardCharsets.UTF_8);
            if (auth == null || !MessageDigest.isEqual(auth.getBytes(StandardCharsets.UTF_8), expected)) {
                answer(ctx, 401, "unauthenticated", "a bearer token is required");
                return null;
            }
            return body(ctx);
        }

        private void dsn(Context ctx, byte[] body) throws MalformedEventException {
            // before any transaction: a bad report writes nothing
            DsnParser.Dsn report = DsnParser.parse(body, verpKey, ctx.queryParam("recipient"));
            var stored = OneSession.transactionResult(pool,
                    c -> store.ingest(c.dsl(), DsnIngest.SOURCE, report.deliveryId(), report.events()));
            ctx.status(200).json(Map.of("deliveryId", report.deliveryId(), "replay", stored.replay(),
                    "stored", stored.stored(), "matched", stored.matched(), "orphans", stored.orphans()));
        }

        /** The body, read within its size and deadline; null with the answer given when it is not to be had. */
        private byte[] body(Context ctx) {
            BoundedBody.Read read = bodies.read(ctx);
            if (read.refusal() != null) {
                answer(ctx, read.refusal().status(), read.refusal().code(), read.refusal().message());
            }
            return read.body();
        }
    }

    private static String refusal(WebhookVerifier.Result r) {
        return switch (r) {
            case WebhookVerifier.Result.MissingHeader m -> "missing header " + m.header();
            case WebhookVerifier.Result.BadTimestamp b -> "webhook-timestamp is not a number of seconds";
            case WebhookVerifier.Result.Stale s -> "webhook-timestamp is more than " + WebhookVerifier.TOLERANCE.toMinutes()
                    + " minutes from now";
            case WebhookVerifier.Result.BadHeader b -> b.header() + " " + b.problem();
            case WebhookVerifier.Result.NoValidSignature n -> "no valid signature (" + n.signaturesSeen() + " v1 signature(s) checked)";
            case WebhookVerifier.Result.Verified v -> "verified";
        };
    }

    private static void answer(Context ctx, int status, String code, String message) {
        ctx.status(status).json(Map.of("error", code, "message", message));
    }

    private static String printable(String s) {
        String cut = s.length() > 40 ? s.substring(0, 40) : s;
        return cut.replaceAll("[^A-Za-z0-9_.-]", "?");
    }
}
