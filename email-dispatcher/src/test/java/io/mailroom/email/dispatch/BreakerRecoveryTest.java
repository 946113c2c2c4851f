package io.mailroom.email.dispatch;

import io.github.resilience4j.circuitbreaker.CircuitBreaker;
import io.mailroom.email.Email;
import io.mailroom.email.resilience.ResilientTransport;
import io.mailroom.email.resilience.TransportPolicyConfig;
import io.mailroom.email.transport.MailTransport;
import io.mailroom.email.transport.SendResult;
import io.mailroom.idempotency.IdempotencyStore;
import io.mailroom.outbox.runtime.Backoff;
import io.mailroom.outbox.runtime.ClaimGate;
import io.mailroom.outbox.runtime.Dispatcher;
import io.mailroom.outbox.runtime.DispatcherConfig;
import io.mailroom.outbox.runtime.MessageHandler;
import io.mailroom.outbox.runtime.WaitingMessages;
import io.mailroom.testing.PostgresExtension;
import org.jooq.Record;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Consumer;

import static io.mailroom.db.jooq.Tables.OUTBOX_MESSAGE;
import static io.mailroom.email.dispatch.DispatchFixture.TOPIC;
import static io.mailroom.email.dispatch.DispatchFixture.enqueueOrder;
import static io.mailroom.email.dispatch.DispatchFixture.message;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * An email the breaker handed back goes as soon as the breaker lets calls through again, not a
 * whole open wait later (issue 24, item 15: released at HALF_OPEN→CLOSED, such emails were claimed
 * again 30 s later, behind the backlog).
 */
class BreakerRecoveryTest {

    @RegisterExtension
    static final PostgresExtension pg = new PostgresExtension();

    static final Duration OPEN_WAIT = Duration.ofSeconds(30);

    private final AtomicInteger sent = new AtomicInteger();
    private ResilientTransport transport;
    private Dispatcher dispatcher;

    @BeforeEach
    void setUp() {
        pg.dsl().execute("TRUNCATE outbox_message, outbox_effect, outbox_effect_term, outbox_attempt, idempotency_record");
        MailTransport provider = new MailTransport() {
            @Override
            public String name() {
                return "relay";
            }

            @Override
            public SendResult send(Email email, String idempotencyKey) {
                return new SendResult.Sent("id-" + sent.incrementAndGet(), "{}");
            }
        };
        transport = DispatchFixture.resilient(provider, TransportPolicyConfig.defaults()
                .withBreaker(new TransportPolicyConfig.BreakerSettings(4, 2, 50, OPEN_WAIT, 1)));
    }

    @AfterEach
    void tearDown() {
        if (dispatcher != null) {
            dispatcher.stop();
        }
        transport.close();
    }

    private MessageHandler handler() {
        return new EmailHandler(pg.dataSource(), new IdempotencyStore(), DispatchFixture.composer(), transport,
                AmbiguityPolicy.review(), "test-worker", null);
    }

    /**
     * The dispatcher as the service wires it, except that it polls only every 20 s and does not
     * LISTEN: only the wake-up of {@link BreakerRecovery} can get the email out within seconds.
     */
    private Dispatcher watchedDispatcher() {
        DispatcherConfig config = DispatcherConfig.builder().workerId("test-worker").batchSize(10)
                .pollInterval(Duration.ofSeconds(20)).listenForNotifications(false)
                .backoff(new Backoff(Duration.ofSeconds(2), Duration.ofMinutes(1), 2, 0)).build();
        Map<String, ResilientTransport> gates = Map.of(TOPIC, transport);
        Dispatcher d = new Dispatcher(pg.dataSource(), config, Map.of(TOPIC, handler()), new TransportGate(gates), null);
        BreakerRecovery.watchAll(gates, new WaitingMessages(pg.dataSource(), config), d::wake);
        return d;
    }

    /**
     * The claim of order 1 lands just as the breaker opens (a gate that lets it through: the gate
     * is asked before the claim commits, the breaker after); its send is refused and it is handed
     * back for the open wait, marked as waiting for this transport's breaker.
     */
    private Instant handedBackByTheOpenBreaker() {
        enqueueOrder(pg.dsl(), 1);
        transport.circuitBreaker().transitionToOpenState();
        DispatcherConfig config = DispatcherConfig.builder().workerId("test-worker").batchSize(10).build();
        Instant before = Instant.now();
        assertThat(new Dispatcher(pg.dataSource(), config, Map.of(TOPIC, handler()), ClaimGate.OPEN, null).runOnce())
                .isEqualTo(1);
        Record row = message(pg.dsl(), 1);
        assertThat(row.get(OUTBOX_MESSAGE.STATUS)).isEqualTo("pending");
        assertThat(row.get(OUTBOX_MESSAGE.ATTEMPTS)).as("not counted").isZero();
        assertThat(row.get(OUTBOX_MESSAGE.LAST_ERROR)).endsWith("is OPEN");
        assertThat(row.get(OUTBOX_MESSAGE.WAITING_FOR)).isEqualTo(BreakerRecovery.waitingFor("relay"));
        assertThat(row.get(OUTBOX_MESSAGE.AVAILABLE_AT)).as("handed back for the open wait")
                .isAfter(before.plus(OPEN_WAIT).minusSeconds(2));
        assertThat(sent).hasValue(0);
        return Instant.now();
    }

    private void sentWithinSecondsOnceTheBreaker(Consumer<CircuitBreaker> letsCallsThrough) {
        handedBackByTheOpenBreaker();
        dispatcher = watchedDispatcher();
        dispatcher.start();

        long started = System.nanoTime();
        letsCallsThrough.accept(transport.circuitBreaker());
        await().atMost(Duration.ofSeconds(3)).pollInterval(Duration.ofMillis(20))
                .untilAsserted(() -> assertThat(message(pg.dsl(), 1).get(OUTBOX_MESSAGE.STATUS)).isEqualTo("done"));
        Duration took = Duration.ofNanos(System.nanoTime() - started);
        assertThat(sent).hasValue(1);
        assertThat(took).as("sent %s after the breaker let calls through, not 30 s", took).isLessThan(Duration.ofSeconds(3));
        assertThat(transport.breakerState()).isEqualTo(CircuitBreaker.State.CLOSED);
    }

    @Test
    void anEmailTheBreakerHandedBackIsSentWithinSecondsWhenTheBreakerCloses() {
        sentWithinSecondsOnceTheBreaker(CircuitBreaker::transitionToClosedState);
    }

    @Test
    void anEmailTheBreakerHandedBackIsTheProbeWhenTheBreakerHalfOpens() {
        // as after the open wait: the released email is the half-open probe, whose success closes the breaker
        sentWithinSecondsOnceTheBreaker(CircuitBreaker::transitionToHalfOpenState);
    }

    @Test
    void onlyTheTopicsOfTheTransportWhoseBreakerRecoveredAreReleased() {
        handedBackByTheOpenBreaker();
        BreakerRecovery other = BreakerRecovery.watch(transport, List.of("email.other_topic"),
                new WaitingMessages(pg.dataSource(), DispatcherConfig.builder().workerId("test-worker").build()), () -> { });
        assertThat(other.releaseWaiting()).isZero();
        assertThat(message(pg.dsl(), 1).get(OUTBOX_MESSAGE.WAITING_FOR)).isNotNull();
    }
}
