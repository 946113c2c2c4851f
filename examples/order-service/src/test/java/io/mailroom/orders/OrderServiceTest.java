package io.mailroom.orders;

import com.fasterxml.jackson.databind.JsonNode;
import io.mailroom.outbox.DuplicateIdempotencyKeyException;
import io.mailroom.outbox.NewMessage;
import io.mailroom.outbox.OutboxEnqueuer;
import io.mailroom.db.sql.SqlStates;
import io.mailroom.testing.PostgresExtension;
import org.jooq.DSLContext;
import org.jooq.exception.DataAccessException;
import org.jooq.impl.DSL;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import java.math.BigDecimal;
import java.time.Instant;

import static io.mailroom.orders.jooq.Tables.ORDERS;
import static io.mailroom.orders.jooq.Tables.ORDER_LINE;
import static io.mailroom.db.jooq.Tables.OUTBOX_EFFECT;
import static io.mailroom.db.jooq.Tables.OUTBOX_MESSAGE;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * The order write path against a real, migrated PostgreSQL: one transaction holds the order, its
 * lines and the confirmation's outbox message, so they commit together and roll back together.
 * The tests share one database and compare table counts before and after.
 */
class OrderServiceTest {

    @RegisterExtension
    static final PostgresExtension pg = new PostgresExtension();

    private OrderService service() {
        return new OrderService(pg.dsl());
    }

    @Test
    void withWakeUpsAfterCommitDispatchersAreWokenOnceTheOrderIsCommitted() throws Exception {
        try (java.sql.Connection listener = pg.newConnection()) {
            listener.setAutoCommit(true);
            try (java.sql.Statement st = listener.createStatement()) {
                st.execute("LISTEN " + OutboxEnqueuer.CHANNEL);
            }
            OrderService service = OrderService.withWakeUpsAfterCommit(pg.dataSource());
            PlacedOrder placed = service.placeOrder(OrderFixtures.sample());

            java.util.List<String> payloads = new java.util.ArrayList<>();
            org.awaitility.Awaitility.await().atMost(java.time.Duration.ofSeconds(10)).until(() -> {
                var batch = listener.unwrap(org.postgresql.PGConnection.class).getNotifications(100);
                if (batch != null) {
                    for (var n : batch) {
                        payloads.add(n.getParameter());
                    }
                }
                return payloads.contains(OrderService.TOPIC);
            });
            assertThat(pg.dsl().fetchCount(OUTBOX_MESSAGE, OUTBOX_MESSAGE.ID.eq(placed.outboxMessageId())))
                    .as("the message is visible when the wake-up arrives").isEqualTo(1);
        }
    }

    @Test
    void committedOrderLeavesTheOrderItsLinesAndOnePendingConfirmation() throws Exception {
        Counts before = counts();

        PlacedOrder placed = service().placeOrder(OrderFixtures.sample());

        assertThat(counts()).isEqualTo(before.plus(1, 2, 1));
        long id = placed.orderId();
        assertThat(placed.idempotencyKey()).isEqualTo("email-order-" + id);
        assertThat(placed.total()).isEqualByComparingTo("18.50");

        var order = pg.dsl().selectFrom(ORDERS).where(ORDERS.ID.eq(id)).fetchSingle();
        assertThat(order.getCustomerEmail()).isEqualTo("ada@example.com");
        assertThat(order.getCustomerName()).isEqualTo("Ada Lovelace");
        assertThat(order.getCurrency()).isEqualTo("EUR");
        assertThat(order.getTotal()).isEqualTo(new BigDecimal("18.50"));
        assertThat(order.getCreatedAt()).isEqualTo(placed.createdAt());
        var lines = pg.dsl().selectFrom(ORDER_LINE).where(ORDER_LINE.ORDER_ID.eq(id)).orderBy(ORDER_LINE.LINE_NO).fetch();
        assertThat(lines).extracting(r -> r.getLineNo() + ":" + r.getSku() + ":" + r.getQuantity() + ":" + r.getUnitPrice())
                .containsExactly("1:SKU-1:2:4.25", "2:SKU-2:1:10.00");

        var messages = pg.dsl().selectFrom(OUTBOX_MESSAGE)
                .where(OUTBOX_MESSAGE.IDEMPOTENCY_KEY.eq("email-order-" + id)).fetch();
        assertThat(messages).hasSize(1);
        var message = messages.getFirst();
        assertThat(message.getId()).isEqualTo(placed.outboxMessageId());
        assertThat(message.getStatus()).isEqualTo("pending");
        assertThat(message.getTopic()).isEqualTo("email.order_confirmation");
        assertThat(message.getAggregateType()).isEqualTo("order");
        assertThat(message.getAggregateId()).isEqualTo(Long.toString(id));
        assertThat(message.getAttempts()).isZero();
        assertThat(pg.dsl().fetchCount(OUTBOX_EFFECT, OUTBOX_EFFECT.IDEMPOTENCY_KEY.eq("email-order-" + id)))
                .isEqualTo(1);

        // the email API's envelope: template, locale, recipient and the template's data
        JsonNode payload = OrderJson.mapper().readTree(message.getPayload().data());
        assertThat(payload.get("v").asInt()).isEqualTo(1);
        assertThat(payload.get("template").asText()).isEqualTo("order_confirmation");
        assertThat(payload.get("locale").asText()).isEqualTo("en");
        assertThat(payload.get("to").get("address").asText()).isEqualTo("ada@example.com");
        assertThat(payload.get("to").get("name").asText()).isEqualTo("Ada Lovelace");
        JsonNode data = payload.get("data");
        assertThat(data.get("customer").get("name").asText()).isEqualTo("Ada Lovelace");
        JsonNode o = data.get("order");
        assertThat(o.get("id").asText()).isEqualTo(Long.toString(id));
        assertThat(o.get("currency").asText()).isEqualTo("EUR");
        assertThat(o.get("total").decimalValue()).isEqualByComparingTo("18.50");
        assertThat(Instant.parse(o.get("createdAt").asText())).isEqualTo(order.getCreatedAt());
        assertThat(o.get("lines")).hasSize(2);
        JsonNode first = o.get("lines").get(0);
        assertThat(first.get("sku").asText()).isEqualTo("SKU-1");
        assertThat(first.get("name").asText()).isEqualTo("Notebook");
        assertThat(first.get("quantity").asInt()).isEqualTo(2);
        assertThat(first.get("unitPrice").decimalValue()).isEqualByComparingTo("4.25");
        assertThat(first.get("amount").decimalValue()).isEqualByComparingTo("8.50");
        assertThat(o.get("lines").get(1).get("unitPrice").decimalValue()).isEqualByComparingTo("10.00");

        // GET /orders/{id} shows the order the email was made from
        OrderDocument found = service().findOrder(id).orElseThrow();
        assertThat(found.total()).isEqualTo("18.50");
        assertThat(found.locale()).isEqualTo("en");
        assertThat(found.status()).isEqualTo(OrderDocument.PLACED);
        assertThat(found.lines()).extracting(OrderDocument.Line::lineTotal).containsExactly("8.50", "10.00");
    }

    @Test
    void constraintViolationOnTheOrderAfterTheEnqueueLeavesNeitherRow() {
        Counts before = counts();
        long[] orderId = new long[1];

        assertThatThrownBy(() -> pg.dsl().transaction(cfg -> {
            DSLContext tx = cfg.dsl();
            orderId[0] = service().placeOrder(tx, OrderFixtures.sample()).orderId();
            // the outbox row exists in this transaction ...
            assertThat(tx.fetchCount(OUTBOX_MESSAGE,
                    OUTBOX_MESSAGE.IDEMPOTENCY_KEY.eq(OrderService.idempotencyKey(orderId[0])))).isEqualTo(1);
            // ... when the order then breaks its CHECK (total >= 0)
            tx.update(ORDERS).set(ORDERS.TOTAL, new BigDecimal("-1.00")).where(ORDERS.ID.eq(orderId[0])).execute();
        })).isInstanceOfSatisfying(DataAccessException.class,
                e -> assertThat(SqlStates.sqlState(e)).isEqualTo("23514"));

        assertThat(orderId[0]).isPositive();
        assertThat(pg.dsl().fetchCount(ORDERS, ORDERS.ID.eq(orderId[0]))).isZero();
        assertThat(pg.dsl().fetchCount(OUTBOX_MESSAGE,
                OUTBOX_MESSAGE.IDEMPOTENCY_KEY.eq(OrderService.idempotencyKey(orderId[0])))).isZero();
        assertThat(counts()).isEqualTo(before);
    }

    @Test
    void exceptionInTheCallersTransactionAfterTheEnqueueLeavesNeitherRow() {
        Counts before = counts();

        assertThatThrownBy(() -> pg.dsl().transaction(cfg -> {
            service().placeOrder(cfg.dsl(), OrderFixtures.sample());
            throw new IllegalStateException("payment declined");
        })).isInstanceOf(IllegalStateException.class).hasMessage("payment declined");

        assertThat(counts()).isEqualTo(before);
    }

    @Test
    void failedEnqueueRollsTheOrderBack() {
        // take the confirmation key of the next order before it exists
        long next = pg.dsl().select(DSL.field("nextval(pg_get_serial_sequence('orders', 'id'))", Long.class))
                .fetchSingle().value1() + 1;
        String key = OrderService.idempotencyKey(next);
        pg.dsl().transaction(cfg -> new OutboxEnqueuer().enqueue(cfg.dsl(),
                NewMessage.of("test.squatter", "order", Long.toString(next), key, "{}")));
        Counts before = counts();

        assertThatThrownBy(() -> service().placeOrder(OrderFixtures.sample()))
                .isInstanceOfSatisfying(DuplicateIdempotencyKeyException.class, e -> {
                    assertThat(e.idempotencyKey()).isEqualTo(key);
                    assertThat(SqlStates.sqlState(e)).isEqualTo(SqlStates.UNIQUE_VIOLATION);
                });

        assertThat(pg.dsl().fetchCount(ORDERS, ORDERS.ID.eq(next))).isZero();
        assertThat(counts()).isEqualTo(before);
    }

    @Test
    void invalidOrderWritesNothingInEitherVariant() {
        Counts before = counts();
        PlaceOrder invalid = OrderFixtures.withCurrency("eur");

        assertThatThrownBy(() -> service().placeOrder(invalid))
                .isInstanceOfSatisfying(InvalidOrderException.class, e -> assertThat(e.field()).isEqualTo("currency"));
        assertThatThrownBy(() -> pg.dsl().transaction(cfg -> service().placeOrder(cfg.dsl(), invalid)))
                .isInstanceOfSatisfying(InvalidOrderException.class, e -> assertThat(e.field()).isEqualTo("currency"));

        assertThat(counts()).isEqualTo(before);
    }

    @Test
    void callerCanPlaceSeveralOrdersInOneTransaction() {
        Counts before = counts();

        pg.dsl().transaction(cfg -> {
            service().placeOrder(cfg.dsl(), OrderFixtures.sample());
            service().placeOrder(cfg.dsl(), OrderFixtures.withLine(OrderFixtures.line("S", "N", 1, "0")));
        });

        assertThat(counts()).isEqualTo(before.plus(2, 3, 2));
    }

    @Test
    void findOrderOfAnUnknownIdIsEmpty() {
        assertThat(service().findOrder(Long.MAX_VALUE)).isEmpty();
    }

    @Test
    void databaseReadiness() {
        assertThat(service().databaseReady(2)).isTrue();
    }

    private record Counts(int orders, int lines, int messages, int effects) {
        Counts plus(int newOrders, int newLines, int newMessages) {
            return new Counts(orders + newOrders, lines + newLines, messages + newMessages, effects + newMessages);
        }
    }

    private static Counts counts() {
        DSLContext dsl = pg.dsl();
        return new Counts(dsl.fetchCount(ORDERS), dsl.fetchCount(ORDER_LINE), dsl.fetchCount(OUTBOX_MESSAGE),
                dsl.fetchCount(OUTBOX_EFFECT));
    }
}
