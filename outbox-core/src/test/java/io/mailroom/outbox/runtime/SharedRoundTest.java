package io.mailroom.outbox.runtime;

import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

/** The meeting point of a claim's messages at a {@link BatchHandler}'s shared step, with real threads. */
class SharedRoundTest {

    private static final ClaimContext HELD = () -> false;

    private static ClaimedMessage message(long id, String payload) {
        Instant now = Instant.now();
        return new ClaimedMessage(id, now, "t", "order", String.valueOf(id), "key-" + id, null, payload, 1, 5, 1, now,
                now.plusSeconds(60));
    }

    /** Prepares "ok" payloads, ends "bad" ones at once, throws for "boom"; records each shared step. */
    private static final class Recording implements BatchHandler<Long> {
        final List<List<Long>> rounds = new CopyOnWriteArrayList<>();
        final Map<Long, Boolean> sharedBeforeComplete = new ConcurrentHashMap<>();
        RuntimeException failTogether;

        @Override
        public Prepared<Long> prepare(ClaimedMessage m, ClaimContext c) {
            return switch (m.payloadJson()) {
                case "bad" -> Prepared.finished(Outcome.failed("bad payload"));
                case "boom" -> throw new IllegalStateException("boom");
                default -> Prepared.of(m.id());
            };
        }

        @Override
        public void together(List<Long> work) {
            if (failTogether != null) {
                throw failTogether;
            }
            List<Long> sorted = new ArrayList<>(work);
            Collections.sort(sorted);
            rounds.add(sorted);
        }

        @Override
        public Outcome complete(Long work, ClaimContext c) {
            sharedBeforeComplete.put(work, rounds.stream().anyMatch(r -> r.contains(work)));
            return Outcome.done();
        }
    }

    private static Map<Long, Object> runAll(SharedRound<Long> round, List<ClaimedMessage> messages) throws Exception {
        Map<Long, Object> results = new ConcurrentHashMap<>();
        List<Thread> threads = new ArrayList<>();
        for (ClaimedMessage m : messages) {
            threads.add(Thread.ofVirtual().start(() -> {
                try {
                    results.put(m.id(), round.handle(m, HELD));
                } catch (Exception e) {
                    results.put(m.id(), e);
                }
            }));
        }
        for (Thread t : threads) {
            assertThat(t.join(Duration.ofSeconds(10))).as("handler thread ended").isTrue();
        }
        return results;
    }

    @Test
    void theSharedStepRunsOnce_forEveryMessageWithWork_beforeAnyCompletes() throws Exception {
        Recording handler = new Recording();
        List<ClaimedMessage> messages = List.of(message(1, "ok"), message(2, "bad"), message(3, "ok"),
                message(4, "boom"), message(5, "ok"));

        Map<Long, Object> results = runAll(new SharedRound<>(handler, messages.size()), messages);

        assertThat(handler.rounds).containsExactly(List.of(1L, 3L, 5L));
        assertThat(handler.sharedBeforeComplete).containsOnlyKeys(1L, 3L, 5L).doesNotContainValue(false);
        assertThat(results.get(1L)).isInstanceOf(Outcome.Done.class);
        assertThat(results.get(2L)).isInstanceOf(Outcome.Failed.class);
        assertThat(results.get(4L)).isInstanceOf(IllegalStateException.class);
    }

    @Test
    void aFailedSharedStep_endsEveryMessageOfTheRoundAsARetry() throws Exception {
        Recording handler = new Recording();
        handler.failTogether = new IllegalStateException("database gone");
        List<ClaimedMessage> messages = List.of(message(1, "ok"), message(2, "ok"), message(3, "ok"));

        Map<Long, Object> results = runAll(new SharedRound<>(handler, messages.size()), messages);

        assertThat(results.values()).hasSize(3).allSatisfy(o -> {
            assertThat(o).isInstanceOf(Outcome.RetryLater.class);
            assertThat(((Outcome.RetryLater) o).error()).contains("database gone");
        });
        assertThat(handler.sharedBeforeComplete).isEmpty();
    }

    @Test
    void aWaitingThread_isNotInterruptedOutOfTheRound_butKeepsItsInterrupt() throws Exception {
        Recording handler = new Recording();
        SharedRound<Long> round = new SharedRound<>(handler, 2);
        CountDownLatch waiting = new CountDownLatch(1);
        List<Object> first = new CopyOnWriteArrayList<>();
        Thread t = Thread.ofVirtual().start(() -> {
            try {
                waiting.countDown();
                first.add(round.handle(message(1, "ok"), HELD));
                first.add(Thread.currentThread().isInterrupted());
            } catch (Exception e) {
                first.add(e);
            }
        });
        assertThat(waiting.await(5, TimeUnit.SECONDS)).isTrue();
        t.interrupt(); // a stop, while message 1 waits for message 2
        round.skip(); // message 2's thread never started

        assertThat(t.join(Duration.ofSeconds(10))).isTrue();
        assertThat(handler.rounds).containsExactly(List.of(1L));
        assertThat(first).hasSize(2);
        assertThat(first.get(0)).isInstanceOf(Outcome.Done.class);
        assertThat(first.get(1)).isEqualTo(true);
    }
}
