package io.mailroom.outbox;

import io.mailroom.outbox.runtime.Dispatcher;
import io.mailroom.outbox.runtime.DispatcherConfig;
import io.mailroom.outbox.runtime.MessageHandler;
import io.mailroom.outbox.runtime.Outcome;
import io.mailroom.testing.PostgresExtension;
import org.jooq.Record;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;

import static io.mailroom.db.jooq.Tables.OUTBOX_EFFECT;
import static io.mailroom.db.jooq.Tables.OUTBOX_MESSAGE;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** Cancel and reschedule by idempotency key in the caller's transaction, until the claim, and the race with the claim. */
class PendingMessagesTest {

    @RegisterExtension
    static final PostgresExtension pg = new PostgresExtension();

    private final MutableClock clock = MutableClock.at("2030-01-01T00:00:00Z");
    private final PendingMessages pending = new PendingMessages(clock, io.mailroom.db.MailroomSchema.DEFAULT);
    private final Set<String> handled = ConcurrentHashMap.newKeySet();

    @BeforeEach
    void clean() {
        pg.dsl().execute("TRUNCATE outbox_message, outbox_effect, outbox_effect_term, outbox_attempt");
        handled.clear();
    }

    private Dispatcher dispatcher(MessageHandler handler) {
        DispatcherConfig config = DispatcherConfig.builder().workerId("w1").clock(clock).build();
        return new Dispatcher(pg.dataSource(), config, Map.of(Fixtures.TOPIC, handler));
    }

    private Dispatcher recording() {
        return dispatcher((m, ctx) -> {
            handled.add(m.idempotencyKey());
            return Outcome.done();
        });
    }

    private PendingChange cancel(String key) {
        return pg.dsl().transactionResult(cfg -> pending.cancel(cfg.dsl(), key));
    }

    private PendingChange reschedule(String key, Instant at) {
        return pg.dsl().transactionResult(cfg -> pending.reschedule(cfg.dsl(), key, at));
    }

    @Test
    void aScheduledMessageIsNotClaimedBeforeItsTimeAndIsAtIt() {
        Fixtures.enqueueOne(pg.dsl(), clock, Fixtures.message("later").withAvailableAt(clock.instant().plusSeconds(3600)));
        Dispatcher d = recording();
        assertThat(d.runOnce()).isZero();
        clock.advance(Duration.ofMinutes(59));
        assertThat(d.runOnce()).isZero();
        clock.advance(Duration.ofMinutes(1));
        assertThat(d.runOnce()).isEqualTo(1);
        assertThat(handled).containsExactly("later");
    }

    @Test
    void aCancelledMessageIsNeverClaimedAndItsEffectSaysCancelled() {
        var msg = Fixtures.enqueueOne(pg.dsl(), clock, Fixtures.message("cancel-me").withAvailableAt(clock.instant().plusSeconds(60)));
        assertThat(cancel("cancel-me")).isEqualTo(new PendingChange(PendingChange.Outcome.CANCELLED, "cancel-me",
                MessageStatus.CANCELLED, null));
        clock.advance(Duration.ofMinutes(5));
        assertThat(recording().runOnce()).isZero();
        assertThat(handled).isEmpty();
        Record row = Fixtures.row(pg.dsl(), msg.id());
        assertThat(row.get(OUTBOX_MESSAGE.STATUS)).isEqualTo("cancelled");
        assertThat(row.get(OUTBOX_MESSAGE.FINISHED_AT)).isEqualTo(Instant.parse("2030-01-01T00:00:00Z"));
        var effect = pg.dsl().fetchSingle(OUTBOX_EFFECT, OUTBOX_EFFECT.IDEMPOTENCY_KEY.eq("cancel-me"));
        assertThat(effect.getStatus()).isEqualTo("cancelled");
        assertThat(effect.getFinishedAt()).isNotNull();
        // asked again: too late, it is cancelled already
        PendingChange again = cancel("cancel-me");
        assertThat(again.outcome()).isEqualTo(PendingChange.Outcome.TOO_LATE);
        assertThat(again.answer()).isEqualTo("too_late:cancelled");
    }

    @Test
    void aCancelRolledBackWithTheBusinessTransactionChangesNothing() {
        var msg = Fixtures.enqueueOne(pg.dsl(), clock, Fixtures.message("kept"));
        Record before = Fixtures.row(pg.dsl(), msg.id());
        assertThatThrownBy(() -> pg.dsl().transaction(cfg -> {
            assertThat(pending.cancel(cfg.dsl(), "kept").outcome()).isEqualTo(PendingChange.Outcome.CANCELLED);
            throw new IllegalStateException("the business change failed");
        })).isInstanceOf(IllegalStateException.class).hasMessage("the business change failed");
        assertThat(Fixtures.row(pg.dsl(), msg.id())).isEqualTo(before);
        assertThat(recording().runOnce()).isEqualTo(1);
    }

    @Test
    void aRescheduledMessageGoesAtItsNewTimeNotItsOldOne() {
        var msg = Fixtures.enqueueOne(pg.dsl(), clock, Fixtures.message("moved").withAvailableAt(clock.instant().plusSeconds(60)));
        Instant later = clock.instant().plusSeconds(3600);
        assertThat(reschedule("moved", later)).isEqualTo(new PendingChange(PendingChange.Outcome.RESCHEDULED, "moved",
                MessageStatus.PENDING, later));
        assertThat(Fixtures.row(pg.dsl(), msg.id()).get(OUTBOX_MESSAGE.AVAILABLE_AT)).isEqualTo(later);
        Dispatcher d = recording();
        clock.advance(Duration.ofMinutes(2));
        assertThat(d.runOnce()).as("at the old time").isZero();
        clock.advance(Duration.ofMinutes(58));
        assertThat(d.runOnce()).isEqualTo(1);
        assertThat(handled).containsExactly("moved");
    }

    @Test
    void rescheduledToATimePastItGoesNow() {
        var msg = Fixtures.enqueueOne(pg.dsl(), clock, Fixtures.message("sooner").withAvailableAt(clock.instant().plusSeconds(3600)));
        PendingChange change = reschedule("sooner", Instant.parse("2020-01-01T00:00:00Z"));
        assertThat(change.outcome()).isEqualTo(PendingChange.Outcome.RESCHEDULED);
        assertThat(change.sendAt()).isEqualTo(clock.instant());
        assertThat(Fixtures.row(pg.dsl(), msg.id()).get(OUTBOX_MESSAGE.AVAILABLE_AT)).isEqualTo(clock.instant());
        assertThat(recording().runOnce()).isEqualTo(1);
    }

    @Test
    void tooLateOnceClaimedSaysSendingAndOnceSentSaysSent() {
        Fixtures.enqueueOne(pg.dsl(), clock, Fixtures.message("claimed"));
        List<PendingChange> duringTheSend = new ArrayList<>();
        Dispatcher d = dispatcher((m, ctx) -> {
            // the claim has committed: business code cancelling now is too late
            duringTheSend.add(cancel(m.idempotencyKey()));
            duringTheSend.add(reschedule(m.idempotencyKey(), clock.instant().plusSeconds(60)));
            return Outcome.done();
        });
        assertThat(d.runOnce()).isEqualTo(1);
        assertThat(duringTheSend).extracting(PendingChange::outcome)
                .containsExactly(PendingChange.Outcome.TOO_LATE, PendingChange.Outcome.TOO_LATE);
        assertThat(duringTheSend).extracting(PendingChange::status).containsOnly(MessageStatus.RUNNING);
        assertThat(duringTheSend.getFirst().answer()).isEqualTo("too_late:sending");
        assertThat(duringTheSend.getFirst().tooLateBecause()).contains("already claimed");

        PendingChange afterSend = cancel("claimed");
        assertThat(afterSend.status()).isEqualTo(MessageStatus.DONE);
        assertThat(afterSend.answer()).isEqualTo("too_late:sent");
        assertThat(afterSend.tooLateBecause()).contains("already been sent");
        assertThat(reschedule("claimed", clock.instant()).answer()).isEqualTo("too_late:sent");
        assertThat(pg.dsl().fetchSingle(OUTBOX_EFFECT, OUTBOX_EFFECT.IDEMPOTENCY_KEY.eq("claimed")).getStatus()).isEqualTo("done");
    }

    @Test
    void anUnknownKeyIsNotFoundAndABlankOneIsRefused() {
        assertThat(cancel("nobody")).isEqualTo(new PendingChange(PendingChange.Outcome.NOT_FOUND, "nobody", null, null));
        assertThat(reschedule("nobody", clock.instant()).answer()).isEqualTo("not_found");
        assertThatThrownBy(() -> cancel(" ")).hasMessageContaining("idempotencyKey");
    }

    /**
     * Real threads: a dispatcher claims while business code cancels the same messages one by one.
     * Each message has exactly one winner: handled (and the cancel said too late) or cancelled (and
     * never handled).
     */
    @Test
    void aClaimRacingWithCancelsHasExactlyOneWinnerPerMessage() throws Exception {
        int n = 300;
        PendingMessages atDbTime = new PendingMessages();
        Fixtures.enqueue(pg.dsl(), null, "race", n);
        DispatcherConfig config = DispatcherConfig.builder().workerId("racer").batchSize(5).build();
        Dispatcher d = new Dispatcher(pg.dataSource(), config, Map.of(Fixtures.TOPIC, (m, ctx) -> {
            handled.add(m.idempotencyKey());
            return Outcome.done();
        }));
        Map<String, PendingChange> answers = new ConcurrentHashMap<>();
        CountDownLatch start = new CountDownLatch(1);
        ExecutorService pool = Executors.newFixedThreadPool(2);
        try {
            Future<?> claimer = pool.submit(() -> {
                start.await();
                while (d.runOnce() > 0 || answers.size() < n) {
                    Thread.onSpinWait();
                }
                return null;
            });
            Future<?> canceller = pool.submit(() -> {
                start.await();
                // from the other end, so the two meet in the middle
                for (int i = n; i >= 1; i--) {
                    String key = "race-" + i;
                    answers.put(key, pg.dsl().transactionResult(cfg -> atDbTime.cancel(cfg.dsl(), key)));
                }
                return null;
            });
            start.countDown();
            canceller.get(60, TimeUnit.SECONDS);
            claimer.get(60, TimeUnit.SECONDS);
        } finally {
            pool.shutdownNow();
        }
        int cancelled = 0;
        for (int i = 1; i <= n; i++) {
            String key = "race-" + i;
            PendingChange answer = answers.get(key);
            String status = pg.dsl().fetchSingle(OUTBOX_MESSAGE, OUTBOX_MESSAGE.IDEMPOTENCY_KEY.eq(key)).getStatus();
            if (answer.outcome() == PendingChange.Outcome.CANCELLED) {
                cancelled++;
                assertThat(handled).as("cancelled %s was handled", key).doesNotContain(key);
                assertThat(status).isEqualTo("cancelled");
            } else {
                assertThat(answer.outcome()).isEqualTo(PendingChange.Outcome.TOO_LATE);
                assertThat(answer.status()).isIn(MessageStatus.RUNNING, MessageStatus.DONE);
                assertThat(handled).as("%s was too late to cancel but never handled", key).contains(key);
                assertThat(status).isEqualTo("done");
            }
        }
        assertThat(cancelled + handled.size()).isEqualTo(n);
        // both sides won some, so the two really met
        assertThat(cancelled).isPositive();
        assertThat(handled).isNotEmpty();
    }
}
