package io.mailroom.outbox.runtime;

import io.mailroom.outbox.Fixtures;
import io.mailroom.outbox.MutableClock;
import io.mailroom.outbox.NewMessage;
import io.mailroom.outbox.admin.MessageActions;
import io.mailroom.testing.PostgresExtension;
import org.jooq.Record;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.postgresql.PGConnection;
import org.postgresql.PGNotification;

import java.sql.Connection;
import java.time.Duration;
import java.time.Instant;
import java.util.Arrays;
import java.util.List;
import java.util.Map;

import static io.mailroom.db.jooq.Tables.OUTBOX_MESSAGE;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * Hand-backs that wait for something (a breaker) and the early end of that wait, driven by an
 * injected clock: which rows it releases, and which it must leave alone.
 */
class WaitingMessagesTest {

    @RegisterExtension
    static final PostgresExtension pg = new PostgresExtension();

    static final String OTHER_TOPIC = "other.topic";
    static final String BREAKER = "breaker:smtp";
    static final Duration OPEN_WAIT = Duration.ofSeconds(30);

    private final MutableClock clock = MutableClock.at("2030-01-01T00:00:00Z");
    private final DispatcherConfig config = DispatcherConfig.builder().workerId("w1").batchSize(10).clock(clock).build();

    @BeforeEach
    void clean() {
        pg.dsl().execute("TRUNCATE outbox_message, outbox_effect, outbox_effect_term, outbox_attempt");
    }

    /** Hands every message back for the open wait, waiting for what its key says; sends once told to. */
    private Dispatcher handingBack(boolean[] send) {
        MessageHandler handler = (m, ctx) -> {
            if (send[0]) {
                return Outcome.done();
            }
            String waitingFor = switch (m.aggregateId()) {
                case "no-code" -> null;
                case "other-code" -> "breaker:http";
                default -> BREAKER;
            };
            return new Outcome.NotAttempted("circuit breaker of transport smtp is OPEN", OPEN_WAIT, null, null, waitingFor);
        };
        return new Dispatcher(pg.dataSource(), config, Map.of(Fixtures.TOPIC, handler, OTHER_TOPIC, handler));
    }

    private long enqueue(String topic, String key) {
        return Fixtures.enqueueOne(pg.dsl(), clock, NewMessage.of(topic, "order", key, topic + "/" + key, "{}")).id();
    }

    @Test
    void theMessagesABreakerHandedBackAreAvailableWhenItAllowsCallsAgainAndTheDispatchersAreNotified() throws Exception {
        long waiting = enqueue(Fixtures.TOPIC, "waiting");
        long otherCode = enqueue(Fixtures.TOPIC, "other-code");
        long noCode = enqueue(Fixtures.TOPIC, "no-code");
        long otherTopic = enqueue(OTHER_TOPIC, "waiting");
        boolean[] send = {false};
        Dispatcher dispatcher = handingBack(send);
        assertThat(dispatcher.runOnce()).isEqualTo(4);
        Instant handedBackAt = clock.instant();
        Record row = Fixtures.row(pg.dsl(), waiting);
        assertThat(row.get(OUTBOX_MESSAGE.STATUS)).isEqualTo("pending");
        assertThat(row.get(OUTBOX_MESSAGE.ATTEMPTS)).as("not counted").isZero();
        assertThat(row.get(OUTBOX_MESSAGE.AVAILABLE_AT)).isEqualTo(handedBackAt.plus(OPEN_WAIT));
        assertThat(row.get(OUTBOX_MESSAGE.WAITING_FOR)).isEqualTo(BREAKER);
        assertThat(Fixtures.row(pg.dsl(), noCode).get(OUTBOX_MESSAGE.WAITING_FOR)).isNull();

        clock.advance(Duration.ofSeconds(2)); // the breaker closes 2 s later
        try (Connection listener = Fixtures.listen(pg)) {
            assertThat(new WaitingMessages(pg.dataSource(), config).availableNow(BREAKER, List.of(Fixtures.TOPIC)))
                    .isEqualTo(1);
            PGNotification[] notes = listener.unwrap(PGConnection.class).getNotifications(5000);
            assertThat(notes).as("other dispatchers are woken for the topic").isNotNull();
            assertThat(Arrays.stream(notes).map(PGNotification::getParameter)).contains(Fixtures.TOPIC);
        }

        row = Fixtures.row(pg.dsl(), waiting);
        assertThat(row.get(OUTBOX_MESSAGE.AVAILABLE_AT)).as("available now, not 28 s later").isEqualTo(clock.instant());
        assertThat(row.get(OUTBOX_MESSAGE.WAITING_FOR)).isNull();
        assertThat(row.get(OUTBOX_MESSAGE.STATUS)).isEqualTo("pending");
        for (long untouched : List.of(otherCode, noCode, otherTopic)) {
            assertThat(Fixtures.row(pg.dsl(), untouched).get(OUTBOX_MESSAGE.AVAILABLE_AT))
                    .as("another breaker's, a plain hand-back, another transport's topic").isEqualTo(handedBackAt.plus(OPEN_WAIT));
        }
        assertThat(new WaitingMessages(pg.dataSource(), config).availableNow(BREAKER, List.of(Fixtures.TOPIC)))
                .as("it waits for nothing any more").isZero();

        send[0] = true;
        assertThat(dispatcher.runOnce()).as("only the released one is due").isEqualTo(1);
        assertThat(Fixtures.status(pg.dsl(), waiting)).isEqualTo("done");
    }

    @Test
    void theNextClaimAndAPersonsRescheduleEndTheWaitingSoTheBreakerNoLongerMovesThem() {
        long claimedAgain = enqueue(Fixtures.TOPIC, "claimed-again");
        long rescheduled = enqueue(Fixtures.TOPIC, "rescheduled");
        boolean[] send = {false};
        Dispatcher dispatcher = handingBack(send);
        dispatcher.runOnce();
        Instant personsTime = clock.instant().plus(Duration.ofHours(2));
        assertThat(new MessageActions(pg.dataSource(), clock, 0, Duration.ZERO)
                .reschedule(Fixtures.TOPIC + "/rescheduled", personsTime, null)).isInstanceOf(MessageActions.Result.Applied.class);

        // the first one is claimed again after its wait and handed back for a plain retry
        clock.advance(OPEN_WAIT);
        MessageHandler retry = (m, ctx) -> Outcome.retryLater("451 later", Duration.ofMinutes(5));
        new Dispatcher(pg.dataSource(), config, Map.of(Fixtures.TOPIC, retry)).runOnce();
        assertThat(Fixtures.row(pg.dsl(), claimedAgain).get(OUTBOX_MESSAGE.WAITING_FOR)).isNull();

        assertThat(new WaitingMessages(pg.dataSource(), config).availableNow(BREAKER, List.of(Fixtures.TOPIC))).isZero();
        assertThat(Fixtures.row(pg.dsl(), claimedAgain).get(OUTBOX_MESSAGE.AVAILABLE_AT))
                .isEqualTo(clock.instant().plus(Duration.ofMinutes(5)));
        assertThat(Fixtures.row(pg.dsl(), rescheduled).get(OUTBOX_MESSAGE.AVAILABLE_AT)).isEqualTo(personsTime);
    }

    @Test
    void aCodeTheColumnCannotHoldIsRefusedNamingIt() {
        assertThatThrownBy(() -> new Outcome.NotAttempted("x", Duration.ZERO, null, null, " "))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("waitingFor");
        assertThatThrownBy(() -> new Outcome.NotAttempted("x", Duration.ZERO, null, null, "b".repeat(201)))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("waitingFor");
        assertThat(new Outcome.NotAttempted("x", Duration.ZERO, null, null).waitingFor()).isNull();
    }
}
