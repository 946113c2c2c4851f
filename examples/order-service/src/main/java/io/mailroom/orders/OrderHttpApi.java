package io.mailroom.orders;

import com.fasterxml.jackson.annotation.JsonInclude;
import io.javalin.config.JavalinConfig;
import io.javalin.http.Context;
import io.javalin.http.HttpResponseException;
import io.mailroom.outbox.DuplicateIdempotencyKeyException;
import io.mailroom.db.sql.SqlStates;
import org.jooq.exception.DataAccessException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.io.InputStream;
import java.util.Collections;
import java.util.List;
import java.util.Locale;
import java.util.regex.Pattern;

/**
 * The order service's HTTP routes and their error answers.
 *
 * <ul>
 *   <li>{@code POST /orders} (JSON {@link PlaceOrder}, with the customer's optional {@code locale}) → 201
 *       {@code {"orderId", "idempotencyKey"}}
 *       (the latter is the confirmation email's key, {@code email-order-{id}}) with
 *       {@code Location: /orders/{id}}; 400 for any invalid input, 413 for a body over the
 *       limit, 415 for a non-JSON content type. An error answer means nothing was written:
 *       every check runs before the transaction opens. With an optional {@code Idempotency-Key}
 *       header (1..255 visible ASCII characters, else 400 naming it), a repeat of the request
 *       answers exactly as the first did (201, same {@code Location}, same body) plus
 *       {@code Idempotent-Replayed: true}, and writes nothing; the same key with a different
 *       request answers 422 naming the header. See {@link OrderService#placeOrder(PlaceOrder, String)}.</li>
 *   <li>{@code GET /orders/{id}} → 200 {@link OrderDocument}; 400 if the id is not a positive
 *       integer, 404 if there is no such order.</li>
 *   <li>{@code POST /orders/{id}/shipment} (JSON {@link ShipOrder}) → 201 with the shipment and the
 *       shipping notice's key {@code email-order-{id}-shipped}; {@code POST /orders/{id}/cancellation}
 *       (optional JSON {@link CancelOrder}, or no body) → 201 with the cancellation and its email's key
 *       {@code email-order-{id}-cancelled}. Both: 400 naming the field, 404 for an unknown order,
 *       409 naming {@code id} for shipping a cancelled or cancelling a shipped order, 409 naming the
 *       differing field for a second, different shipment or cancellation; an identical repeat answers
 *       as the first did plus {@code Idempotent-Replayed: true}, and writes and sends nothing.</li>
 *   <li>{@code GET /health/live} → 200 while the process serves; {@code GET /health/ready} → 200
 *       when {@code SELECT 1} works, else 503.</li>
 * </ul>
 * Every error body is an {@link ApiError}.
 */
final class OrderHttpApi {

    private static final Logger log = LoggerFactory.getLogger(OrderHttpApi.class);
    private static final Pattern ORDER_ID = Pattern.compile("^[1-9][0-9]{0,18}$");
    private static final int READY_TIMEOUT_SECONDS = 2;
    /** Set to {@code true} on an answer that repeats an earlier one for the same {@code Idempotency-Key}. */
    static final String REPLAYED_HEADER = "Idempotent-Replayed";

    private final OrderService service;
    private final int maxBodyBytes;
    /** Last readiness answer, so that a database outage is logged when it starts and ends, not per probe. */
    private volatile boolean lastReady = true;

    OrderHttpApi(OrderService service, int maxBodyBytes) {
        this.service = service;
        this.maxBodyBytes = maxBodyBytes;
    }

    void register(JavalinConfig config) {
        config.routes.post("/orders", this::placeOrder);
        config.routes.post("/orders/{id}/shipment", this::shipOrder);
        config.routes.post("/orders/{id}/cancellation", this::cancelOrder);
        config.routes.get("/orders/{id}", this::getOrder);
        config.routes.get("/health/live", ctx -> ctx.json(new Health("UP")));
        config.routes.get("/health/ready", this::ready);

        config.routes.exception(InvalidOrderException.class,
                (e, ctx) -> ctx.status(400).json(new ApiError(e.getMessage(), e.field())));
        config.routes.exception(OrderNotFoundException.class,
                (e, ctx) -> ctx.status(404).json(new ApiError(e.getMessage(), e.field())));
        config.routes.exception(OrderConflictException.class,
                (e, ctx) -> ctx.status(409).json(new ApiError(e.getMessage(), e.field())));
        // Unreachable while every email of an order is enqueued under its row lock; if another
        // writer took the key, the transaction rolled back and the client hears a conflict.
        config.routes.exception(DuplicateIdempotencyKeyException.class,
                (e, ctx) -> ctx.status(409).json(new ApiError("the email of this change was already queued ("
                        + e.idempotencyKey() + "); nothing written", "id")));
        config.routes.exception(RequestKeyReusedException.class,
                (e, ctx) -> ctx.status(422).json(new ApiError(e.getMessage(), e.field())));
        config.routes.exception(HttpProblem.class, (e, ctx) -> ctx.status(e.status()).json(e.body()));
        // Javalin's own refusals (unknown path, wrong method, its size limit) in the same JSON shape
        config.routes.exception(HttpResponseException.class,
                (e, ctx) -> ctx.status(e.getStatus()).json(new ApiError(e.getMessage(), null)));
        config.routes.exception(Exception.class, this::unexpected);
    }

    record Created(long orderId, String idempotencyKey) {
    }

    record Health(String status) {
    }

    @JsonInclude(JsonInclude.Include.ALWAYS)
    record Shipped(long orderId, String status, String carrier, String trackingNumber, String trackingUrl, String shippedAt,
                   String idempotencyKey) {
    }

    @JsonInclude(JsonInclude.Include.ALWAYS)
    record Cancelled(long orderId, String status, String reason, String cancelledAt, String idempotencyKey) {
    }

    private void shipOrder(Context ctx) {
        long id = orderId(ctx);
        ShipOrder request = OrderJson.readShipOrder(readJsonBody(ctx, false));
        ShipmentReceipt r = service.shipOrder(id, request);
        if (r.replayed()) {
            ctx.header(REPLAYED_HEADER, "true");
        }
        ctx.status(201).header("Location", "/orders/" + id).json(new Shipped(id, OrderDocument.SHIPPED, r.carrier(),
                r.trackingNumber(), r.trackingUrl(), r.shippedAt().toString(), r.idempotencyKey()));
    }

    private void cancelOrder(Context ctx) {
        long id = orderId(ctx);
        byte[] body = readJsonBody(ctx, true);
        // the reason is optional, so is the body that would carry it
        CancelOrder request = body.length == 0 ? new CancelOrder(null) : OrderJson.readCancelOrder(body);
        CancellationReceipt r = service.cancelOrder(id, request);
        if (r.replayed()) {
            ctx.header(REPLAYED_HEADER, "true");
        }
        ctx.status(201).header("Location", "/orders/" + id).json(new Cancelled(id, OrderDocument.CANCELLED, r.reason(),
                r.cancelledAt().toString(), r.idempotencyKey()));
    }

    /** The body of a JSON request; with {@code mayBeEmpty}, no body at all (and then no Content-Type) is fine. */
    private byte[] readJsonBody(Context ctx, boolean mayBeEmpty) {
        if (mayBeEmpty && ctx.header("Content-Type") == null && ctx.req().getContentLengthLong() <= 0) {
            byte[] body = readBody(ctx);
            if (body.length == 0) {
                return body;
            }
        }
        requireJsonContentType(ctx);
        return readBody(ctx);
    }

    private void placeOrder(Context ctx) {
        requireJsonContentType(ctx);
        String requestKey = requestKey(ctx);
        PlaceOrder order = OrderJson.readPlaceOrder(readBody(ctx));
        OrderReceipt receipt = service.placeOrder(order, requestKey);
        // A repeat gets the first answer, byte for byte, plus a header that says so.
        if (receipt.replayed()) {
            ctx.header(REPLAYED_HEADER, "true");
        }
        ctx.status(201)
                .header("Location", "/orders/" + receipt.orderId())
                .json(new Created(receipt.orderId(), receipt.confirmationKey()));
    }

    /** The {@code Idempotency-Key} header's value, null if absent; 400 naming it if it is given twice or malformed. */
    private static String requestKey(Context ctx) {
        List<String> values = Collections.list(ctx.req().getHeaders(RequestKey.HEADER));
        if (values.isEmpty()) {
            return null;
        }
        if (values.size() > 1) {
            throw new HttpProblem(400, RequestKey.HEADER, RequestKey.HEADER + " must be given once, got " + values.size());
        }
        String key = values.get(0);
        RequestKey.problem(key).ifPresent(problem -> {
            throw new HttpProblem(400, RequestKey.HEADER, RequestKey.HEADER + " " + problem);
        });
        return key;
    }

    private void getOrder(Context ctx) {
        long id = orderId(ctx);
        OrderDocument order = service.findOrder(id)
                .orElseThrow(() -> new HttpProblem(404, "id", "order " + id + " does not exist"));
        ctx.json(order);
    }

    /** The {@code {id}} path parameter; 400 naming it unless it is a positive integer. */
    private static long orderId(Context ctx) {
        String raw = ctx.pathParam("id");
        if (!ORDER_ID.matcher(raw).matches()) {
            throw new HttpProblem(400, "id", "id must be a positive integer");
        }
        try {
            return Long.parseLong(raw);
        } catch (NumberFormatException e) {
            // 19 digits can still exceed Long.MAX_VALUE
            throw new HttpProblem(400, "id", "id must be a positive integer");
        }
    }

    private void ready(Context ctx) {
        boolean ready;
        String state = null;
        try {
            ready = service.databaseReady(READY_TIMEOUT_SECONDS);
        } catch (DataAccessException e) {
            ready = false;
            state = SqlStates.sqlState(e);
        }
        if (ready != lastReady) {
            lastReady = ready;
            if (ready) {
                log.info("Database answers again; ready");
            } else {
                log.warn("Database does not answer SELECT 1 (SQLSTATE {}); not ready", state);
            }
        }
        ctx.status(ready ? 200 : 503).json(new Health(ready ? "UP" : "DOWN"));
    }

    private void requireJsonContentType(Context ctx) {
        String contentType = ctx.header("Content-Type");
        if (contentType == null) {
            throw new HttpProblem(415, "Content-Type", "Content-Type must be application/json");
        }
        String[] parts = contentType.split(";");
        if (!parts[0].trim().toLowerCase(Locale.ROOT).equals("application/json")) {
            throw new HttpProblem(415, "Content-Type", "Content-Type must be application/json");
        }
        for (int i = 1; i < parts.length; i++) {
            String[] param = parts[i].split("=", 2);
            if (param[0].trim().equalsIgnoreCase("charset")) {
                String charset = param.length < 2 ? "" : param[1].trim().replace("\"", "");
                if (!charset.equalsIgnoreCase("utf-8")) {
                    throw new HttpProblem(415, "Content-Type", "Content-Type must be application/json in UTF-8");
                }
            }
        }
    }

    /** The whole body, refusing more than {@code maxBodyBytes} whether or not a Content-Length was sent. */
    private byte[] readBody(Context ctx) {
        long declared = ctx.req().getContentLengthLong();
        if (declared > maxBodyBytes) {
            throw tooLarge();
        }
        try (InputStream in = ctx.req().getInputStream()) {
            byte[] body = in.readNBytes(maxBodyBytes + 1);
            if (body.length > maxBodyBytes) {
                throw tooLarge();
            }
            return body;
        } catch (IOException e) {
            throw new HttpProblem(400, "body", "the body could not be read");
        }
    }

    private HttpProblem tooLarge() {
        return new HttpProblem(413, "body", "the body must be at most " + maxBodyBytes + " bytes");
    }

    private void unexpected(Exception e, Context ctx) {
        if (SqlStates.isConnectionLoss(e)) {
            log.warn("{} {} failed: database unavailable (SQLSTATE {})", ctx.method(), ctx.path(), SqlStates.sqlState(e));
            ctx.status(503).json(new ApiError("database unavailable, try again later", null));
            return;
        }
        log.error("{} {} failed", ctx.method(), ctx.path(), e);
        ctx.status(500).json(new ApiError("internal error", null));
    }
}
