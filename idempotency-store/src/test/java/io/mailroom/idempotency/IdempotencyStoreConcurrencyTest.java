package io.mailroom.idempotency;

import io.mailroom.testing.PostgresExtension;
import org.jooq.DSLContext;
import org.jooq.SQLDialect;
import org.jooq.impl.DSL;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import java.sql.Connection;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Callable;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Consumer;

import static io.mailroom.db.jooq.Tables.IDEMPOTENCY_RECORD;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * Real threads, each with its own transaction at READ COMMITTED, on one key or many. A reserver that
 * meets an open reservation of the same key waits for the holder's transaction and then sees its
 * outcome; these tests pin that behaviour as well as "exactly one Reserved".
 */
class IdempotencyStoreConcurrencyTest {

    @RegisterExtension
    static final PostgresExtension pg = new PostgresExtension();

    private static final Duration TIMEOUT = Duration.ofSeconds(30);

    private final IdempotencyStore store = new IdempotencyStore();
    private final Fingerprint fp = Fingerprint.of("to@example.com", "subject", "body", "v1");
    private ExecutorService threads;

    @BeforeEach
    void startThreads() {
        threads = Executors.newFixedThreadPool(8);
    }

    @AfterEach
    void stopThreads() throws InterruptedException {
        threads.shutdownNow();
        assertThat(threads.awaitTermination(10, TimeUnit.SECONDS)).isTrue();
    }

    private Reservation reserveInOwnTransaction(String key, String worker) {
        return pg.dsl().transactionResult(c -> store.reserve(c.dsl(), key, fp, worker, null));
    }

    private <T> List<T> runAtOnce(int n, java.util.function.IntFunction<T> work) throws Exception {
        CyclicBarrier start = new CyclicBarrier(n);
        List<Future<T>> futures = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            int id = i;
            futures.add(threads.submit(() -> {
                start.await(TIMEOUT.toSeconds(), TimeUnit.SECONDS);
                return work.apply(id);
            }));
        }
        List<T> results = new ArrayList<>();
        for (Future<T> f : futures) {
            results.add(f.get(TIMEOUT.toSeconds(), TimeUnit.SECONDS));
        }
        return results;
    }

    @Test
    void sameKey_manyThreadsAtOnce_exactlyOneIsReserved_theOthersSeeItUnrecorded() throws Exception {
        String key = "email-order-concurrent";

        List<Reservation> results = runAtOnce(8, i -> reserveInOwnTransaction(key, "worker-" + i));

        assertThat(results).filteredOn(Reservation.Reserved.class::isInstance).hasSize(1);
        String winner = store.find(pg.dsl(), key).orElseThrow().reservedBy();
        assertThat(results).filteredOn(r -> !(r instanceof Reservation.Reserved)).hasSize(7)
                .allSatisfy(r -> assertThat(r).isInstanceOfSatisfying(Reservation.Unrecorded.class, u -> {
                    assertThat(u.reservedBy()).isEqualTo(winner);
                    assertThat(u.reservations()).isEqualTo(1);
                }));
        assertThat(store.find(pg.dsl(), key).orElseThrow().reservations()).isEqualTo(1);
    }

    @Test
    void aReserverWaitsForTheHoldersTransaction_thenSeesItsCommittedReservation() throws Exception {
        Reservation seen = whileHolderIsOpen("wait-commit", holder -> {
            assertThat(store.reserve(holder, "wait-commit", fp, "holder", null))
                    .isInstanceOf(Reservation.Reserved.class);
        }, Connection::commit);

        assertThat(seen).isInstanceOfSatisfying(Reservation.Unrecorded.class,
                u -> assertThat(u.reservedBy()).isEqualTo("holder"));
    }

    @Test
    void aReserverWaitsForTheHoldersTransaction_andIsReservedWhenItRollsBack() throws Exception {
        Reservation seen = whileHolderIsOpen("wait-rollback", holder -> {
            store.reserve(holder, "wait-rollback", fp, "holder", null);
        }, Connection::rollback);

        assertThat(seen).isInstanceOfSatisfying(Reservation.Reserved.class,
                r -> assertThat(r.reservationNumber()).isEqualTo(1));
        assertThat(store.find(pg.dsl(), "wait-rollback").orElseThrow().reservedBy()).isEqualTo("waiter");
    }

    @Test
    void aReserverWaitsForTheHoldersTransaction_andSeesTheSuccessRecordedInIt() throws Exception {
        Reservation seen = whileHolderIsOpen("wait-success", holder -> {
            store.reserve(holder, "wait-success", fp, "holder", null);
            store.recordSucceeded(holder, "wait-success", 1, "msg-1");
        }, Connection::commit);

        assertThat(seen).isInstanceOfSatisfying(Reservation.AlreadySucceeded.class,
                s -> assertThat(s.resultRef()).isEqualTo("msg-1"));
    }

    @Test
    void aReserverMeetingARowBeingChanged_waitsAndDecidesOnTheCommittedVersion() throws Exception {
        // The row exists but its latest version is in flux: the unique check of the waiter's INSERT
        // waits for the changing transaction, then ON CONFLICT sees the committed FAILED version.
        reserveInOwnTransaction("wait-change", "first");
        Reservation seen = whileHolderIsOpen("wait-change", holder -> {
            store.recordFailed(holder, "wait-change", 1, "421 try again later");
        }, Connection::commit);

        assertThat(seen).isInstanceOfSatisfying(Reservation.Reserved.class,
                r -> assertThat(r.reservationNumber()).isEqualTo(2));
    }

    @Test
    void aReserverMeetingALockedRow_waitsInSelectForUpdate_andSeesTheRepeatMadeUnderTheLock() throws Exception {
        // A reserve that answered Unrecorded still holds the row lock until its transaction ends, so
        // its holder can decide to repeat without anyone deciding on the same version meanwhile.
        reserveInOwnTransaction("wait-lock", "crashed");
        AtomicReference<Reservation.Unrecorded> unknown = new AtomicReference<>();
        Reservation seen = whileHolderIsOpen("wait-lock",
                holder -> unknown.set((Reservation.Unrecorded) store.reserve(holder, "wait-lock", fp, "holder", null)),
                connection -> {
                    // Only now, with the waiter blocked on the lock, does the holder repeat.
                    assertThat(store.reserveAgain(DSL.using(connection, SQLDialect.POSTGRES), unknown.get(), fp,
                            "holder", null)).isInstanceOf(Reservation.Reserved.class);
                    connection.commit();
                });

        assertThat(seen).isInstanceOfSatisfying(Reservation.Unrecorded.class, u -> {
            assertThat(u.reservations()).isEqualTo(2);
            assertThat(u.reservedBy()).isEqualTo("holder");
        });
    }

    /**
     * Runs {@code hold} in an open transaction on its own connection, starts a reserver of
     * {@code key} in another thread, proves it is blocked on a lock (not merely slow), then ends the
     * holder's transaction with {@code end} and returns what the reserver got.
     */
    private Reservation whileHolderIsOpen(String key, Consumer<DSLContext> hold, SqlAction end) throws Exception {
        try (Connection connection = pg.newConnection()) {
            connection.setAutoCommit(false);
            hold.accept(DSL.using(connection, SQLDialect.POSTGRES));

            Future<Reservation> waiter = threads.submit((Callable<Reservation>) () -> reserveInOwnTransaction(key, "waiter"));
            await().atMost(TIMEOUT).until(() -> sessionsWaitingOnALock() >= 1);
            assertThat(waiter).isNotDone();

            end.run(connection);
            return waiter.get(TIMEOUT.toSeconds(), TimeUnit.SECONDS);
        }
    }

    private static int sessionsWaitingOnALock() {
        return pg.dsl().fetchOne("select count(*) from pg_stat_activity "
                + "where datname = current_database() and wait_event_type = 'Lock'").get(0, Integer.class);
    }

    @FunctionalInterface
    private interface SqlAction {
        void run(Connection connection) throws Exception;
    }

    @Test
    void reserveAgainOnTheSameAnswer_manyThreadsAtOnce_exactlyOneRepeats() throws Exception {
        String key = "email-order-repeat";
        reserveInOwnTransaction(key, "crashed-worker");
        Reservation.Unrecorded seen = (Reservation.Unrecorded) reserveInOwnTransaction(key, "observer");

        List<Reservation> results = runAtOnce(6, i -> pg.dsl().transactionResult(
                c -> store.reserveAgain(c.dsl(), seen, fp, "worker-" + i, null)));

        assertThat(results).filteredOn(Reservation.Reserved.class::isInstance).singleElement()
                .satisfies(r -> assertThat(((Reservation.Reserved) r).reservationNumber()).isEqualTo(2));
        assertThat(results).filteredOn(r -> !(r instanceof Reservation.Reserved)).hasSize(5)
                .allSatisfy(r -> assertThat(r).isInstanceOfSatisfying(Reservation.Unrecorded.class,
                        u -> assertThat(u.reservations()).isEqualTo(2)));
        assertThat(store.find(pg.dsl(), key).orElseThrow().reservations()).isEqualTo(2);
    }

    @Test
    void thousandKeys_fourThreadsEach_everyKeyIsReservedExactlyOnce() throws Exception {
        int keys = 1000;
        int workers = 4;
        Map<String, AtomicInteger> reservedPerKey = new ConcurrentHashMap<>();
        AtomicInteger unrecorded = new AtomicInteger();

        // Every thread walks the keys in the same order, so the threads meet on the same key often.
        runAtOnce(workers, w -> {
            for (int k = 0; k < keys; k++) {
                String key = "bulk-" + k;
                switch (reserveInOwnTransaction(key, "worker-" + w)) {
                    case Reservation.Reserved r -> reservedPerKey.computeIfAbsent(key, x -> new AtomicInteger())
                            .incrementAndGet();
                    case Reservation.Unrecorded u -> unrecorded.incrementAndGet();
                    case Reservation other -> throw new AssertionError("unexpected " + other);
                }
            }
            return null;
        });

        assertThat(reservedPerKey).hasSize(keys);
        assertThat(reservedPerKey.values()).allSatisfy(n -> assertThat(n.get()).isEqualTo(1));
        assertThat(unrecorded.get()).isEqualTo(keys * (workers - 1));
        var r = IDEMPOTENCY_RECORD;
        assertThat(pg.dsl().fetchCount(r, r.EFFECT_KEY.like("bulk-%"))).isEqualTo(keys);
        assertThat(pg.dsl().fetchCount(r, r.EFFECT_KEY.like("bulk-%").and(r.RESERVATIONS.ne(1)))).isZero();
    }
}
