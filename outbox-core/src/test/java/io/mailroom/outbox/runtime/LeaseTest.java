package io.mailroom.outbox.runtime;

import io.mailroom.outbox.DispatcherSessions;
import io.mailroom.outbox.Fixtures;
import io.mailroom.outbox.MutableClock;
import io.mailroom.outbox.NewMessage;
import io.mailroom.db.sql.SqlClock;
import io.mailroom.testing.PostgresExtension;
import org.jooq.Record;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import java.sql.Connection;
import java.sql.Statement;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;

import static io.mailroom.db.jooq.Tables.OUTBOX_ATTEMPT;
import static io.mailroom.db.jooq.Tables.OUTBOX_MESSAGE;
import static org.assertj.core.api.Assertions.assertThat;

/** Heartbeats, lost claims and the lease rescuer, all on an injected clock. */
class LeaseTest {

    @RegisterExtension
    static final PostgresExtension pg = new PostgresExtension();

    private static final Duration LEASE = Duration.ofSeconds(30);
    private final MutableClock clock = MutableClock.at("2030-01-01T00:00:00Z");
    private final OutboxStore store = new OutboxStore(SqlClock.of(clock), Backoff.DEFAULT);

    @BeforeEach
    void clean() {
        pg.dsl().execute("TRUNCATE outbox_message, outbox_effect, outbox_effect_term, outbox_attempt");
    }

    private Dispatcher dispatcher(MessageHandler handler) {
        DispatcherConfig config = DispatcherConfig.builder().workerId("w1").batchSize(10).lease(LEASE)
                .backoff(new Backoff(Duration.ofSeconds(10), Duration.ofMinutes(10), 2.0, 0.0)).clock(clock).build();
        return new Dispatcher(pg.dataSource(), config, Map.of(Fixtures.TOPIC, handler));
    }

    /** Claims like a worker that then dies: the row stays running with a lease. */
    private ClaimedMessage claimAndDie(String worker) {
        return claimAndDie(worker, null);
    }

    /** The same, as the process {@code incarnation} of {@code worker}. */
    private ClaimedMessage claimAndDie(String worker, String incarnation) {
        return new DispatcherSessions(pg.dataSource(), null, null)
                .inTransaction(tx -> store.claims().claim(tx, worker, incarnation, 1, List.of(Fixtures.TOPIC), LEASE)).getFirst();
    }

    @Test
    void aHeartbeatExtendsTheLeaseWhileTheHandlerRuns() {
        var msg = Fixtures.enqueueOne(pg.dsl(), clock, Fixtures.message("slow"));
        Dispatcher[] d = new Dispatcher[1];
        d[0] = dispatcher((m, ctx) -> {
            clock.advance(Duration.ofSeconds(20));
            assertThat(d[0].heartbeatOnce()).isZero();
            assertThat(Fixtures.row(pg.dsl(), m.id()).get(OUTBOX_MESSAGE.LEASE_UNTIL)).isEqualTo(clock.instant().plus(LEASE));
            clock.advance(Duration.ofSeconds(20)); // past the first lease, within the extended one
            assertThat(d[0].rescueOnce()).isZero();
            return Outcome.done();
        });
        d[0].runOnce();
        assertThat(Fixtures.status(pg.dsl(), msg.id())).isEqualTo("done");
    }

    @Test
    void aLostClaimIsSignalledToTheHandlerWhichRecordsNothing() {
        var msg = Fixtures.enqueueOne(pg.dsl(), clock, Fixtures.message("taken-over"));
        AtomicBoolean lostSeen = new AtomicBoolean();
        Dispatcher[] d = new Dispatcher[1];
        d[0] = dispatcher((m, ctx) -> {
            pg.dsl().execute("UPDATE outbox_message SET claim_version = claim_version + 1, claimed_by = 'w2' WHERE id = " + m.id());
            assertThat(d[0].heartbeatOnce()).isEqualTo(1);
            lostSeen.set(ctx.isClaimLost());
            ctx.ensureClaimHeld(); // throws: the handler stops before its side effect
            return Outcome.done();
        });
        d[0].runOnce();
        assertThat(lostSeen).isTrue();
        Record row = Fixtures.row(pg.dsl(), msg.id());
        assertThat(row.get(OUTBOX_MESSAGE.STATUS)).isEqualTo("running");
        assertThat(row.get(OUTBOX_MESSAGE.CLAIMED_BY)).isEqualTo("w2");
        assertThat(row.get(OUTBOX_MESSAGE.CLAIM_VERSION)).isEqualTo(2);
        assertThat(pg.dsl().fetchCount(OUTBOX_ATTEMPT)).isZero();
    }

    @Test
    void theRescuerReturnsAnExpiredLeaseToPendingWithBackoff() {
        var msg = Fixtures.enqueueOne(pg.dsl(), clock, Fixtures.message("orphan"));
        claimAndDie("dead-worker");
        Dispatcher d = dispatcher((m, ctx) -> Outcome.done());
        clock.advance(LEASE.minusSeconds(1));
        assertThat(d.rescueOnce()).as("lease still valid").isZero();
        clock.advance(Duration.ofSeconds(2));
        assertThat(d.rescueOnce()).isEqualTo(1);

        Record row = Fixtures.row(pg.dsl(), msg.id());
        assertThat(row.get(OUTBOX_MESSAGE.STATUS)).isEqualTo("pending");
        assertThat(row.get(OUTBOX_MESSAGE.LEASE_UNTIL)).isNull();
        assertThat(row.get(OUTBOX_MESSAGE.AVAILABLE_AT)).isEqualTo(clock.instant().plusSeconds(10));
        assertThat(row.get(OUTBOX_MESSAGE.LAST_ERROR)).contains("lease expired").contains("dead-worker");
        assertThat(pg.dsl().fetchSingle(OUTBOX_ATTEMPT).getOutcome()).isEqualTo("lease_expired");

        // the next claim is a new version; the dead worker's completion would be fenced out
        clock.advance(Duration.ofSeconds(10));
        assertThat(d.runOnce()).isEqualTo(1);
        assertThat(Fixtures.row(pg.dsl(), msg.id()).get(OUTBOX_MESSAGE.CLAIM_VERSION)).isEqualTo(2);
        assertThat(Fixtures.row(pg.dsl(), msg.id()).get(OUTBOX_MESSAGE.ATTEMPTS)).isEqualTo(2);
    }

    @Test
    void theRescuerNeverTouchesAValidLeaseOrAFinishedRow() {
        var done = Fixtures.enqueueOne(pg.dsl(), clock, Fixtures.message("done"));
        dispatcher((m, ctx) -> Outcome.done()).runOnce();
        var valid = Fixtures.enqueueOne(pg.dsl(), clock, Fixtures.message("valid"));
        claimAndDie("alive-worker");
        clock.advance(Duration.ofSeconds(29));
        assertThat(dispatcher((m, ctx) -> Outcome.done()).rescueOnce()).isZero();
        assertThat(Fixtures.status(pg.dsl(), done.id())).isEqualTo("done");
        assertThat(Fixtures.status(pg.dsl(), valid.id())).isEqualTo("running");
    }

    @Test
    void aClaimWhoseCommitTheDispatcherNeverSawIsReturnedWithinSecondsNotAfterTheLease() {
        var msg = Fixtures.enqueueOne(pg.dsl(), clock, Fixtures.message("orphan"));
        Dispatcher d = dispatcher((m, ctx) -> Outcome.done());
        claimAndDie("w1", d.incarnation()); // committed by this very dispatcher, but no handler ever ran it

        assertThat(d.releaseOrphanedClaims()).as("a claim this young may be on its way into flight").isZero();
        clock.advance(ClaimLedger.ORPHAN_GRACE.plusSeconds(1));
        assertThat(d.releaseOrphanedClaims()).isEqualTo(1);

        var row = Fixtures.row(pg.dsl(), msg.id());
        assertThat(row.get(OUTBOX_MESSAGE.STATUS)).isEqualTo("pending");
        assertThat(row.get(OUTBOX_MESSAGE.ATTEMPTS)).as("the attempt never ran: not counted").isZero();
        assertThat(pg.dsl().select(OUTBOX_ATTEMPT.OUTCOME).from(OUTBOX_ATTEMPT)
                .where(OUTBOX_ATTEMPT.MESSAGE_ID.eq(msg.id())).fetch(OUTBOX_ATTEMPT.OUTCOME)).containsExactly("released");
        assertThat(d.runOnce()).isEqualTo(1);
        assertThat(Fixtures.status(pg.dsl(), msg.id())).isEqualTo("done");
    }

    @Test
    void claimsOfASlowClaimRoundAreNotOrphansWhileTheRoundIsStillClaimingItsOtherTopics() throws Exception {
        var orphan = Fixtures.enqueueOne(pg.dsl(), clock, Fixtures.message("orphan"));
        var first = Fixtures.enqueueOne(pg.dsl(), clock, NewMessage.of("lease.a", "order", "a", "a", "{}"));
        var second = Fixtures.enqueueOne(pg.dsl(), clock, NewMessage.of("lease.b", "order", "b", "b", "{}"));
        CountDownLatch secondTopicAsked = new CountDownLatch(1);
        CountDownLatch goOn = new CountDownLatch(1);
        AtomicInteger asked = new AtomicInteger();
        ClaimGate slowAtTheSecondTopic = new ClaimGate() {
            @Override
            public boolean allowsClaims(String topic) {
                return true;
            }

            @Override
            public int claimLimit(String topic) {
                if (asked.incrementAndGet() == 2) {
                    // The round has claimed (and committed) its first topic and is slow before the next.
                    secondTopicAsked.countDown();
                    try {
                        goOn.await(20, TimeUnit.SECONDS);
                    } catch (InterruptedException e) {
                        Thread.currentThread().interrupt();
                    }
                }
                return 10;
            }
        };
        DispatcherConfig config = DispatcherConfig.builder().workerId("w1").batchSize(10).lease(LEASE).clock(clock).build();
        Map<Long, Integer> handled = new ConcurrentHashMap<>();
        MessageHandler handler = (m, ctx) -> {
            handled.merge(m.id(), 1, Integer::sum);
            return Outcome.done();
        };
        Dispatcher d = new Dispatcher(pg.dataSource(), config, Map.of("lease.a", handler, "lease.b", handler),
                slowAtTheSecondTopic, DispatcherListener.NONE);
        claimAndDie("w1", d.incarnation()); // a real orphan, to show the check still works once the round is over

        CompletableFuture<Integer> round = CompletableFuture.supplyAsync(d::runOnce);
        assertThat(secondTopicAsked.await(20, TimeUnit.SECONDS)).isTrue();
        long claimedFirst = Fixtures.countByStatus(pg.dsl(), "running");
        assertThat(claimedFirst).as("the orphan and the round's first topic").isEqualTo(2);
        clock.advance(ClaimLedger.ORPHAN_GRACE.plusSeconds(1)); // the first topic's claim is past the grace

        assertThat(d.releaseOrphanedClaims()).as("nothing is judged while a round that may hold it is claiming").isZero();
        assertThat(Fixtures.countByStatus(pg.dsl(), "running")).isEqualTo(2);

        goOn.countDown();
        assertThat(round.get(20, TimeUnit.SECONDS)).isEqualTo(2);
        assertThat(Fixtures.status(pg.dsl(), first.id())).isEqualTo("done");
        assertThat(Fixtures.status(pg.dsl(), second.id())).isEqualTo("done");
        assertThat(handled).isEqualTo(Map.of(first.id(), 1, second.id(), 1));
        assertThat(pg.dsl().select(OUTBOX_ATTEMPT.OUTCOME).from(OUTBOX_ATTEMPT)
                .where(OUTBOX_ATTEMPT.MESSAGE_ID.in(first.id(), second.id())).fetch(OUTBOX_ATTEMPT.OUTCOME))
                .containsExactly("done", "done");

        assertThat(d.releaseOrphanedClaims()).as("the round is over: the real orphan goes back").isEqualTo(1);
        assertThat(Fixtures.status(pg.dsl(), orphan.id())).isEqualTo("pending");
    }

    @Test
    void claimsOfAnEarlierProcessOfTheSameWorkerIdAreInterrupted_attemptCounted_notHandedBackAsNeverHandled() {
        var msg = Fixtures.enqueueOne(pg.dsl(), clock, Fixtures.message("predecessors"));
        claimAndDie("w1", "the-process-before"); // the process before this one, same worker id, killed
        Dispatcher d = dispatcher((m, ctx) -> Outcome.done());
        clock.advance(ClaimLedger.ORPHAN_GRACE.plusSeconds(1));

        assertThat(d.releaseOrphanedClaims()).as("not an orphan of this process").isZero();
        assertThat(d.interruptPredecessorsClaims()).isEqualTo(1);

        var row = Fixtures.row(pg.dsl(), msg.id());
        assertThat(row.get(OUTBOX_MESSAGE.STATUS)).isEqualTo("pending");
        assertThat(row.get(OUTBOX_MESSAGE.ATTEMPTS)).as("the interrupted attempt counts").isEqualTo(1);
        assertThat(row.get(OUTBOX_MESSAGE.AVAILABLE_AT)).as("with backoff").isEqualTo(clock.instant().plusSeconds(10));
        assertThat(row.get(OUTBOX_MESSAGE.LAST_ERROR))
                .isEqualTo("interrupted: the process holding the claim stopped 1 time (worker w1, attempt 1 of 10)");
        var attempt = pg.dsl().fetchSingle(OUTBOX_ATTEMPT);
        assertThat(attempt.getOutcome()).isEqualTo("interrupted");
        assertThat(attempt.getAttempt()).isEqualTo(1);
        assertThat(attempt.getWorker()).isEqualTo("w1");
        assertThat(d.interruptPredecessorsClaims()).as("once").isZero();
    }

    @Test
    void aMessageInterruptedOnItsLastAttemptFails_sayingHowManyTimesItsProcessStopped() {
        var msg = Fixtures.enqueueOne(pg.dsl(), clock, Fixtures.message("poison").withMaxAttempts(2));
        Dispatcher d = dispatcher((m, ctx) -> Outcome.done());
        for (int life = 1; life <= 2; life++) {
            claimAndDie("w1", "process-" + life);
            assertThat(d.interruptPredecessorsClaims()).isEqualTo(1);
            clock.advance(Duration.ofMinutes(1));
        }
        var row = Fixtures.row(pg.dsl(), msg.id());
        assertThat(row.get(OUTBOX_MESSAGE.STATUS)).isEqualTo("failed");
        assertThat(row.get(OUTBOX_MESSAGE.LAST_ERROR))
                .isEqualTo("interrupted: the process holding the claim stopped 2 times (worker w1, attempt 2 of 2)");
        assertThat(pg.dsl().select(OUTBOX_ATTEMPT.OUTCOME).from(OUTBOX_ATTEMPT).orderBy(OUTBOX_ATTEMPT.ID)
                .fetch(OUTBOX_ATTEMPT.OUTCOME)).containsExactly("interrupted", "interrupted");
        assertThat(pg.dsl().fetchValue("SELECT status FROM outbox_effect WHERE message_id = " + msg.id())).isEqualTo("failed");
    }

    @Test
    void claimsOfThisProcessAreNeverInterrupted() {
        var mine = Fixtures.enqueueOne(pg.dsl(), clock, Fixtures.message("mine"));
        Dispatcher d = dispatcher((m, ctx) -> Outcome.done());
        claimAndDie("w1", d.incarnation());
        var others = Fixtures.enqueueOne(pg.dsl(), clock, Fixtures.message("others"));
        claimAndDie("w2", "another-worker");
        assertThat(d.interruptPredecessorsClaims()).isZero();
        assertThat(Fixtures.status(pg.dsl(), mine.id())).isEqualTo("running");
        assertThat(Fixtures.status(pg.dsl(), others.id())).isEqualTo("running");
    }

    @Test
    void claimsOfOtherWorkersAreNotOrphansOfThisOne() {
        var msg = Fixtures.enqueueOne(pg.dsl(), clock, Fixtures.message("someone-elses"));
        claimAndDie("w2");
        clock.advance(ClaimLedger.ORPHAN_GRACE.plusSeconds(1));
        assertThat(dispatcher((m, ctx) -> Outcome.done()).releaseOrphanedClaims()).isZero();
        assertThat(Fixtures.status(pg.dsl(), msg.id())).isEqualTo("running");
    }

    @Test
    void theHeartbeatLeavesClaimsWhoseOutcomeIsQueuedForTheCompleter() {
        var held = Fixtures.enqueueOne(pg.dsl(), clock, Fixtures.message("still-running"));
        var queued = Fixtures.enqueueOne(pg.dsl(), clock, Fixtures.message("outcome-queued"));
        InFlight running = new InFlight(claimAndDie("w1"));
        InFlight completing = new InFlight(claimAndDie("w1"));
        completing.completing = true;
        var before = Fixtures.row(pg.dsl(), completing.message.id()).get(OUTBOX_MESSAGE.LEASE_UNTIL);
        clock.advance(Duration.ofSeconds(10));
        DispatcherConfig config = DispatcherConfig.builder().workerId("w1").lease(LEASE).clock(clock).build();
        Heartbeater heartbeater = new Heartbeater(new DispatcherSessions(pg.dataSource(), null, null), store, config,
                DispatcherListener.NONE);

        assertThat(heartbeater.beat(List.of(running, completing))).isZero();

        assertThat(Fixtures.row(pg.dsl(), running.message.id()).get(OUTBOX_MESSAGE.LEASE_UNTIL))
                .isEqualTo(clock.instant().plus(LEASE));
        assertThat(Fixtures.row(pg.dsl(), completing.message.id()).get(OUTBOX_MESSAGE.LEASE_UNTIL))
                .as("no lock taken on a row the completer is about to write").isEqualTo(before);
        assertThat(completing.lost).isFalse();
        assertThat(List.of(held.id(), queued.id())).containsExactlyInAnyOrder(running.message.id(), completing.message.id());
    }

    @Test
    void aHeartbeatThatCommitsBeforeTheRescuerWins() {
        var msg = Fixtures.enqueueOne(pg.dsl(), clock, Fixtures.message("contested"));
        ClaimedMessage claim = claimAndDie("w1");
        clock.advance(LEASE.minusSeconds(1));
        var sessions = new DispatcherSessions(pg.dataSource(), null, null);
        java.util.Set<Long> kept = sessions.inTransaction(tx -> store.leases().heartbeat(tx, List.of(claim), LEASE));
        assertThat(kept).containsExactly(msg.id());
        clock.advance(Duration.ofSeconds(2)); // past the old lease
        assertThat(dispatcher((m, ctx) -> Outcome.done()).rescueOnce()).isZero();
        assertThat(Fixtures.status(pg.dsl(), msg.id())).isEqualTo("running");
    }

    @Test
    void theRescuerReChecksTheLeaseUnderTheRowLock() throws Exception {
        var msg = Fixtures.enqueueOne(pg.dsl(), clock, Fixtures.message("locked"));
        claimAndDie("w1");
        clock.advance(LEASE.plusSeconds(5)); // the lease has expired by the rescuer's clock
        Dispatcher d = dispatcher((m, ctx) -> Outcome.done());
        try (Connection heartbeat = pg.newConnection()) {
            heartbeat.setAutoCommit(false);
            try (Statement st = heartbeat.createStatement()) {
                // a heartbeat in flight: it holds the row lock and extends the lease, not yet committed
                st.executeUpdate("UPDATE outbox_message SET lease_until = '" + clock.instant().plus(LEASE)
                        + "' WHERE id = " + msg.id());
            }
            assertThat(d.rescueOnce()).as("a locked row is skipped, not waited for").isZero();
            heartbeat.commit();
        }
        assertThat(d.rescueOnce()).as("after the heartbeat committed, the lease is valid again").isZero();
        assertThat(Fixtures.status(pg.dsl(), msg.id())).isEqualTo("running");
    }

    @Test
    void anExpiredLeaseOnTheLastAttemptFails() {
        var msg = Fixtures.enqueueOne(pg.dsl(), clock, Fixtures.message("last").withMaxAttempts(1));
        claimAndDie("w1");
        clock.advance(LEASE.plusSeconds(1));
        assertThat(dispatcher((m, ctx) -> Outcome.done()).rescueOnce()).isEqualTo(1);
        Record row = Fixtures.row(pg.dsl(), msg.id());
        assertThat(row.get(OUTBOX_MESSAGE.STATUS)).isEqualTo("failed");
        assertThat(row.get(OUTBOX_MESSAGE.FINISHED_AT)).isEqualTo(clock.instant());
    }

    @Test
    void aPoisonMessageReachesFailedAndNeverBlocksTheOthers() {
        var poison = Fixtures.enqueueOne(pg.dsl(), clock, Fixtures.message("poison").withMaxAttempts(3));
        var good = Fixtures.enqueue(pg.dsl(), clock, "good", 5);
        DispatcherConfig config = DispatcherConfig.builder().workerId("w1").batchSize(1).lease(LEASE)
                .backoff(new Backoff(Duration.ofSeconds(10), Duration.ofMinutes(10), 2.0, 0.0)).clock(clock).build();
        Dispatcher d = new Dispatcher(pg.dataSource(), config, Map.of(Fixtures.TOPIC, (m, ctx) ->
                m.idempotencyKey().equals("poison") ? Outcome.retryLater("always fails") : Outcome.done()));
        for (int step = 0; step < 30 && Fixtures.countByStatus(pg.dsl(), "pending") > 0; step++) {
            if (d.runOnce() == 0) {
                clock.advance(Duration.ofSeconds(10));
            }
        }
        assertThat(Fixtures.status(pg.dsl(), poison.id())).isEqualTo("failed");
        good.forEach(g -> assertThat(Fixtures.status(pg.dsl(), g.id())).isEqualTo("done"));
        // the good ones were done while the poison message waited out its backoff
        assertThat(Fixtures.row(pg.dsl(), good.getLast().id()).get(OUTBOX_MESSAGE.FINISHED_AT))
                .isBefore(Fixtures.row(pg.dsl(), poison.id()).get(OUTBOX_MESSAGE.FINISHED_AT));
    }
}
