package io.mailroom.orders;

import io.mailroom.orders.jooq.tables.records.OrderCancellationRecord;
import io.mailroom.orders.jooq.tables.records.OrderShipmentRecord;
import io.mailroom.orders.jooq.tables.records.OrdersRecord;
import org.jooq.DSLContext;
import org.jooq.InsertValuesStep6;
import org.jooq.Record2;

import java.math.BigDecimal;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

import static io.mailroom.orders.jooq.Tables.ORDERS;
import static io.mailroom.orders.jooq.Tables.ORDER_CANCELLATION;
import static io.mailroom.orders.jooq.Tables.ORDER_SHIPMENT;
import static io.mailroom.orders.jooq.Tables.ORDER_LINE;
import static io.mailroom.orders.jooq.Tables.ORDER_REQUEST_KEY;

/**
 * The order service's SQL, all of it, written with jOOQ against the generated classes. Every
 * method takes the {@link DSLContext} to run on, so the caller decides the transaction.
 */
final class OrderRepository {

    /**
     * Inserts the order and its lines (two statements whatever the number of lines) and returns the
     * order as it now stands in the database. {@code order} must be validated.
     */
    OrderDocument insert(DSLContext tx, PlaceOrder order) {
        BigDecimal total = order.total();
        Record2<Long, Instant> created = tx.insertInto(ORDERS)
                .set(ORDERS.CUSTOMER_EMAIL, order.customerEmail())
                .set(ORDERS.CUSTOMER_NAME, order.customerName())
                .set(ORDERS.CURRENCY, order.currency())
                .set(ORDERS.TOTAL, total)
                .set(ORDERS.LOCALE, order.localeTag())
                .returningResult(ORDERS.ID, ORDERS.CREATED_AT)
                .fetchSingle();
        long orderId = created.value1();

        var l = ORDER_LINE;
        InsertValuesStep6<?, Long, Integer, String, String, Integer, BigDecimal> insertLines =
                tx.insertInto(l, l.ORDER_ID, l.LINE_NO, l.SKU, l.NAME, l.QUANTITY, l.UNIT_PRICE);
        List<OrderDocument.Line> lines = new ArrayList<>(order.lines().size());
        for (int i = 0; i < order.lines().size(); i++) {
            PlaceOrder.Line line = order.lines().get(i);
            int lineNo = i + 1;
            insertLines = insertLines.values(orderId, lineNo, line.sku(), line.name(), line.quantity(), line.unitPrice());
            lines.add(new OrderDocument.Line(lineNo, line.sku(), line.name(), line.quantity(),
                    OrderDocument.money(line.unitPrice()), OrderDocument.money(line.lineTotal())));
        }
        insertLines.execute();

        return new OrderDocument(orderId, order.customerEmail(), order.customerName(), order.currency(),
                OrderDocument.money(total), OrderDocument.instant(created.value2()), lines, order.localeTag(),
                OrderDocument.PLACED);
    }

    /**
     * The order with its lines and status, or empty if there is none with this id. The statements
     * need no shared snapshot: an order and its lines commit together and are never updated, and a
     * shipment or cancellation, once there, stays.
     */
    Optional<OrderDocument> find(DSLContext dsl, long orderId) {
        var o = dsl.selectFrom(ORDERS).where(ORDERS.ID.eq(orderId)).fetchOptional();
        if (o.isEmpty()) {
            return Optional.empty();
        }
        var order = o.get();
        List<OrderDocument.Line> lines = dsl.selectFrom(ORDER_LINE)
                .where(ORDER_LINE.ORDER_ID.eq(orderId))
                .orderBy(ORDER_LINE.LINE_NO)
                .fetch(r -> new OrderDocument.Line(r.getLineNo(), r.getSku(), r.getName(), r.getQuantity(),
                        OrderDocument.money(r.getUnitPrice()),
                        OrderDocument.money(r.getUnitPrice().multiply(BigDecimal.valueOf(r.getQuantity())))));
        String status = findShipment(dsl, orderId).isPresent() ? OrderDocument.SHIPPED
                : findCancellation(dsl, orderId).isPresent() ? OrderDocument.CANCELLED : OrderDocument.PLACED;
        return Optional.of(new OrderDocument(order.getId(), order.getCustomerEmail(), order.getCustomerName(),
                order.getCurrency(), OrderDocument.money(order.getTotal()), OrderDocument.instant(order.getCreatedAt()),
                lines, order.getLocale(), status));
    }

    /**
     * The order row, locked ({@code SELECT ... FOR UPDATE}) until {@code tx} ends, or empty. Shipping
     * and cancelling take this lock first, so the two (and repeats of either) happen one after the
     * other and each sees what the one before it committed.
     */
    Optional<OrdersRecord> lock(DSLContext tx, long orderId) {
        return tx.selectFrom(ORDERS).where(ORDERS.ID.eq(orderId)).forUpdate().fetchOptional();
    }

    Optional<OrderShipmentRecord> findShipment(DSLContext dsl, long orderId) {
        return dsl.selectFrom(ORDER_SHIPMENT).where(ORDER_SHIPMENT.ORDER_ID.eq(orderId)).fetchOptional();
    }

    /** Inserts the shipment of a locked order; {@code request} must be validated. */
    OrderShipmentRecord insertShipment(DSLContext tx, long orderId, ShipOrder request) {
        var s = ORDER_SHIPMENT;
        return tx.insertInto(s).set(s.ORDER_ID, orderId).set(s.CARRIER, request.carrier())
                .set(s.TRACKING_NUMBER, request.trackingNumber()).set(s.TRACKING_URL, request.trackingUrl())
                .returning().fetchSingle();
    }

    Optional<OrderCancellationRecord> findCancellation(DSLContext dsl, long orderId) {
        return dsl.selectFrom(ORDER_CANCELLATION).where(ORDER_CANCELLATION.ORDER_ID.eq(orderId)).fetchOptional();
    }

    /** Inserts the cancellation of a locked order; {@code request} must be validated. */
    OrderCancellationRecord insertCancellation(DSLContext tx, long orderId, CancelOrder request) {
        var c = ORDER_CANCELLATION;
        return tx.insertInto(c).set(c.ORDER_ID, orderId).set(c.REASON, request.reason()).returning().fetchSingle();
    }

    /** Name of the primary key a second insert of the same {@code Idempotency-Key} violates (23505). */
    static final String REQUEST_KEY_CONSTRAINT = "order_request_key_pkey";

    /** An {@code Idempotency-Key} as stored: the fingerprint of the request that placed {@code orderId}. */
    record StoredRequestKey(String requestHash, long orderId) {
    }

    /** The committed row of {@code key}, if any. */
    Optional<StoredRequestKey> findRequestKey(DSLContext dsl, String key) {
        var k = ORDER_REQUEST_KEY;
        return dsl.select(k.REQUEST_HASH, k.ORDER_ID).from(k).where(k.IDEMPOTENCY_KEY.eq(key))
                .fetchOptional(r -> new StoredRequestKey(r.value1(), r.value2()));
    }

    /**
     * Records that {@code key} placed {@code orderId}, in the order's transaction {@code tx}. If a
     * concurrent transaction inserted the same key, this waits for it; once it has committed, this
     * fails with 23505 on {@value #REQUEST_KEY_CONSTRAINT} (and PostgreSQL aborts {@code tx}).
     */
    void insertRequestKey(DSLContext tx, String key, String requestHash, long orderId) {
        var k = ORDER_REQUEST_KEY;
        tx.insertInto(k).set(k.IDEMPOTENCY_KEY, key).set(k.REQUEST_HASH, requestHash).set(k.ORDER_ID, orderId).execute();
    }

    /** {@code SELECT 1}: whether the database answers. */
    boolean ping(DSLContext dsl, int timeoutSeconds) {
        return dsl.selectOne().queryTimeout(timeoutSeconds).fetchOne() != null;
    }
}
