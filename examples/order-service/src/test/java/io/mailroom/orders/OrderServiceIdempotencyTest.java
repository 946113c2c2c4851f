package io.mailroom.orders;

import io.mailroom.testing.PostgresExtension;
import org.jooq.DSLContext;
import org.jooq.SQLDialect;
import org.jooq.impl.DSL;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import java.math.BigDecimal;
import java.sql.Connection;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;

import static io.mailroom.orders.jooq.Tables.ORDERS;
import static io.mailroom.orders.jooq.Tables.ORDER_REQUEST_KEY;
import static io.mailroom.db.jooq.Tables.OUTBOX_MESSAGE;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

/**
 * {@link OrderService#placeOrder(PlaceOrder, String)} over a real PostgreSQL: the key row commits
 * with the order, a request that races another one with the same key waits for it and answers
 * with its order, and real threads with one key make one order.
 */
class OrderServiceIdempotencyTest {

    @RegisterExtension
    static final PostgresExtension pg = new PostgresExtension();

    private final OrderService service = new OrderService(pg.dsl());

    @Test
    void theKeyIsStoredWithTheOrderAndARepeatWritesNothing() {
        String key = UUID.randomUUID().toString();
        OrderReceipt first = service.placeOrder(OrderFixtures.sample(), key);
        assertThat(first.replayed()).isFalse();
        var row = pg.dsl().selectFrom(ORDER_REQUEST_KEY).where(ORDER_REQUEST_KEY.IDEMPOTENCY_KEY.eq(key)).fetchSingle();
        assertThat(row.getOrderId()).isEqualTo(first.orderId());
        assertThat(row.getRequestHash()).isEqualTo(RequestFingerprint.of(OrderFixtures.sample())).hasSize(64);
        int orders = pg.dsl().fetchCount(ORDERS);

        OrderReceipt again = service.placeOrder(OrderFixtures.sample(), key);

        assertThat(again).isEqualTo(new OrderReceipt(first.orderId(), true));
        assertThat(pg.dsl().fetchCount(ORDERS)).isEqualTo(orders);
    }

    @Test
    void theFingerprintIgnoresHowAPriceIsSpelledButNotWhatTheOrderIs() {
        PlaceOrder sample = OrderFixtures.sample();
        PlaceOrder respelled = OrderFixtures.withLines(List.of(
                OrderFixtures.line("SKU-1", "Notebook", 2, "4.250"), OrderFixtures.line("SKU-2", "Pen set", 1, "1E+1")));
        assertThat(RequestFingerprint.of(respelled)).isEqualTo(RequestFingerprint.of(sample));
        assertThat(RequestFingerprint.of(OrderFixtures.withName("Ada  Lovelace"))).isNotEqualTo(RequestFingerprint.of(sample));
        assertThat(RequestFingerprint.of(OrderFixtures.withEmail("Ada@example.com"))).isNotEqualTo(RequestFingerprint.of(sample));
        // lines are an ordered list: swapping them is another order
        assertThat(RequestFingerprint.of(OrderFixtures.withLines(List.of(sample.lines().get(1), sample.lines().get(0)))))
                .isNotEqualTo(RequestFingerprint.of(sample));
        // a quote inside a value cannot shift text from one field into the next
        assertThat(RequestFingerprint.of(new PlaceOrder("a@b.co", "x\",\"y", "EUR", sample.lines())))
                .isNotEqualTo(RequestFingerprint.of(new PlaceOrder("a@b.co", "x", "EUR", sample.lines())));
        // the language is part of the order; no locale and "en" are the same order, hashed as before locales existed
        assertThat(RequestFingerprint.of(sample.withLocale("vi"))).isNotEqualTo(RequestFingerprint.of(sample));
        assertThat(RequestFingerprint.of(sample.withLocale("vi"))).isEqualTo(RequestFingerprint.of(sample.withLocale("VI")));
        assertThat(RequestFingerprint.of(sample.withLocale("en"))).isEqualTo(RequestFingerprint.of(sample));
    }

    @Test
    void aDifferentRequestUnderAUsedKeyIsRefusedAndWritesNothing() {
        String key = UUID.randomUUID().toString();
        service.placeOrder(OrderFixtures.sample(), key);
        int orders = pg.dsl().fetchCount(ORDERS);

        assertThatThrownBy(() -> service.placeOrder(OrderFixtures.withCurrency("USD"), key))
                .isInstanceOfSatisfying(RequestKeyReusedException.class,
                        e -> assertThat(e.field()).isEqualTo("Idempotency-Key"));
        assertThat(pg.dsl().fetchCount(ORDERS)).isEqualTo(orders);
    }

    @Test
    void aBadKeyIsRefusedBeforeAnyDatabaseAccess() {
        OrderService nowhere = new OrderService(DSL.using(SQLDialect.POSTGRES)); // no connection at all
        for (String key : List.of("", "a b", "k".repeat(256), "abc\u0000", "\u00fc")) {
            assertThatThrownBy(() -> nowhere.placeOrder(OrderFixtures.sample(), key))
                    .isInstanceOfSatisfying(InvalidOrderException.class, e -> {
                        assertThat(e.field()).isEqualTo("Idempotency-Key");
                        assertThat(e).hasMessageStartingWith("Idempotency-Key ");
                    });
        }
    }

    @Test
    void aRequestThatWaitsOnAConcurrentOneWithTheSameKeyAnswersWithItsOrderOnceThatCommits() throws Exception {
        String key = UUID.randomUUID().toString();
        PlaceOrder order = OrderFixtures.sample();
        int orders = pg.dsl().fetchCount(ORDERS);
        int messages = pg.dsl().fetchCount(OUTBOX_MESSAGE);
        try (Connection holder = pg.newConnection()) {
            holder.setAutoCommit(false);
            PlacedOrder first = service.placeKeyed(DSL.using(holder, SQLDialect.POSTGRES), order, key,
                    RequestFingerprint.of(order));

            // The second request sees no committed key, writes its own order and then waits on the key.
            CompletableFuture<OrderReceipt> second = CompletableFuture.supplyAsync(() -> service.placeOrder(order, key));
            awaitABackendWaitingForALock();
            assertThat(second).isNotDone();

            holder.commit();

            OrderReceipt receipt = second.get(30, TimeUnit.SECONDS);
            assertThat(receipt).isEqualTo(new OrderReceipt(first.orderId(), true));
        }
        assertThat(pg.dsl().fetchCount(ORDERS)).as("the waiting request's order rolled back").isEqualTo(orders + 1);
        assertThat(pg.dsl().fetchCount(OUTBOX_MESSAGE)).as("and its message with it").isEqualTo(messages + 1);
    }

    @Test
    void aRequestThatWaitedOnOneThatRolledBackPlacesTheOrderItself() throws Exception {
        String key = UUID.randomUUID().toString();
        PlaceOrder order = OrderFixtures.sample();
        int orders = pg.dsl().fetchCount(ORDERS);
        PlacedOrder abandoned;
        OrderReceipt receipt;
        try (Connection holder = pg.newConnection()) {
            holder.setAutoCommit(false);
            abandoned = service.placeKeyed(DSL.using(holder, SQLDialect.POSTGRES), order, key, RequestFingerprint.of(order));
            CompletableFuture<OrderReceipt> second = CompletableFuture.supplyAsync(() -> service.placeOrder(order, key));
            awaitABackendWaitingForALock();

            holder.rollback();

            receipt = second.get(30, TimeUnit.SECONDS);
        }
        assertThat(receipt.replayed()).isFalse();
        assertThat(receipt.orderId()).isNotEqualTo(abandoned.orderId());
        assertThat(pg.dsl().fetchCount(ORDERS)).isEqualTo(orders + 1);
        assertThat(pg.dsl().fetchSingle(ORDER_REQUEST_KEY, ORDER_REQUEST_KEY.IDEMPOTENCY_KEY.eq(key)).getOrderId())
                .isEqualTo(receipt.orderId());
    }

    @Test
    void threadsRacingWithOneKeyMakeOneOrderAndOneOutboxMessage() throws Exception {
        int rounds = 10;
        int threads = 8;
        int orders = pg.dsl().fetchCount(ORDERS);
        int messages = pg.dsl().fetchCount(OUTBOX_MESSAGE);
        ExecutorService pool = Executors.newFixedThreadPool(threads);
        try {
            for (int round = 0; round < rounds; round++) {
                String key = UUID.randomUUID().toString();
                PlaceOrder order = OrderFixtures.withLine(OrderFixtures.line("R" + round, "Round " + round, 1, "1.00"));
                CyclicBarrier start = new CyclicBarrier(threads);
                List<Future<OrderReceipt>> receipts = new ArrayList<>();
                for (int i = 0; i < threads; i++) {
                    receipts.add(pool.submit(() -> {
                        start.await();
                        return service.placeOrder(order, key);
                    }));
                }
                List<OrderReceipt> got = new ArrayList<>();
                for (Future<OrderReceipt> r : receipts) {
                    got.add(r.get(30, TimeUnit.SECONDS));
                }
                assertThat(got).extracting(OrderReceipt::orderId).containsOnly(got.get(0).orderId());
                assertThat(got).filteredOn(r -> !r.replayed()).hasSize(1);
                assertThat(pg.dsl().fetchSingle(ORDERS, ORDERS.ID.eq(got.get(0).orderId())).getTotal())
                        .isEqualByComparingTo(BigDecimal.ONE);
            }
        } finally {
            pool.shutdownNow();
        }
        assertThat(pg.dsl().fetchCount(ORDERS)).isEqualTo(orders + rounds);
        assertThat(pg.dsl().fetchCount(OUTBOX_MESSAGE)).isEqualTo(messages + rounds);
    }

    private static void awaitABackendWaitingForALock() {
        DSLContext dsl = pg.dsl();
        await().atMost(Duration.ofSeconds(20)).until(() -> dsl.fetchCount(DSL.table("pg_stat_activity"),
                DSL.field("datname").eq(DSL.field("current_database()")),
                DSL.field("wait_event_type").eq("Lock")) > 0);
    }
}
