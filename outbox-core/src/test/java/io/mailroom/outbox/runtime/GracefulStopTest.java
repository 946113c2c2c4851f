package io.mailroom.outbox.runtime;

import io.mailroom.outbox.Fixtures;
import io.mailroom.testing.PostgresExtension;
import org.awaitility.core.ConditionTimeoutException;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
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

    private final List<String> problems = new CopyOnWriteArrayList<>();

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
                        awaitOnWriter(writingStepMayEnd, "writing's step waiting for the stop");
                    });
                }
                case "queued" -> {
                    // Sent; its outcome waits in the completer's queue behind "writing".
                    awaitOnWriter(writingStepStarted, "queued's handler waiting for writing's step");
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
        assertThat(problems).isEmpty();
    }

    /**
     * Outcomes taken by both kinds of writer at once: the completer's thread and a claimer short of
     * slots. One step waits until the other has started, so neither writer can take both; the second
     * step holds its transaction open until the stop interrupts the handler still running. The stop
     * returns only once both are written, whichever thread holds the open one.
     */
    @Test
    void aStopWaitsForAClaimerWritingOutcomesAsForTheCompleter() throws Exception {
        var first = Fixtures.enqueueOne(pg.dsl(), null, Fixtures.message("first"));
        var second = Fixtures.enqueueOne(pg.dsl(), null, Fixtures.message("second"));
        var running = Fixtures.enqueueOne(pg.dsl(), null, Fixtures.message("running"));
        CountDownLatch firstStepStarted = new CountDownLatch(1);
        CountDownLatch secondStepStarted = new CountDownLatch(1);
        CountDownLatch secondStepMayEnd = new CountDownLatch(1);
        CountDownLatch runningStarted = new CountDownLatch(1);
        Map<String, String> writers = new ConcurrentHashMap<>();

        MessageHandler handler = (m, ctx) -> switch (m.idempotencyKey()) {
            case "first" -> Outcome.done(null, tx -> {
                writers.put("first", Thread.currentThread().getName());
                firstStepStarted.countDown();
                awaitOnWriter(secondStepStarted, "first's step waiting for second's");
            });
            case "second" -> {
                awaitOnWriter(firstStepStarted, "second's handler waiting for first's step");
                yield Outcome.done(null, tx -> {
                    writers.put("second", Thread.currentThread().getName());
                    secondStepStarted.countDown();
                    awaitOnWriter(secondStepMayEnd, "second's step waiting for the stop");
                    tx.execute("SELECT pg_sleep(0.3)"); // and then a slow statement: the stop waits for the commit
                });
            }
            default -> {
                runningStarted.countDown();
                try {
                    new CountDownLatch(1).await();
                } catch (InterruptedException handedBack) {
                    secondStepMayEnd.countDown(); // the stop is under way
                }
                yield Outcome.retryLater("interrupted");
            }
        };
        // Five slots for three claims: the claimer is short of a batch's worth and writes what is queued.
        DispatcherConfig config = DispatcherConfig.builder().workerId("two-writers").batchSize(10).concurrency(5)
                .pollInterval(Duration.ofMillis(50)).lease(Duration.ofSeconds(60))
                .shutdownDeadline(Duration.ofMillis(300)).build();
        Dispatcher d = new Dispatcher(pg.dataSource(), config, Map.of(Fixtures.TOPIC, handler));
        d.start();
        assertThat(runningStarted.await(20, TimeUnit.SECONDS)).isTrue();
        assertThat(secondStepStarted.await(20, TimeUnit.SECONDS)).isTrue();

        d.stop();

        assertThat(writers.values()).as("one step on the completer's thread, one on a claimer's")
                .hasSize(2).containsOnlyOnce("mailroom-completer").anyMatch(t -> t.startsWith("mailroom-producer-"));
        assertThat(Fixtures.status(pg.dsl(), first.id())).isEqualTo("done");
        assertThat(Fixtures.status(pg.dsl(), second.id())).as("written before the stop returned").isEqualTo("done");
        assertThat(Fixtures.status(pg.dsl(), running.id())).isEqualTo("pending");
        assertThat(d.inFlightCount()).isZero();
        assertThat(problems).isEmpty();
    }

    private static boolean aStatementWaitsForALock() {
        return pg.dsl().fetchCount(pg.dsl().select().from("pg_stat_activity")
                .where("datname = current_database() AND wait_event_type = 'Lock'")) > 0;
    }

    /**
     * Waits on a dispatcher's thread (a writer's or a handler's). A wait that runs out is noted for
     * the test to report, not thrown: an error thrown there would surface in whichever test awaits
     * next, on another thread.
     */
    private void awaitOnWriter(CountDownLatch latch, String what) {
        try {
            if (!latch.await(20, TimeUnit.SECONDS)) {
                problems.add(what + ": still waiting after 20 s on " + Thread.currentThread().getName());
            }
        } catch (InterruptedException e) {
            problems.add(what + ": interrupted on " + Thread.currentThread().getName());
            Thread.currentThread().interrupt();
        }
    }
}
