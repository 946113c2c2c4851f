package io.mailroom.outbox.runtime;

import io.mailroom.outbox.Fixtures;
import io.mailroom.testing.PostgresExtension;
import org.awaitility.core.ConditionTimeoutException;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import java.time.Duration;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import static io.mailroom.db.jooq.Tables.OUTBOX_ATTEMPT;
import static io.mailroom.db.jooq.Tables.OUTBOX_MESSAGE;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/** {@link Dispatcher#stop()} with real threads: what it writes, what it hands back. */
class GracefulStopTest {

    @RegisterExtension
    static final PostgresExtension pg = new PostgresExtension();

    @BeforeEach
    void clean() {
        pg.dsl().execute("TRUNCATE outbox_message, outbox_effect, outbox_effect_term, outbox_attempt");
    }

    @Test
    void aStopWritesTheOutcomesAlreadyQueuedAndHandsBackOnlyTheClaimsWithoutOne() throws Exception {
        // Ids in this order: a hand-back statement over all three would lock "queued" first.
        var queued = Fixtures.enqueueOne(pg.dsl(), null, Fixtures.message("queued"));
        var writing = Fixtures.enqueueOne(pg.dsl(), null, Fixtures.message("writing"));
        var running = Fixtures.enqueueOne(pg.dsl(), null, Fixtures.message("running"));
        CountDownLatch writingStepStarted = new CountDownLatch(1);
        CountDownLatch writingStepMayEnd = new CountDownLatch(1);
        CountDownLatch runningStarted = new CountDownLatch(1);
        CountDownLatch queuedReturned = new CountDownLatch(1);
        Map<String, AtomicInteger> handled = new ConcurrentHashMap<>();

        MessageHandler handler = (m, ctx) -> {
            handled.computeIfAbsent(m.idempotencyKey(), k -> new AtomicInteger()).incrementAndGet();
            switch (m.idempotencyKey()) {
                case "writing" -> {
                    // Its completion transaction stays open (row locked) until the stop is under way.
                    return Outcome.done(null, tx -> {
                        writingStepStarted.countDown();
                        awaitQuietly(writingStepMayEnd);
                    });
                }
                case "queued" -> {
                    // Sent; its outcome waits in the completer's queue behind "writing".
                    assertThat(writingStepStarted.await(20, TimeUnit.SECONDS)).isTrue();
                    queuedReturned.countDown();
                    return Outcome.done();
                }
                default -> {
                    runningStarted.countDown();
                    try {
                        new CountDownLatch(1).await(); // still sending when the stop's deadline passes
                    } catch (InterruptedException handedBack) {
                        // The stop is handing claims back. Let the completer go on once a hand-back
                        // statement is blocked on the open completion (or, if none comes, shortly).
                        try {
                            await().atMost(Duration.ofSeconds(2)).pollInterval(Duration.ofMillis(20))
                                    .until(GracefulStopTest::aStatementWaitsForALock);
                        } catch (ConditionTimeoutException noneWaits) {
                            // nothing was handed back over a row the completer holds
                        }
                        writingStepMayEnd.countDown();
                    }
                    return Outcome.retryLater("interrupted");
                }
            }
        };
        DispatcherConfig config = DispatcherConfig.builder().workerId("stopping").batchSize(10).concurrency(4)
                .lease(Duration.ofSeconds(60)).shutdownDeadline(Duration.ofMillis(500)).build();
        Dispatcher d = new Dispatcher(pg.dataSource(), config, Map.of(Fixtures.TOPIC, handler));
        d.start();
        assertThat(runningStarted.await(20, TimeUnit.SECONDS)).isTrue();
        assertThat(queuedReturned.await(20, TimeUnit.SECONDS)).isTrue();

        d.stop();

        assertThat(Fixtures.status(pg.dsl(), writing.id())).isEqualTo("done");
        assertThat(Fixtures.status(pg.dsl(), queued.id())).as("its outcome was queued: written, not fenced out").isEqualTo("done");
        var handedBack = Fixtures.row(pg.dsl(), running.id());
        assertThat(handedBack.get(OUTBOX_MESSAGE.STATUS)).isEqualTo("pending");
        assertThat(handedBack.get(OUTBOX_MESSAGE.ATTEMPTS)).as("handed back: attempt not counted").isZero();
        assertThat(pg.dsl().select(OUTBOX_ATTEMPT.MESSAGE_ID, OUTBOX_ATTEMPT.OUTCOME).from(OUTBOX_ATTEMPT)
                .fetchMap(OUTBOX_ATTEMPT.MESSAGE_ID, OUTBOX_ATTEMPT.OUTCOME))
                .isEqualTo(Map.of(queued.id(), "done", writing.id(), "done", running.id(), "released"));
        assertThat(handled.values()).allSatisfy(c -> assertThat(c.get()).isEqualTo(1));
        assertThat(d.inFlightCount()).isZero();
    }

    private static boolean aStatementWaitsForALock() {
        return pg.dsl().fetchCount(pg.dsl().select().from("pg_stat_activity")
                .where("datname = current_database() AND wait_event_type = 'Lock'")) > 0;
    }

    private static void awaitQuietly(CountDownLatch latch) {
        try {
            assertThat(latch.await(20, TimeUnit.SECONDS)).isTrue();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
