package io.mailroom.orders;

import io.mailroom.orders.jooq.tables.records.OrderCancellationRecord;
import io.mailroom.orders.jooq.tables.records.OrderShipmentRecord;
import io.mailroom.orders.jooq.tables.records.OrdersRecord;
import io.mailroom.email.api.EmailOutbox;
import io.mailroom.email.api.OutgoingEmail;
import io.mailroom.outbox.EnqueuedMessage;
import io.mailroom.outbox.OutboxEnqueuer;
import io.mailroom.db.sql.SqlStates;
import io.mailroom.outbox.WakeUpNotifier;
import org.jooq.DSLContext;
import org.jooq.SQLDialect;
import org.jooq.exception.DataAccessException;
import org.jooq.impl.DSL;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import javax.sql.DataSource;
import java.math.BigDecimal;
import java.math.RoundingMode;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;

/**
 * The order write path. Each business change and the outbox message of its email are written in
 * <b>one</b> transaction, so either both exist or neither does: placing an order (its rows and the
 * confirmation), shipping it (the shipment and the shipping notice), cancelling it (the
 * cancellation and its email). Every email goes through {@link EmailOutbox#enqueue} with the same
 * {@link DSLContext} as the business rows; if the transaction rolls back, no email is ever sent.
 *
 * <p>The emails, all about aggregate {@value #AGGREGATE_TYPE}/{@code {orderId}} and in the order's
 * {@link PlaceOrder#localeTag() locale}:
 * <ul>
 *   <li>template {@value #CONFIRMATION_TEMPLATE} (topic {@value #TOPIC}), key {@code email-order-{id}};</li>
 *   <li>template {@value #SHIPPED_TEMPLATE} (topic {@value #SHIPPED_TOPIC}), key {@code email-order-{id}-shipped};</li>
 *   <li>template {@value #CANCELLED_TEMPLATE} (topic {@value #CANCELLED_TOPIC}), key {@code email-order-{id}-cancelled}.</li>
 * </ul>
 */
public final class OrderService {

    public static final String CONFIRMATION_TEMPLATE = "order_confirmation";
    public static final String SHIPPED_TEMPLATE = "order_shipped";
    public static final String CANCELLED_TEMPLATE = "order_cancelled";
    /** Outbox topic of the order confirmation email. */
    public static final String TOPIC = OutgoingEmail.TOPIC_PREFIX + CONFIRMATION_TEMPLATE;
    public static final String SHIPPED_TOPIC = OutgoingEmail.TOPIC_PREFIX + SHIPPED_TEMPLATE;
    public static final String CANCELLED_TOPIC = OutgoingEmail.TOPIC_PREFIX + CANCELLED_TEMPLATE;
    /** Outbox aggregate type of the order's emails; the aggregate id is the order id. */
    public static final String AGGREGATE_TYPE = "order";

    private static final Logger log = LoggerFactory.getLogger(OrderService.class);

    private final DSLContext dsl;
    private final EmailOutbox outbox;
    private final WakeUpNotifier wakeUps;
    private final OrderRepository repository = new OrderRepository();

    /** Database time, dispatchers woken on commit. */
    public OrderService(DSLContext dsl) {
        this(dsl, new OutboxEnqueuer());
    }

    public OrderService(DSLContext dsl, OutboxEnqueuer enqueuer) {
        this(dsl, enqueuer, null);
    }

    /**
     * @param wakeUps if not null, every write wakes dispatchers through it after its commit; give it
     *                an enqueuer that does not notify inside the transaction
     *                ({@code new OutboxEnqueuer(null, false)}), which keeps concurrent order commits
     *                from queueing behind each other (see {@link WakeUpNotifier})
     */
    public OrderService(DSLContext dsl, OutboxEnqueuer enqueuer, WakeUpNotifier wakeUps) {
        this.dsl = Objects.requireNonNull(dsl, "dsl");
        this.outbox = new EmailOutbox(Objects.requireNonNull(enqueuer, "enqueuer"));
        this.wakeUps = wakeUps;
    }

    /** Database time, dispatchers woken after each commit through their own session from {@code dataSource}. */
    public static OrderService withWakeUpsAfterCommit(DataSource dataSource) {
        return new OrderService(DSL.using(dataSource, SQLDialect.POSTGRES), new OutboxEnqueuer(null, false),
                new WakeUpNotifier(dataSource));
    }

    /** The confirmation's business-effect key: stable for the order, whatever retries happen. */
    public static String idempotencyKey(long orderId) {
        return "email-order-" + orderId;
    }

    /** The shipping notice's business-effect key. */
    public static String shippedKey(long orderId) {
        return idempotencyKey(orderId) + "-shipped";
    }

    /** The cancellation email's business-effect key. */
    public static String cancelledKey(long orderId) {
        return idempotencyKey(orderId) + "-cancelled";
    }

    /**
     * Validates the request, then writes the order, its lines and the confirmation's outbox message
     * in one new transaction and commits it.
     *
     * @throws InvalidOrderException before any database access, naming the offending field
     */
    public PlacedOrder placeOrder(PlaceOrder order) {
        order.validate();
        PlacedOrder placed = dsl.transactionResult(cfg -> placeOrder(cfg.dsl(), order));
        afterCommit(placed, order);
        return placed;
    }

    /**
     * {@link #placeOrder(PlaceOrder)} at most once per {@code requestKey} (the {@code Idempotency-Key}
     * of {@code POST /orders}): the key is stored with the request's {@link RequestFingerprint} in
     * the order's own transaction, so it exists exactly when the order does. A repeat of the request
     * under the same key writes nothing and answers with the order the key placed; requests racing
     * with the same key make one order between them (the others wait on the key's primary key, roll
     * back when the first commits and then answer as repeats). Without a key ({@code null}) every
     * call places an order.
     *
     * @throws InvalidOrderException before any database access, naming the offending field or the
     *         {@code Idempotency-Key} header
     * @throws RequestKeyReusedException if the key already placed an order from a different request
     */
    public OrderReceipt placeOrder(PlaceOrder order, String requestKey) {
        order.validate();
        if (requestKey == null) {
            return new OrderReceipt(placeOrder(order).orderId(), false);
        }
        RequestKey.require(requestKey);
        String hash = RequestFingerprint.of(order);
        Optional<OrderReceipt> earlier = replay(requestKey, hash);
        if (earlier.isPresent()) {
            return earlier.get();
        }
        PlacedOrder placed;
        try {
            placed = dsl.transactionResult(cfg -> placeKeyed(cfg.dsl(), order, requestKey, hash));
        } catch (DataAccessException e) {
            if (!SqlStates.isUniqueViolation(e, OrderRepository.REQUEST_KEY_CONSTRAINT)) {
                throw e;
            }
            // A concurrent request with this key committed first; ours rolled back, order and message with it.
            log.debug("Order request lost the race for its Idempotency-Key; answering with the winner's order");
            return replay(requestKey, hash).orElseThrow(() -> e);
        }
        afterCommit(placed, order);
        return new OrderReceipt(placed.orderId(), false);
    }

    /** The order, its message and the key row in the caller's transaction {@code tx}. */
    PlacedOrder placeKeyed(DSLContext tx, PlaceOrder order, String requestKey, String requestHash) {
        PlacedOrder placed = placeOrder(tx, order);
        repository.insertRequestKey(tx, requestKey, requestHash, placed.orderId());
        return placed;
    }

    /** The earlier answer for {@code requestKey}, if it placed an order; a different request under it is refused. */
    private Optional<OrderReceipt> replay(String requestKey, String requestHash) {
        return repository.findRequestKey(dsl, requestKey).map(stored -> {
            if (!stored.requestHash().equals(requestHash)) {
                throw new RequestKeyReusedException();
            }
            log.info("Repeated order request answered with order {}; nothing written", stored.orderId());
            return new OrderReceipt(stored.orderId(), true);
        });
    }

    private void afterCommit(PlacedOrder placed, PlaceOrder order) {
        wake(TOPIC);
        log.info("Placed order {} ({} lines, total {} {}); confirmation queued as {} (outbox message {})",
                placed.orderId(), order.lines().size(), placed.total().toPlainString(), order.currency(),
                placed.idempotencyKey(), placed.outboxMessageId());
    }

    /**
     * Writes the order, its lines and the confirmation's outbox message in the caller's transaction
     * {@code tx} (the context handed to {@code dsl.transaction(cfg -> ...)} as {@code cfg.dsl()});
     * nothing is committed here. If the caller rolls back, all three go. Given a non-transactional
     * context, each statement would commit on its own and the guarantee is lost.
     *
     * @throws InvalidOrderException before any database access, naming the offending field
     * @throws io.mailroom.outbox.DuplicateIdempotencyKeyException if the confirmation key is taken
     *         (PostgreSQL has then aborted {@code tx}: roll it back)
     */
    public PlacedOrder placeOrder(DSLContext tx, PlaceOrder order) {
        order.validate();
        OrderDocument document = repository.insert(tx, order);
        String key = idempotencyKey(document.orderId());
        EnqueuedMessage message = outbox.enqueue(tx, email(CONFIRMATION_TEMPLATE, key, document.orderId(),
                order.customerEmail(), order.customerName(), order.localeTag(),
                Map.of("customer", customer(order.customerName()), "order", confirmationData(document))));
        log.debug("Wrote order {} and outbox message {} in the caller's transaction", document.orderId(), message.id());
        return new PlacedOrder(document.orderId(), key, message.id(), order.total(), Instant.parse(document.createdAt()));
    }

    /**
     * Records that the order was handed to a carrier and enqueues the shipping notice, in one new
     * transaction. A repeat of the same request (same carrier, tracking number and URL) writes
     * nothing and answers as the first did.
     *
     * @throws InvalidOrderException before any database access, naming the offending field
     * @throws OrderNotFoundException if there is no such order
     * @throws OrderConflictException if the order was cancelled, or shipped with other details
     */
    public ShipmentReceipt shipOrder(long orderId, ShipOrder request) {
        request.validate();
        ShipmentReceipt receipt = dsl.transactionResult(cfg -> {
            DSLContext tx = cfg.dsl();
            OrdersRecord order = repository.lock(tx, orderId).orElseThrow(() -> new OrderNotFoundException(orderId));
            if (repository.findCancellation(tx, orderId).isPresent()) {
                throw new OrderConflictException("id", "order " + orderId + " was cancelled; it cannot be shipped");
            }
            Optional<OrderShipmentRecord> earlier = repository.findShipment(tx, orderId);
            if (earlier.isPresent()) {
                return replayed(earlier.get(), request);
            }
            OrderShipmentRecord shipment = repository.insertShipment(tx, orderId, request);
            Map<String, Object> data = new LinkedHashMap<>();
            data.put("customer", customer(order.getCustomerName()));
            data.put("order", Map.of("id", Long.toString(orderId)));
            data.put("shipment", shipmentData(shipment));
            outbox.enqueue(tx, email(SHIPPED_TEMPLATE, shippedKey(orderId), orderId, order.getCustomerEmail(),
                    order.getCustomerName(), order.getLocale(), data));
            return receipt(shipment, false);
        });
        if (!receipt.replayed()) {
            wake(SHIPPED_TOPIC);
            log.info("Shipped order {} with {}; notice queued as {}", orderId, request.carrier(), receipt.idempotencyKey());
        }
        return receipt;
    }

    /**
     * Records the cancellation of an order that has not shipped and enqueues its email, in one new
     * transaction. A repeat of the same request (same reason, or none again) writes nothing and
     * answers as the first did.
     *
     * @throws InvalidOrderException before any database access, naming the offending field
     * @throws OrderNotFoundException if there is no such order
     * @throws OrderConflictException if the order has shipped, or was cancelled with another reason
     */
    public CancellationReceipt cancelOrder(long orderId, CancelOrder request) {
        request.validate();
        CancellationReceipt receipt = dsl.transactionResult(cfg -> {
            DSLContext tx = cfg.dsl();
            OrdersRecord order = repository.lock(tx, orderId).orElseThrow(() -> new OrderNotFoundException(orderId));
            if (repository.findShipment(tx, orderId).isPresent()) {
                throw new OrderConflictException("id", "order " + orderId + " has shipped; it cannot be cancelled");
            }
            Optional<OrderCancellationRecord> earlier = repository.findCancellation(tx, orderId);
            if (earlier.isPresent()) {
                if (!Objects.equals(earlier.get().getReason(), request.reason())) {
                    throw new OrderConflictException("reason", "order " + orderId
                            + " was already cancelled with another reason; a cancellation is recorded once");
                }
                log.info("Repeated cancellation of order {} answered as the first; nothing written", orderId);
                return receipt(earlier.get(), true);
            }
            OrderCancellationRecord cancellation = repository.insertCancellation(tx, orderId, request);
            Map<String, Object> cancelled = new LinkedHashMap<>();
            cancelled.put("reason", cancellation.getReason());
            cancelled.put("cancelledAt", cancellation.getCancelledAt());
            Map<String, Object> data = new LinkedHashMap<>();
            data.put("customer", customer(order.getCustomerName()));
            data.put("order", Map.of("id", Long.toString(orderId), "currency", order.getCurrency(),
                    "total", order.getTotal().setScale(PlaceOrder.MONEY_SCALE, RoundingMode.UNNECESSARY)));
            data.put("cancellation", cancelled);
            outbox.enqueue(tx, email(CANCELLED_TEMPLATE, cancelledKey(orderId), orderId, order.getCustomerEmail(),
                    order.getCustomerName(), order.getLocale(), data));
            return receipt(cancellation, false);
        });
        if (!receipt.replayed()) {
            wake(CANCELLED_TOPIC);
            log.info("Cancelled order {}; email queued as {}", orderId, receipt.idempotencyKey());
        }
        return receipt;
    }

    /** The order with its lines, if it exists. */
    public Optional<OrderDocument> findOrder(long orderId) {
        return repository.find(dsl, orderId);
    }

    /** Whether the database answers a {@code SELECT 1} within {@code timeoutSeconds}. */
    public boolean databaseReady(int timeoutSeconds) {
        return repository.ping(dsl, timeoutSeconds);
    }

    private void wake(String topic) {
        if (wakeUps != null) {
            wakeUps.wake(topic);
        }
    }

    private static ShipmentReceipt replayed(OrderShipmentRecord earlier, ShipOrder request) {
        String differs = !earlier.getCarrier().equals(request.carrier()) ? "carrier"
                : !earlier.getTrackingNumber().equals(request.trackingNumber()) ? "trackingNumber"
                : !Objects.equals(earlier.getTrackingUrl(), request.trackingUrl()) ? "trackingUrl" : null;
        if (differs != null) {
            throw new OrderConflictException(differs, "order " + earlier.getOrderId() + " was already shipped with another "
                    + differs + "; a shipment is recorded once");
        }
        log.info("Repeated shipment of order {} answered as the first; nothing written", earlier.getOrderId());
        return receipt(earlier, true);
    }

    private static ShipmentReceipt receipt(OrderShipmentRecord s, boolean replayed) {
        return new ShipmentReceipt(s.getOrderId(), s.getCarrier(), s.getTrackingNumber(), s.getTrackingUrl(),
                s.getShippedAt(), shippedKey(s.getOrderId()), replayed);
    }

    private static CancellationReceipt receipt(OrderCancellationRecord c, boolean replayed) {
        return new CancellationReceipt(c.getOrderId(), c.getReason(), c.getCancelledAt(), cancelledKey(c.getOrderId()), replayed);
    }

    /**
     * The ordering key of every email of an order, {@code order-<id>}: the shipping notice (or the
     * cancellation) is not claimed while the confirmation is still waiting or being sent, so the
     * customer reads them in the order they happened.
     */
    public static String orderingKey(long orderId) {
        return AGGREGATE_TYPE + "-" + orderId;
    }

    private static OutgoingEmail email(String template, String key, long orderId, String address, String name, String locale,
                                       Map<String, ?> data) {
        return OutgoingEmail.template(template)
                .to(address, name)
                .locale(locale)
                .about(AGGREGATE_TYPE, Long.toString(orderId))
                .idempotencyKey(key)
                .orderingKey(orderingKey(orderId))
                .data(data)
                .build();
    }

    private static Map<String, Object> customer(String name) {
        return Map.of("name", name.strip());
    }

    /** What the order_confirmation template reads: amounts as exact decimals, the time as ISO-8601. */
    private static Map<String, Object> confirmationData(OrderDocument d) {
        List<Map<String, Object>> lines = new ArrayList<>(d.lines().size());
        for (OrderDocument.Line l : d.lines()) {
            lines.add(Map.of("sku", l.sku(), "name", l.name(), "quantity", l.quantity(),
                    "unitPrice", new BigDecimal(l.unitPrice()), "amount", new BigDecimal(l.lineTotal())));
        }
        return Map.of("id", Long.toString(d.orderId()), "currency", d.currency(), "total", new BigDecimal(d.total()),
                "createdAt", d.createdAt(), "lines", lines);
    }

    private static Map<String, Object> shipmentData(OrderShipmentRecord s) {
        Map<String, Object> shipment = new LinkedHashMap<>();
        shipment.put("carrier", s.getCarrier());
        shipment.put("trackingNumber", s.getTrackingNumber());
        shipment.put("trackingUrl", s.getTrackingUrl()); // null when none: the template leaves the link out
        shipment.put("shippedAt", s.getShippedAt());
        return shipment;
    }
}
