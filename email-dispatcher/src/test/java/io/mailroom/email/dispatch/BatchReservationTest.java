package io.mailroom.email.dispatch;

import io.mailroom.email.Email;
import io.mailroom.email.resilience.TransportPolicyConfig;
import io.mailroom.email.transport.MailTransport;
import io.mailroom.email.transport.SendResult;
import io.mailroom.idempotency.IdempotencyStore;
import io.mailroom.outbox.runtime.Dispatcher;
import io.mailroom.outbox.runtime.DispatcherConfig;
import io.mailroom.testing.ChildJvm;
import io.mailroom.testing.PostgresExtension;
import io.mailroom.testing.WrappingDataSource;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.postgresql.ds.PGSimpleDataSource;

import javax.sql.DataSource;
import java.lang.reflect.Proxy;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicInteger;

import static io.mailroom.db.jooq.Tables.IDEMPOTENCY_RECORD;
import static io.mailroom.db.jooq.Tables.OUTBOX_MESSAGE;
import static io.mailroom.email.dispatch.DispatchFixture.TOPIC;
import static io.mailroom.email.dispatch.DispatchFixture.enqueueOrder;
import static io.mailroom.email.dispatch.DispatchFixture.makeDue;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * The email path keeps a claimed batch together: one commit reserves every key of the batch (and
 * stores what is about to be sent), before any send; the outcomes are written with the batch's
 * completion. A process killed between that commit and the sends leaves every email of the batch
 * with an unknown outcome, which the ambiguity policy decides; none is silently sent again.
 */
class BatchReservationTest {

    @RegisterExtension
    static final PostgresExtension pg = new PostgresExtension();

    private static final int BATCH = 50;

    @BeforeEach
    void clean() {
        pg.dsl().execute("TRUNCATE outbox_message, outbox_effect, outbox_effect_term, outbox_attempt, idempotency_record, email_rendering");
    }

    /** Accepts every email; remembers each key it was given, in order. */
    static final class AcceptingTransport implements MailTransport {
        final List<String> keys = Collections.synchronizedList(new ArrayList<>());

        @Override
        public String name() {
            return "smtp";
        }

        @Override
        public SendResult send(Email email, String idempotencyKey) {
            keys.add(idempotencyKey);
            return new SendResult.Sent("<" + idempotencyKey + "@shop.example.com>", "{\"replyCode\":250}");
        }
    }

    /** Counts commits, and statements by the table they touch, of the connections it hands out. */
    static final class Census extends WrappingDataSource {
        final AtomicInteger commits = new AtomicInteger();
        final Map<String, AtomicInteger> statements = new ConcurrentHashMap<>();

        Census(DataSource delegate) {
            super(delegate);
        }

        int statementsOn(String table) {
            AtomicInteger n = statements.get(table);
            return n == null ? 0 : n.get();
        }

        @Override
        protected Connection wrap(Connection real) {
            return (Connection) Proxy.newProxyInstance(getClass().getClassLoader(), new Class<?>[]{Connection.class},
                    (proxy, method, args) -> {
                        if (method.getName().equals("commit")) {
                            commits.incrementAndGet();
                        } else if (method.getName().startsWith("prepare") && args != null && args[0] instanceof String sql) {
                            for (String table : List.of("idempotency_record", "email_rendering", "outbox_message")) {
                                if (sql.contains(table)) {
                                    statements.computeIfAbsent(table, t -> new AtomicInteger()).incrementAndGet();
                                }
                            }
                        }
                        return invoke(real, method, args);
                    });
        }
    }

    private static Dispatcher dispatcher(DataSource queue, DataSource handlerDb, MailTransport transport,
                                         AmbiguityPolicy policy) {
        EmailHandler handler = new EmailHandler(handlerDb, new IdempotencyStore(), DispatchFixture.composer(),
                DispatchFixture.resilient(transport, TransportPolicyConfig.defaults()), policy, "batch-worker", null);
        DispatcherConfig config = DispatcherConfig.builder().workerId("batch-worker").batchSize(BATCH)
                .concurrency(BATCH).build();
        return new Dispatcher(queue, config, Map.of(TOPIC, handler));
    }

    @Test
    void aBatchOfFifty_isReservedInOneCommit_andItsOutcomesWrittenWithItsCompletion() {
        for (long id = 1; id <= BATCH; id++) {
            enqueueOrder(pg.dsl(), id);
        }
        Census handlerDb = new Census(pg.dataSource());
        Census queueDb = new Census(pg.dataSource());
        AcceptingTransport transport = new AcceptingTransport();

        int claimed = dispatcher(queueDb, handlerDb, transport, AmbiguityPolicy.review()).runOnce();

        assertThat(claimed).isEqualTo(BATCH);
        assertThat(transport.keys).hasSize(BATCH).doesNotHaveDuplicates();
        // the handler's whole database work: one transaction, one statement per table
        assertThat(handlerDb.commits.get()).isEqualTo(1);
        assertThat(handlerDb.statementsOn("idempotency_record")).isEqualTo(1);
        assertThat(handlerDb.statementsOn("email_rendering")).isEqualTo(1);
        // the completion: one statement for the fifty idempotency records, in the batch's one commit
        assertThat(queueDb.statementsOn("idempotency_record")).isEqualTo(1);
        assertThat(queueDb.commits.get()).isEqualTo(2); // the claim, the completion
        assertThat(pg.dsl().fetchCount(IDEMPOTENCY_RECORD, IDEMPOTENCY_RECORD.STATE.eq("succeeded"))).isEqualTo(BATCH);
        assertThat(pg.dsl().fetchCount(OUTBOX_MESSAGE, OUTBOX_MESSAGE.STATUS.eq("done"))).isEqualTo(BATCH);
        assertThat(pg.dsl().fetchCount(io.mailroom.db.jooq.Tables.EMAIL_RENDERING)).isEqualTo(BATCH);
    }

    @Test
    void aBatchWithSentAndBadMessages_sendsOnlyWhatIsNew_inOneReservationCommit() {
        IdempotencyStore store = new IdempotencyStore();
        Fingerprints known = new Fingerprints();
        // orders 1..10 were sent by an earlier deploy whose outbox rows are gone (retention): their
        // effects are recorded as sent, under the fingerprint of the same request
        pg.dsl().transaction(c -> {
            for (long id = 1; id <= 10; id++) {
                store.reserve(c.dsl(), DispatchFixture.key(id), known.of(id), "old-worker", null);
                store.recordSucceeded(c.dsl(), DispatchFixture.key(id), 1, "<old-" + id + "@shop.example.com>");
            }
        });
        for (long id = 1; id <= 20; id++) {
            enqueueOrder(pg.dsl(), id);
        }
        pg.dsl().transaction(c -> {
            DispatchFixture.enqueue(c.dsl(), 90, DispatchFixture.payload(90, "not an address", "X"));
            DispatchFixture.enqueue(c.dsl(), 91, DispatchFixture.payload(91, "a@example.com\\r\\nBcc: b@example.com", "X"));
        });
        Census handlerDb = new Census(pg.dataSource());
        AcceptingTransport transport = new AcceptingTransport();

        dispatcher(pg.dataSource(), handlerDb, transport, AmbiguityPolicy.review()).runOnce();

        assertThat(handlerDb.commits.get()).isEqualTo(1);
        assertThat(transport.keys).hasSize(10).allSatisfy(k ->
                assertThat(Long.parseLong(k.substring("email-order-".length()))).isBetween(11L, 20L));
        assertThat(pg.dsl().fetchCount(OUTBOX_MESSAGE, OUTBOX_MESSAGE.STATUS.eq("done"))).isEqualTo(20);
        assertThat(pg.dsl().fetchCount(OUTBOX_MESSAGE, OUTBOX_MESSAGE.STATUS.eq("failed"))).isEqualTo(2);
        assertThat(pg.dsl().fetchCount(IDEMPOTENCY_RECORD, IDEMPOTENCY_RECORD.STATE.eq("succeeded"))).isEqualTo(20);
    }

    /** The fingerprint the handler computes for {@link DispatchFixture#enqueueOrder}'s request. */
    private static final class Fingerprints {
        io.mailroom.idempotency.Fingerprint of(long id) {
            try {
                var composed = DispatchFixture.composer().compose(new io.mailroom.outbox.runtime.ClaimedMessage(id,
                        java.time.Instant.now(), TOPIC, "order", String.valueOf(id), DispatchFixture.key(id), null,
                        DispatchFixture.payload(id, "customer" + id + "@example.com", "Customer " + id),
                        1, 10, 1, java.time.Instant.now(), java.time.Instant.now().plusSeconds(60)));
                return io.mailroom.idempotency.Fingerprint.of(composed.fingerprintParts().toArray(String[]::new));
            } catch (Exception e) {
                throw new IllegalStateException(e);
            }
        }
    }

    // ------------------------------------------------------------------ a crash after the reservation

    /**
     * Kills (SIGKILL) a dispatcher process right after its batch reservation committed, as its
     * first send begins; the provider never saw a byte. Every email of the batch is then RESERVED
     * with no outcome, and its message running under a dead lease.
     */
    private static void crashAfterTheBatchReservation(Path dir) throws Exception {
        for (long id = 1; id <= BATCH; id++) {
            enqueueOrder(pg.dsl(), id);
        }
        try (ChildJvm child = ChildJvm.of("batch-crash", CrashingDispatcher.class.getName())
                .args(List.of(pg.database().jdbcUrlWithCredentials())).log(dir.resolve("child.log")).controlled()
                .start()) {
            child.expect("SENDING");
            child.kill9();
        }
        assertThat(pg.dsl().fetchCount(IDEMPOTENCY_RECORD, IDEMPOTENCY_RECORD.STATE.eq("reserved"))).isEqualTo(BATCH);
        assertThat(pg.dsl().fetchCount(OUTBOX_MESSAGE, OUTBOX_MESSAGE.STATUS.eq("running"))).isEqualTo(BATCH);
        pg.dsl().execute("UPDATE outbox_message SET lease_until = now() - interval '1 second' WHERE status = 'running'");
    }

    @Test
    void killedBetweenTheBatchReservationAndTheSends_inReviewMode_everyEmailIsParked_noneSent() throws Exception {
        Path dir = Files.createTempDirectory("batch-crash");
        crashAfterTheBatchReservation(dir);
        AcceptingTransport transport = new AcceptingTransport();
        Dispatcher next = dispatcher(pg.dataSource(), pg.dataSource(), transport, AmbiguityPolicy.review());

        assertThat(next.rescueOnce()).isEqualTo(BATCH);
        makeDue(pg.dsl());
        next.runOnce();

        assertThat(transport.keys).isEmpty();
        assertThat(pg.dsl().fetchCount(OUTBOX_MESSAGE, OUTBOX_MESSAGE.STATUS.eq("review"))).isEqualTo(BATCH);
        assertThat(pg.dsl().fetchCount(IDEMPOTENCY_RECORD, IDEMPOTENCY_RECORD.STATE.eq("ambiguous"))).isEqualTo(BATCH);
    }

    @Test
    void killedBetweenTheBatchReservationAndTheSends_withAProviderKey_eachEmailIsSentOnceMore_underItsOwnKey() throws Exception {
        Path dir = Files.createTempDirectory("batch-crash");
        crashAfterTheBatchReservation(dir);
        AcceptingTransport transport = new AcceptingTransport();
        Dispatcher next = dispatcher(pg.dataSource(), pg.dataSource(), transport,
                AmbiguityPolicy.resendWithKey(Duration.ofHours(24)));

        next.rescueOnce();
        makeDue(pg.dsl());
        next.runOnce();

        assertThat(transport.keys).hasSize(BATCH).doesNotHaveDuplicates();
        assertThat(pg.dsl().fetchCount(OUTBOX_MESSAGE, OUTBOX_MESSAGE.STATUS.eq("done"))).isEqualTo(BATCH);
        assertThat(pg.dsl().select(IDEMPOTENCY_RECORD.RESERVATIONS).from(IDEMPOTENCY_RECORD).fetch(r -> r.value1()))
                .hasSize(BATCH).containsOnly(2);
        // a third dispatcher finds nothing left to send
        AcceptingTransport third = new AcceptingTransport();
        makeDue(pg.dsl());
        dispatcher(pg.dataSource(), pg.dataSource(), third, AmbiguityPolicy.resendWithKey(Duration.ofHours(24))).runOnce();
        assertThat(third.keys).isEmpty();
    }

    /** The child: a dispatcher of one batch whose transport tells the parent it is about to send, then waits to be killed. */
    public static final class CrashingDispatcher {
        public static void main(String[] args) throws Exception {
            PGSimpleDataSource ds = new PGSimpleDataSource();
            ds.setURL(args[0]);
            CountDownLatch never = new CountDownLatch(1);
            AtomicInteger sends = new AtomicInteger();
            MailTransport frozen = new MailTransport() {
                @Override
                public String name() {
                    return "smtp";
                }

                @Override
                public SendResult send(Email email, String idempotencyKey) {
                    if (sends.getAndIncrement() == 0) {
                        System.out.println("SENDING " + idempotencyKey);
                        System.out.flush();
                    }
                    try {
                        never.await();
                    } catch (InterruptedException e) {
                        Thread.currentThread().interrupt();
                    }
                    throw new IllegalStateException("unreachable: killed before");
                }
            };
            EmailHandler handler = new EmailHandler(ds, new IdempotencyStore(), DispatchFixture.composer(), frozen,
                    AmbiguityPolicy.review(), "doomed-worker", null);
            DispatcherConfig config = DispatcherConfig.builder().workerId("doomed-worker").batchSize(BATCH)
                    .concurrency(BATCH).build();
            new Dispatcher(ds, config, Map.of(TOPIC, handler)).runOnce();
        }
    }
}
