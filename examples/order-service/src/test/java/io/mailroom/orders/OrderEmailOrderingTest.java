package io.mailroom.orders;

import io.mailroom.outbox.runtime.ClaimedMessage;
import io.mailroom.outbox.runtime.Dispatcher;
import io.mailroom.outbox.runtime.DispatcherConfig;
import io.mailroom.outbox.runtime.MessageHandler;
import io.mailroom.outbox.runtime.Outcome;
import io.mailroom.testing.PostgresExtension;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import static io.mailroom.db.jooq.Tables.OUTBOX_MESSAGE;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * The emails of one order reach the customer in the order they were written: they share the
 * ordering key {@code order-<id>}, so a dispatcher's claim skips the shipping notice while the
 * confirmation is pending or running (once in 102 the notice arrived first, when the shipment
 * followed 0.3 s after the order). Each step is one {@link Dispatcher#runOnce()}: one claim, its
 * sends, their completion.
 */
class OrderEmailOrderingTest {

    @RegisterExtension
    static final PostgresExtension pg = new PostgresExtension();

    private final List<String> claimed = new ArrayList<>();

    @BeforeEach
    void clean() {
        pg.dsl().execute("TRUNCATE outbox_message, outbox_effect, outbox_effect_term, outbox_attempt");
    }

    private Dispatcher dispatcher(String worker, MessageHandler handler) {
        DispatcherConfig config = DispatcherConfig.builder().workerId(worker).listenForNotifications(false).build();
        return new Dispatcher(pg.dataSource(), config, Map.of(OrderService.TOPIC, handler, OrderService.SHIPPED_TOPIC, handler,
                OrderService.CANCELLED_TOPIC, handler));
    }

    private static void makeDue() {
        pg.dsl().execute("UPDATE mailroom.outbox_message SET available_at = now() WHERE status = 'pending'");
    }

    @Test
    void theShippingNoticeWaitsWhileItsConfirmationIsPendingOrRunning_andGoesOutAfterIt() {
        OrderService service = new OrderService(pg.dsl());
        long id = service.placeOrder(OrderFixtures.sample()).orderId();
        service.shipOrder(id, new ShipOrder("DHL", "JD0001", "https://dhl.example/track/JD0001"));
        assertThat(pg.dsl().select(OUTBOX_MESSAGE.ORDERING_KEY).from(OUTBOX_MESSAGE).fetch(OUTBOX_MESSAGE.ORDERING_KEY))
                .containsExactly("order-" + id, "order-" + id);

        // both are due at the claim: only the confirmation is taken, and while it runs another
        // dispatcher's claim finds the notice blocked behind it; it fails for now (back to pending)
        List<String> claimedMeanwhile = new ArrayList<>();
        Dispatcher other = dispatcher("w2", (m, ctx) -> {
            claimedMeanwhile.add(m.idempotencyKey());
            return Outcome.done();
        });
        Dispatcher first = dispatcher("w1", (ClaimedMessage m, io.mailroom.outbox.runtime.ClaimContext ctx) -> {
            claimed.add(m.idempotencyKey());
            other.runOnce();
            return Outcome.retryLater("421 try again later", Duration.ofMinutes(5));
        });
        first.runOnce();
        assertThat(claimed).containsExactly(OrderService.idempotencyKey(id));
        assertThat(claimedMeanwhile).as("claimed while the confirmation was running").isEmpty();

        // the confirmation waits for its retry: the notice still waits behind it
        Dispatcher sender = dispatcher("w3", (m, ctx) -> {
            claimed.add(m.idempotencyKey());
            return Outcome.done();
        });
        assertThat(sender.runOnce()).isZero();

        makeDue();
        sender.runOnce();
        makeDue();
        sender.runOnce();
        assertThat(claimed).containsExactly(OrderService.idempotencyKey(id), OrderService.idempotencyKey(id),
                OrderService.shippedKey(id));
    }

    @Test
    void theCancellationWaitsBehindItsOwnConfirmation_anotherOrdersDoesNot() {
        OrderService service = new OrderService(pg.dsl());
        long a = service.placeOrder(OrderFixtures.sample()).orderId();
        long b = service.placeOrder(OrderFixtures.sample()).orderId();
        service.cancelOrder(a, new CancelOrder("changed my mind"));

        dispatcher("w1", (m, ctx) -> {
            claimed.add(m.idempotencyKey());
            return Outcome.done();
        }).runOnce();
        assertThat(claimed).containsExactlyInAnyOrder(OrderService.idempotencyKey(a), OrderService.idempotencyKey(b));
    }
}
