package io.mailroom.outbox.admin;

import io.mailroom.outbox.Fixtures;
import io.mailroom.outbox.MessageStatus;
import io.mailroom.outbox.MutableClock;
import io.mailroom.outbox.runtime.Dispatcher;
import io.mailroom.outbox.runtime.DispatcherConfig;
import io.mailroom.outbox.runtime.Outcome;
import io.mailroom.testing.PostgresExtension;
import org.jooq.Record;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import java.sql.Connection;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import static io.mailroom.db.jooq.Tables.OUTBOX_EFFECT;
import static io.mailroom.db.jooq.Tables.OUTBOX_MESSAGE;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** Person-facing actions: NOWAIT answers "busy" at once and leaves the row as it was. */
class MessageActionsTest {

    @RegisterExtension
    static final PostgresExtension pg = new PostgresExtension();

    private final MutableClock clock = MutableClock.at("2030-01-01T00:00:00Z");
    private MessageActions actions;

    @BeforeEach
    void clean() {
        pg.dsl().execute("TRUNCATE outbox_message, outbox_effect, outbox_effect_term, outbox_attempt");
        actions = new MessageActions(pg.dataSource(), clock, 2, Duration.ofMillis(10));
    }

    private void failIt(String key) {
        DispatcherConfig config = DispatcherConfig.builder().workerId("w1").clock(clock).build();
        new Dispatcher(pg.dataSource(), config, Map.of(Fixtures.TOPIC, (m, ctx) -> Outcome.failed("550 mailbox unavailable")))
                .runOnce();
        assertThat(pg.dsl().fetchSingle(OUTBOX_EFFECT, OUTBOX_EFFECT.IDEMPOTENCY_KEY.eq(key)).getStatus()).isEqualTo("failed");
    }

    @Test
    void anActionOnALockedRowAnswersBusyAtOnceAndChangesNothing() throws Exception {
        var msg = Fixtures.enqueueOne(pg.dsl(), clock, Fixtures.message("locked"));
        Record before = Fixtures.row(pg.dsl(), msg.id());
        try (Connection worker = pg.newConnection()) {
            worker.setAutoCommit(false);
            try (Statement st = worker.createStatement()) {
                st.executeQuery("SELECT id FROM outbox_message WHERE id = " + msg.id() + " FOR NO KEY UPDATE").close();
            }
            long started = System.nanoTime();
            assertThat(actions.cancel("locked", null)).isInstanceOf(MessageActions.Result.Busy.class);
            assertThat(Duration.ofNanos(System.nanoTime() - started)).isLessThan(Duration.ofSeconds(3));
            worker.rollback();
        }
        assertThat(Fixtures.row(pg.dsl(), msg.id())).isEqualTo(before);
        // once the worker let go, the same action goes through
        assertThat(actions.cancel("locked", null)).isEqualTo(new MessageActions.Result.Applied(MessageStatus.CANCELLED));
    }

    @Test
    void retryNowMakesAFailedMessagePendingWithOneMoreAttempt() {
        var msg = Fixtures.enqueueOne(pg.dsl(), clock, Fixtures.message("failed-one").withMaxAttempts(1));
        failIt("failed-one");
        pg.dsl().execute("CREATE TABLE IF NOT EXISTS audit_probe (k varchar)");
        var result = actions.retryNow("failed-one", tx -> tx.execute("INSERT INTO audit_probe VALUES ('failed-one')"));
        assertThat(result).isEqualTo(new MessageActions.Result.Applied(MessageStatus.PENDING));
        Record row = Fixtures.row(pg.dsl(), msg.id());
        assertThat(row.get(OUTBOX_MESSAGE.STATUS)).isEqualTo("pending");
        assertThat(row.get(OUTBOX_MESSAGE.MAX_ATTEMPTS)).isEqualTo(2);
        assertThat(row.get(OUTBOX_MESSAGE.AVAILABLE_AT)).isEqualTo(clock.instant());
        assertThat(pg.dsl().fetchCount(pg.dsl().selectFrom("audit_probe"))).isEqualTo(1);
        // and it is claimed and handled once more
        DispatcherConfig config = DispatcherConfig.builder().workerId("w2").clock(clock).build();
        new Dispatcher(pg.dataSource(), config, Map.of(Fixtures.TOPIC, (m, ctx) -> Outcome.done())).runOnce();
        assertThat(Fixtures.row(pg.dsl(), msg.id()).get(OUTBOX_MESSAGE.ATTEMPTS)).isEqualTo(2);
        assertThat(Fixtures.status(pg.dsl(), msg.id())).isEqualTo("done");
    }

    @Test
    void actionsRefuseStatesTheyDoNotFit() {
        Fixtures.enqueueOne(pg.dsl(), clock, Fixtures.message("pending-one"));
        assertThat(actions.confirmDone("pending-one", null)).isInstanceOf(MessageActions.Result.NotAllowed.class);
        failIt("pending-one");
        assertThat(actions.cancel("pending-one", null))
                .isInstanceOfSatisfying(MessageActions.Result.NotAllowed.class,
                        r -> assertThat(r.current()).isEqualTo(MessageStatus.FAILED));
        assertThat(actions.retryNow("no-such-key", null)).isInstanceOf(MessageActions.Result.NotFound.class);
        assertThatThrownBy(() -> actions.retryNow(" ", null)).isInstanceOf(IllegalArgumentException.class);
    }

    @Test
    void closeEndsAFailedOrReviewMessageForGoodAndTellsTheStepWhatItWas() {
        var failed = Fixtures.enqueueOne(pg.dsl(), clock, Fixtures.message("to-close"));
        failIt("to-close");
        List<MessageStatus> seen = new ArrayList<>();
        assertThat(actions.close("to-close", (tx, from) -> seen.add(from)))
                .isEqualTo(new MessageActions.Result.Applied(MessageStatus.CLOSED));
        assertThat(seen).containsExactly(MessageStatus.FAILED);
        Record row = Fixtures.row(pg.dsl(), failed.id());
        assertThat(row.get(OUTBOX_MESSAGE.STATUS)).isEqualTo("closed");
        assertThat(row.get(OUTBOX_MESSAGE.FINISHED_AT)).isEqualTo(clock.instant());
        var effect = pg.dsl().fetchSingle(OUTBOX_EFFECT, OUTBOX_EFFECT.IDEMPOTENCY_KEY.eq("to-close"));
        assertThat(effect.getStatus()).isEqualTo("closed");
        assertThat(effect.getFinishedAt()).isEqualTo(clock.instant());
        assertThat(actions.retryNow("to-close", null)).isInstanceOfSatisfying(MessageActions.Result.NotAllowed.class,
                r -> assertThat(r.current()).isEqualTo(MessageStatus.CLOSED));
        assertThat(actions.close("to-close", (tx, from) -> seen.add(from))).isInstanceOf(MessageActions.Result.NotAllowed.class);

        Fixtures.enqueueOne(pg.dsl(), clock, Fixtures.message("parked"));
        DispatcherConfig config = DispatcherConfig.builder().workerId("w1").clock(clock).build();
        new Dispatcher(pg.dataSource(), config, Map.of(Fixtures.TOPIC, (m, ctx) -> Outcome.review("unknown outcome"))).runOnce();
        assertThat(actions.close("parked", (tx, from) -> seen.add(from))).isInstanceOf(MessageActions.Result.Applied.class);
        assertThat(seen).containsExactly(MessageStatus.FAILED, MessageStatus.REVIEW);

        Fixtures.enqueueOne(pg.dsl(), clock, Fixtures.message("waiting"));
        assertThat(actions.close("waiting", (tx, from) -> seen.add(from))).isInstanceOfSatisfying(MessageActions.Result.NotAllowed.class,
                r -> assertThat(r.why()).contains("only a failed message or one in review can be closed"));
        assertThat(seen).hasSize(2);
        assertThat(new Dispatcher(pg.dataSource(), config, Map.of(Fixtures.TOPIC, (m, ctx) -> Outcome.done())).runOnce())
                .as("only the waiting one is claimed").isEqualTo(1);
    }

    @Test
    void rescheduleMovesAPendingMessage() {
        var msg = Fixtures.enqueueOne(pg.dsl(), clock, Fixtures.message("later"));
        var at = clock.instant().plus(Duration.ofHours(2));
        assertThat(actions.reschedule("later", at, null)).isInstanceOf(MessageActions.Result.Applied.class);
        assertThat(Fixtures.row(pg.dsl(), msg.id()).get(OUTBOX_MESSAGE.AVAILABLE_AT)).isEqualTo(at);
    }

    @Test
    void aStepThatFailsRollsTheActionBack() {
        var msg = Fixtures.enqueueOne(pg.dsl(), clock, Fixtures.message("rollback"));
        assertThatThrownBy(() -> actions.cancel("rollback", tx -> tx.execute("SELECT * FROM no_such_table")));
        assertThat(Fixtures.status(pg.dsl(), msg.id())).isEqualTo("pending");
    }
}
