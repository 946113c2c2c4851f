package io.mailroom.orders;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.mailroom.outbox.EnqueuedMessage;
import io.mailroom.outbox.NewMessage;
import io.mailroom.outbox.OutboxEnqueuer;
import io.mailroom.outbox.SqlStates;
import io.mailroom.outbox.WakeUpNotifier;
import org.jooq.DSLContext;
import org.jooq.SQLDialect;
import org.jooq.exception.DataAccessException;
import org.jooq.impl.DSL;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import javax.sql.DataSource;
import java.time.Instant;
import java.util.Objects;
import java.util.Optional;

/**
 * The order write path: the order, its lines and the outbox message of its confirmation email are
 * written in <b>one</b> transaction, so either all of them exist or none does. The outbox message
 * goes through {@link OutboxEnqueuer#enqueue} with the same {@link DSLContext} as the order rows;
 * if the transaction rolls back, no confirmation is ever sent.
 *
 * <p>The confirmation has topic {@value #TOPIC}, aggregate {@value #AGGREGATE_TYPE}/{@code {orderId}},
 * idempotency key {@code email-order-{orderId}} and an {@link OrderDocument} as payload.
 */
public final class OrderService {

    /** Outbox topic of the order confirmation email. */
    public static final String TOPIC = "email.order_confirmation";
    /** Outbox aggregate type of the confirmation; the aggregate id is the order id. */
    public static final String AGGREGATE_TYPE = "order";

    private static final Logger log = LoggerFactory.getLogger(OrderService.class);

    private final DSLContext dsl;
    private final OutboxEnqueuer enqueuer;
    private final WakeUpNotifier wakeUps;
    private final ObjectMapper json;
    private final OrderRepository repository = new OrderRepository();

    /** Database time, dispatchers woken on commit. */
    public OrderService(DSLContext dsl) {
        this(dsl, new OutboxEnqueuer());
    }

    public OrderService(DSLContext dsl, OutboxEnqueuer enqueuer) {
        this(dsl, enqueuer, null);
    }

    /**
     * @param wakeUps if not null, {@link #placeOrder(PlaceOrder)} wakes dispatchers through it after
     *                its commit; give it an enqueuer that does not notify inside the transaction
     *                ({@code new OutboxEnqueuer(null, false)}), which keeps concurrent order commits
     *                from queueing behind each other (see {@link WakeUpNotifier})
     */
    public OrderService(DSLContext dsl, OutboxEnqueuer enqueuer, WakeUpNotifier wakeUps) {
        this.dsl = Objects.requireNonNull(dsl, "dsl");
        this.enqueuer = Objects.requireNonNull(enqueuer, "enqueuer");
        this.wakeUps = wakeUps;
        this.json = OrderJson.mapper();
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
        if (wakeUps != null) {
            wakeUps.wake(TOPIC);
        }
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
        EnqueuedMessage message = enqueuer.enqueue(tx, NewMessage.of(TOPIC, AGGREGATE_TYPE,
                Long.toString(document.orderId()), key, toJson(document)));
        log.debug("Wrote order {} and outbox message {} in the caller's transaction", document.orderId(), message.id());
        return new PlacedOrder(document.orderId(), key, message.id(), order.total(), Instant.parse(document.createdAt()));
    }

    /** The order with its lines, if it exists. */
    public Optional<OrderDocument> findOrder(long orderId) {
        return repository.find(dsl, orderId);
    }

    /** Whether the database answers a {@code SELECT 1} within {@code timeoutSeconds}. */
    public boolean databaseReady(int timeoutSeconds) {
        return repository.ping(dsl, timeoutSeconds);
    }

    private String toJson(OrderDocument document) {
        try {
            return json.writeValueAsString(document);
        } catch (JsonProcessingException e) {
            // a record of strings and numbers always serialises; this would be a programming error
            throw new IllegalStateException("Could not serialise order " + document.orderId(), e);
        }
    }
}
