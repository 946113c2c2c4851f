package io.mailroom.idempotency;

import io.mailroom.db.sql.SqlStates;
import io.mailroom.testing.PostgresExtension;
import org.jooq.DSLContext;
import org.jooq.exception.DataAccessException;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInfo;
import org.junit.jupiter.api.extension.RegisterExtension;

import java.time.Instant;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Function;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * {@link IdempotencyStore#reserveAll} and {@link IdempotencyStore#recordAll}: every answer and every
 * transition is the one the single-key method gives, in fewer statements.
 */
class IdempotencyStoreBatchTest {

    @RegisterExtension
    static final PostgresExtension pg = new PostgresExtension();

    private static final Instant T0 = Instant.parse("2030-01-02T03:04:05.123456Z");
    private static final AtomicInteger KEYS = new AtomicInteger();

    private final MutableClock clock = new MutableClock(T0);
    private final IdempotencyStore store = new IdempotencyStore(clock);
    private final Fingerprint fp = Fingerprint.of("to@example.com", "Your order 102", "body", "v1");
    private final Fingerprint other = Fingerprint.of("someone-else@example.com", "Your order 102", "body", "v1");

    private static String newKey(TestInfo info, String what) {
        return "batch-" + info.getTestMethod().orElseThrow().getName() + "-" + what + "-" + KEYS.incrementAndGet();
    }

    private static <T> T inTx(Function<DSLContext, T> work) {
        return pg.dsl().transactionResult(c -> work.apply(c.dsl()));
    }

    private IdempotencyStore.Request request(String key) {
        return new IdempotencyStore.Request(key, fp, "{\"topic\":\"email.order\"}");
    }

    private List<Reservation> reserveAll(List<IdempotencyStore.Request> requests) {
        return inTx(tx -> store.reserveAll(tx, requests, "worker-b"));
    }

    @Test
    void everyStateOfAKey_getsTheAnswerReserveWouldGive_inTheOrderAsked(TestInfo info) {
        String fresh = newKey(info, "new");
        String failed = newKey(info, "failed");
        String succeeded = newKey(info, "succeeded");
        String unrecorded = newKey(info, "unrecorded");
        String ambiguous = newKey(info, "ambiguous");
        String mismatched = newKey(info, "mismatch");
        inTx(tx -> {
            store.reserve(tx, failed, fp, "worker-a", null);
            store.recordFailed(tx, failed, 1, "503 try later");
            store.reserve(tx, succeeded, fp, "worker-a", null);
            store.recordSucceeded(tx, succeeded, 1, "provider-1");
            store.reserve(tx, unrecorded, fp, "worker-a", null);
            store.reserve(tx, ambiguous, fp, "worker-a", null);
            store.markAmbiguous(tx, ambiguous, 1, "timed out after the dot");
            return store.reserve(tx, mismatched, other, "worker-a", null);
        });

        // asked out of key order, the fresh key twice
        List<Reservation> answers = reserveAll(List.of(request(succeeded), request(fresh), request(mismatched),
                request(unrecorded), request(failed), request(ambiguous), request(fresh)));

        assertThat(answers.get(0)).isInstanceOf(Reservation.AlreadySucceeded.class);
        assertThat(((Reservation.AlreadySucceeded) answers.get(0)).resultRef()).isEqualTo("provider-1");
        assertThat(answers.get(1)).isEqualTo(new Reservation.Reserved(fresh, 1, T0, 0));
        assertThat(answers.get(2)).isEqualTo(new Reservation.FingerprintMismatch(mismatched, other, fp));
        assertThat(answers.get(3)).isInstanceOf(Reservation.Unrecorded.class);
        assertThat(((Reservation.Unrecorded) answers.get(3)).reservedBy()).isEqualTo("worker-a");
        assertThat(answers.get(4)).isEqualTo(new Reservation.Reserved(failed, 2, T0, 0));
        assertThat(answers.get(5)).isInstanceOf(Reservation.Ambiguous.class);
        assertThat(((Reservation.Ambiguous) answers.get(5)).reason()).isEqualTo("timed out after the dot");
        // the second request of one key finds the first one's reservation: its outcome is unknown
        assertThat(answers.get(6)).isInstanceOf(Reservation.Unrecorded.class);
        assertThat(((Reservation.Unrecorded) answers.get(6)).reservedBy()).isEqualTo("worker-b");

        EffectRecord again = store.find(pg.dsl(), failed).orElseThrow();
        assertThat(again.state()).isEqualTo(EffectState.RESERVED);
        assertThat(again.reservedBy()).isEqualTo("worker-b");
        assertThat(again.descriptorJson()).contains("email.order");
        assertThat(store.find(pg.dsl(), mismatched).orElseThrow().fingerprint()).isEqualTo(other);
    }

    @Test
    void fiftyNewKeys_areOneStatement(TestInfo info) {
        List<IdempotencyStore.Request> requests = new ArrayList<>();
        for (int i = 0; i < 50; i++) {
            requests.add(request(newKey(info, "k" + i)));
        }
        AtomicInteger statements = new AtomicInteger();
        DSLContext counted = org.jooq.impl.DSL.using(new io.mailroom.testing.WrappingDataSource(pg.dataSource()) {
            @Override
            protected java.sql.Connection wrap(java.sql.Connection real) {
                return (java.sql.Connection) java.lang.reflect.Proxy.newProxyInstance(getClass().getClassLoader(),
                        new Class<?>[]{java.sql.Connection.class}, (proxy, method, args) -> {
                            if (method.getName().startsWith("prepare")) {
                                statements.incrementAndGet();
                            }
                            return invoke(real, method, args);
                        });
            }
        }, org.jooq.SQLDialect.POSTGRES);

        List<Reservation> answers = counted.transactionResult(c -> store.reserveAll(c.dsl(), requests, "worker-b"));

        assertThat(answers).hasSize(50).allSatisfy(r -> assertThat(r).isInstanceOf(Reservation.Reserved.class));
        assertThat(statements.get()).isEqualTo(1);
        for (int i = 0; i < 50; i++) {
            assertThat(answers.get(i).effectKey()).isEqualTo(requests.get(i).effectKey());
        }
    }

    @Test
    void aBadRequest_isNamedByItsIndex_andNothingIsReserved(TestInfo info) {
        String good = newKey(info, "good");
        List<IdempotencyStore.Request> requests = List.of(request(good),
                new IdempotencyStore.Request("bad\nkey", fp, null));

        assertThatThrownBy(() -> reserveAll(requests))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("requests[1]")
                .hasMessageContaining("effectKey");
        assertThatThrownBy(() -> reserveAll(List.of(new IdempotencyStore.Request(good, fp, "[1]"))))
                .hasMessageContaining("requests[0]").hasMessageContaining("descriptorJson");
        assertThatThrownBy(() -> reserveAll(List.of(new IdempotencyStore.Request(good, fp, "{not json"))))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("not valid JSON");
        assertThat(store.find(pg.dsl(), good)).isEmpty();
    }

    @Test
    void recordAll_writesEachTransitionAsItsOwnMethodWould(TestInfo info) {
        String sent = newKey(info, "sent");
        String refused = newKey(info, "refused");
        String unknown = newKey(info, "unknown");
        String secondTry = newKey(info, "second");
        inTx(tx -> {
            store.reserveAll(tx, List.of(request(sent), request(refused), request(unknown), request(secondTry)), "w");
            store.recordFailed(tx, secondTry, 1, "421 busy");
            return store.reserve(tx, secondTry, fp, "w", null);
        });
        clock.advance(java.time.Duration.ofSeconds(3));
        Instant t1 = clock.instant();

        inTx(tx -> {
            store.recordAll(tx, List.of(
                    IdempotencyStore.Transition.succeeded(secondTry, 2, "provider-2"),
                    IdempotencyStore.Transition.failed(refused, 1, "550 no such mailbox"),
                    IdempotencyStore.Transition.ambiguous(unknown, 1, "connection lost after the dot"),
                    IdempotencyStore.Transition.succeeded(sent, 1, "provider-1")));
            return null;
        });

        EffectRecord s = store.find(pg.dsl(), sent).orElseThrow();
        assertThat(s.state()).isEqualTo(EffectState.SUCCEEDED);
        assertThat(s.resultRef()).isEqualTo("provider-1");
        assertThat(s.completedAt()).isEqualTo(t1);
        assertThat(s.updatedAt()).isEqualTo(t1);
        EffectRecord r = store.find(pg.dsl(), refused).orElseThrow();
        assertThat(r.state()).isEqualTo(EffectState.FAILED);
        assertThat(r.lastError()).isEqualTo("550 no such mailbox");
        assertThat(r.completedAt()).isEqualTo(t1);
        EffectRecord u = store.find(pg.dsl(), unknown).orElseThrow();
        assertThat(u.state()).isEqualTo(EffectState.AMBIGUOUS);
        assertThat(u.lastError()).isEqualTo("connection lost after the dot");
        assertThat(u.completedAt()).isNull();
        EffectRecord again = store.find(pg.dsl(), secondTry).orElseThrow();
        assertThat(again.state()).isEqualTo(EffectState.SUCCEEDED);
        assertThat(again.resultRef()).isEqualTo("provider-2");
        assertThat(again.lastError()).isEqualTo("421 busy"); // as recordSucceeded leaves it
    }

    @Test
    void recordAll_withOneStaleReservation_isRejected_andTheCallerRollsBackTheRest(TestInfo info) {
        String mine = newKey(info, "mine");
        String stale = newKey(info, "stale");
        inTx(tx -> {
            store.reserveAll(tx, List.of(request(mine), request(stale)), "w");
            store.recordFailed(tx, stale, 1, "503");
            return store.reserve(tx, stale, fp, "w2", null); // somebody else holds number 2 now
        });

        assertThatThrownBy(() -> inTx(tx -> {
            store.recordAll(tx, List.of(IdempotencyStore.Transition.succeeded(mine, 1, "p-1"),
                    IdempotencyStore.Transition.succeeded(stale, 1, "p-2")));
            return null;
        })).isInstanceOf(TransitionRejectedException.class).hasMessageContaining(stale);

        assertThat(store.find(pg.dsl(), mine).orElseThrow().state()).isEqualTo(EffectState.RESERVED);
        assertThat(store.find(pg.dsl(), stale).orElseThrow().reservations()).isEqualTo(2);
        assertThat(store.find(pg.dsl(), stale).orElseThrow().state()).isEqualTo(EffectState.RESERVED);

        assertThatThrownBy(() -> inTx(tx -> {
            store.recordAll(tx, List.of(IdempotencyStore.Transition.succeeded(mine, 1, "p-1"),
                    IdempotencyStore.Transition.failed(mine, 1, "550")));
            return null;
        })).isInstanceOf(TransitionRejectedException.class).hasMessageContaining(mine);
        assertThatThrownBy(() -> inTx(tx -> {
            store.recordAll(tx, List.of(new IdempotencyStore.Transition(mine, 1, EffectState.RESERVED, "x")));
            return null;
        })).isInstanceOf(IllegalArgumentException.class).hasMessageContaining("transitions[0]");
    }

    /** Four batches over the same keys, each in its own order: every key is granted exactly once. */
    @Test
    void concurrentBatchesOverTheSameKeys_grantEachKeyOnce(TestInfo info) throws Exception {
        List<String> keys = new ArrayList<>();
        for (int i = 0; i < 200; i++) {
            keys.add(newKey(info, "c" + i));
        }
        Map<String, AtomicInteger> granted = new ConcurrentHashMap<>();
        CountDownLatch start = new CountDownLatch(1);
        List<Thread> threads = new ArrayList<>();
        AtomicInteger deadlocks = new AtomicInteger();
        for (int t = 0; t < 4; t++) {
            List<String> mine = new ArrayList<>(keys);
            Collections.shuffle(mine, new Random(t));
            String worker = "worker-" + t;
            threads.add(Thread.ofPlatform().start(() -> {
                try {
                    start.await();
                    for (int from = 0; from < mine.size(); from += 50) {
                        List<IdempotencyStore.Request> batch = mine.subList(from, from + 50).stream()
                                .map(this::request).toList();
                        List<Reservation> answers = null;
                        while (answers == null) {
                            try {
                                answers = inTx(tx -> store.reserveAll(tx, batch, worker));
                            } catch (DataAccessException e) {
                                if (!SqlStates.is(e, SqlStates.DEADLOCK_DETECTED)) {
                                    throw e;
                                }
                                deadlocks.incrementAndGet(); // rolled back whole: the batch goes again
                            }
                        }
                        answers.stream().filter(r -> r instanceof Reservation.Reserved)
                                .forEach(r -> granted.computeIfAbsent(r.effectKey(), k -> new AtomicInteger()).incrementAndGet());
                    }
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            }));
        }
        start.countDown();
        for (Thread t : threads) {
            t.join();
        }

        assertThat(granted.keySet()).containsExactlyInAnyOrderElementsOf(keys);
        assertThat(granted.values()).allSatisfy(n -> assertThat(n.get()).isEqualTo(1));
        System.out.println("concurrent batches: " + deadlocks.get() + " deadlock(s) retried");
    }
}
