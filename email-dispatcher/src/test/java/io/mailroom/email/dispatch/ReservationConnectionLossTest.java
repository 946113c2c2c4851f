package io.mailroom.email.dispatch;

import io.mailroom.email.resilience.TransportPolicyConfig;
import io.mailroom.idempotency.IdempotencyStore;
import io.mailroom.outbox.runtime.Dispatcher;
import io.mailroom.outbox.runtime.DispatcherConfig;
import io.mailroom.testing.PostgresExtension;
import io.mailroom.testing.WrappingDataSource;
import org.jooq.Record2;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.postgresql.util.PSQLException;
import org.postgresql.util.PSQLState;

import javax.sql.DataSource;
import java.lang.reflect.Proxy;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.Statement;
import java.util.Map;
import java.util.concurrent.atomic.AtomicBoolean;

import static io.mailroom.db.jooq.Tables.IDEMPOTENCY_RECORD;
import static io.mailroom.db.jooq.Tables.OUTBOX_MESSAGE;
import static io.mailroom.email.dispatch.DispatchFixture.TOPIC;
import static io.mailroom.email.dispatch.DispatchFixture.enqueueOrder;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * A batch reservation whose session is lost goes again on a fresh session, as the completer's
 * outcomes do, instead of counting the attempt as failed and backing the email off; and a COMMIT
 * whose answer was lost is recognised as committed, so the email is sent (once) rather than handed
 * to the ambiguity policy as an unknown outcome of a send that never happened.
 */
class ReservationConnectionLossTest {

    @RegisterExtension
    static final PostgresExtension pg = new PostgresExtension();

    @BeforeEach
    void clean() {
        pg.dsl().execute("TRUNCATE outbox_message, outbox_effect, outbox_effect_term, outbox_attempt, idempotency_record, email_rendering");
    }

    /** Breaks the first session it hands out that reserves a key: before the statement, or after its COMMIT. */
    static final class LosesTheFirstReservation extends WrappingDataSource {
        private final boolean afterCommit;
        private final AtomicBoolean armed = new AtomicBoolean(true);
        private final AtomicBoolean reserving = new AtomicBoolean();

        LosesTheFirstReservation(DataSource delegate, boolean afterCommit) {
            super(delegate);
            this.afterCommit = afterCommit;
        }

        @Override
        protected Connection wrap(Connection real) {
            return (Connection) Proxy.newProxyInstance(getClass().getClassLoader(), new Class<?>[]{Connection.class},
                    (proxy, method, args) -> {
                        boolean reserve = method.getName().startsWith("prepare") && args != null
                                && args[0] instanceof String sql && sql.contains("idempotency_record") && sql.contains("INSERT");
                        if (reserve && !afterCommit && armed.compareAndSet(true, false)) {
                            terminate(real); // the server ends the backend: the statement meets a dead session
                        }
                        if (reserve && afterCommit && armed.get()) {
                            reserving.set(true);
                        }
                        if (method.getName().equals("commit") && afterCommit && reserving.get() && armed.compareAndSet(true, false)) {
                            invoke(real, method, args); // committed on the server...
                            real.close();
                            throw new PSQLException("An I/O error occurred while sending to the backend.",
                                    PSQLState.CONNECTION_FAILURE); // ...and the answer lost on the way back
                        }
                        return invoke(real, method, args);
                    });
        }

        private static void terminate(Connection victim) throws Exception {
            int pid;
            try (Statement st = victim.createStatement(); ResultSet rs = st.executeQuery("SELECT pg_backend_pid()")) {
                rs.next();
                pid = rs.getInt(1);
            }
            pg.dsl().fetch("SELECT pg_terminate_backend(?)", pid);
        }
    }

    private static int sendOnce(DataSource handlerDb, BatchReservationTest.AcceptingTransport transport) {
        EmailHandler handler = new EmailHandler(handlerDb, new IdempotencyStore(), DispatchFixture.composer(),
                DispatchFixture.resilient(transport, TransportPolicyConfig.defaults()), AmbiguityPolicy.review(), "loss-worker", null);
        DispatcherConfig config = DispatcherConfig.builder().workerId("loss-worker").batchSize(10).concurrency(10).build();
        return new Dispatcher(pg.dataSource(), config, Map.of(TOPIC, handler)).runOnce();
    }

    @Test
    void aSessionLostDuringTheReservationIsReplacedAndTheEmailSentOnceWithoutABackoff() {
        enqueueOrder(pg.dsl(), 1);
        var transport = new BatchReservationTest.AcceptingTransport();

        assertThat(sendOnce(new LosesTheFirstReservation(pg.dataSource(), false), transport)).isEqualTo(1);

        assertSentOnceInOneAttempt(transport);
    }

    @Test
    void aCommitWhoseAnswerWasLostIsRecognisedAsCommittedAndTheEmailSentOnce() {
        enqueueOrder(pg.dsl(), 1);
        var transport = new BatchReservationTest.AcceptingTransport();

        assertThat(sendOnce(new LosesTheFirstReservation(pg.dataSource(), true), transport)).isEqualTo(1);

        assertSentOnceInOneAttempt(transport);
    }

    private static void assertSentOnceInOneAttempt(BatchReservationTest.AcceptingTransport transport) {
        assertThat(transport.keys).containsExactly(DispatchFixture.key(1));
        Record2<String, Integer> message = pg.dsl().select(OUTBOX_MESSAGE.STATUS, OUTBOX_MESSAGE.ATTEMPTS).from(OUTBOX_MESSAGE).fetchSingle();
        assertThat(message.value1()).isEqualTo("done");
        assertThat(message.value2()).isEqualTo(1); // the claim's attempt, none lost to a backoff
        Record2<String, Integer> record = pg.dsl().select(IDEMPOTENCY_RECORD.STATE, IDEMPOTENCY_RECORD.RESERVATIONS)
                .from(IDEMPOTENCY_RECORD).fetchSingle();
        assertThat(record.value1()).isEqualTo("succeeded");
        assertThat(record.value2()).isEqualTo(1); // reserved once: the retry did not grant a second reservation
    }
}
