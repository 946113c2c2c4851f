package io.mailroom.outbox.runtime;

import io.mailroom.outbox.Fixtures;
import io.mailroom.outbox.MutableClock;
import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import io.mailroom.db.sql.SqlStates;
import io.mailroom.testing.PostgresExtension;
import io.mailroom.testing.WrappingDataSource;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.postgresql.PGConnection;

import javax.sql.DataSource;
import java.lang.reflect.InvocationHandler;
import java.lang.reflect.Proxy;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * The database failing under a running dispatcher: its session killed ({@code pg_terminate_backend}
 * from a second connection) during the claim, during the send and right before the completion
 * statement, and the claim stuck behind an {@code ACCESS EXCLUSIVE} lock until its statement
 * timeout. In every case the dispatcher carries on by itself, each message is handled once, and no
 * attempt is counted for work that never happened.
 */
class DatabaseFaultsTest {

    @RegisterExtension
    static final PostgresExtension pg = new PostgresExtension();

    /** The dispatcher's sessions carry this application_name, so the test kills only them. */
    private static final String APP = "faults-dispatcher";

    private HikariDataSource dispatcherPool;
    private final List<Throwable> errors = new CopyOnWriteArrayList<>();
    private final Map<String, AtomicInteger> handled = new ConcurrentHashMap<>();
    private final DispatcherListener listener = new DispatcherListener() {
        @Override
        public void error(String where, Throwable error) {
            errors.add(new RuntimeException(where + " " + SqlStates.sqlState(error), error));
        }
    };

    @BeforeEach
    void setUp() {
        pg.dsl().execute("TRUNCATE outbox_message, outbox_effect, outbox_effect_term, outbox_attempt");
        HikariConfig c = new HikariConfig();
        String url = pg.jdbcUrl();
        c.setJdbcUrl(url + (url.contains("?") ? "&" : "?") + "ApplicationName=" + APP);
        if (pg.database().user() != null) {
            c.setUsername(pg.database().user());
        }
        if (pg.database().password() != null) {
            c.setPassword(pg.database().password());
        }
        c.setMaximumPoolSize(6);
        c.setConnectionTimeout(5_000);
        dispatcherPool = new HikariDataSource(c);
    }

    @AfterEach
    void tearDown() {
        dispatcherPool.close();
    }

    private DispatcherConfig.Builder config() {
        return DispatcherConfig.builder().workerId("faults").batchSize(10).concurrency(4)
                .pollInterval(Duration.ofMillis(100)).lease(Duration.ofSeconds(60))
                .backoff(new Backoff(Duration.ofMillis(100), Duration.ofSeconds(1), 2, 0));
    }

    private MessageHandler counting(MessageHandler then) {
        return (m, ctx) -> {
            handled.computeIfAbsent(m.idempotencyKey(), k -> new AtomicInteger()).incrementAndGet();
            return then.handle(m, ctx);
        };
    }

    private void assertEveryMessageDoneOnceWithOneAttempt(int n) {
        assertThat(Fixtures.countByStatus(pg.dsl(), "done")).isEqualTo(n);
        assertThat(handled).hasSize(n);
        assertThat(handled.values()).allSatisfy(c -> assertThat(c.get()).as("handled once").isEqualTo(1));
        assertThat(pg.dsl().fetchCount(pg.dsl().selectFrom("outbox_message").where("attempts <> 1")))
                .as("no attempt counted for a claim or completion that failed").isZero();
        assertThat(pg.dsl().fetchCount(pg.dsl().selectFrom("outbox_attempt").where("outcome = 'done'"))).isEqualTo(n);
    }

    // ------------------------------------------------------------------------------- during the claim

    @Test
    void aSessionKilledDuringTheClaimRollsTheClaimBackAndTheDispatcherClaimsAgain() throws Exception {
        Fixtures.enqueue(pg.dsl(), null, "claim", 20);
        try (Connection locker = pg.newConnection()) {
            // The claim blocks behind the lock, so the test can kill it mid-statement.
            locker.setAutoCommit(false);
            try (Statement st = locker.createStatement()) {
                st.execute("LOCK TABLE outbox_message IN ACCESS EXCLUSIVE MODE");
            }
            try (Dispatcher d = new Dispatcher(dispatcherPool, config().build(),
                    Map.of(Fixtures.TOPIC, counting((m, ctx) -> Outcome.done())), ClaimGate.OPEN, listener)) {
                d.start();
                int claimPid = await().atMost(Duration.ofSeconds(20)).until(() -> blockedClaimPid(locker), pid -> pid > 0);
                terminate(locker, claimPid);
                await().atMost(Duration.ofSeconds(20)).until(() -> errors.stream().anyMatch(e ->
                        e.getMessage().startsWith("claim ") && SqlStates.isConnectionLoss(e.getCause())));
                assertThat(handled).as("nothing ran while the table was locked").isEmpty();
                locker.rollback();

                await().atMost(Duration.ofSeconds(30)).until(() -> Fixtures.countByStatus(pg.dsl(), "done") == 20);
            }
        }
        assertEveryMessageDoneOnceWithOneAttempt(20);
    }

    // -------------------------------------------------------------------------------- during the send

    @Test
    void everySessionKilledWhileTheHandlerSendsLosesNoOutcome() {
        Fixtures.enqueue(pg.dsl(), null, "send", 30);
        AtomicBoolean killed = new AtomicBoolean();
        MessageHandler killingOnce = (m, ctx) -> {
            if (m.idempotencyKey().equals("send-7") && killed.compareAndSet(false, true)) {
                // The provider is being called right now; meanwhile the database drops every session
                // of the dispatcher (pool, LISTEN).
                try (Connection admin = pg.newConnection()) {
                    assertThat(terminateAll(admin)).isPositive();
                }
            }
            return Outcome.done();
        };
        try (Dispatcher d = new Dispatcher(dispatcherPool, config().build(), Map.of(Fixtures.TOPIC, counting(killingOnce)),
                ClaimGate.OPEN, listener)) {
            d.start();
            await().atMost(Duration.ofSeconds(30)).until(() -> Fixtures.countByStatus(pg.dsl(), "done") == 30);
        }
        assertThat(killed).isTrue();
        assertEveryMessageDoneOnceWithOneAttempt(30);
    }

    // -------------------------------------------------------------------------- during the completion

    @Test
    void sessionsKilledRightBeforeTheCompletionStatementAreRetriedOnFreshConnections() {
        Fixtures.enqueue(pg.dsl(), null, "complete", 1);
        // Three completions in a row find their session gone, as after a pg_terminate_backend round
        // that took every pooled connection: the outcome must still be written, not left to the lease.
        KillingDataSource killing = new KillingDataSource(dispatcherPool, "UPDATE mailroom.outbox_message AS m SET\n  status = CASE", 3);
        Dispatcher d = new Dispatcher(killing, config().build(), Map.of(Fixtures.TOPIC, counting((m, ctx) -> Outcome.done())),
                ClaimGate.OPEN, listener);

        assertThat(d.runOnce()).isEqualTo(1);

        assertThat(killing.kills.get()).isEqualTo(3);
        assertThat(Fixtures.countByStatus(pg.dsl(), "running")).as("outcome written, nothing waits for the lease").isZero();
        assertEveryMessageDoneOnceWithOneAttempt(1);
        assertThat(errors).extracting(Throwable::getMessage).allMatch(m -> m.startsWith("completion "));
    }

    @Test
    void anOutcomeTheCompleterGaveUpOnIsLeftToTheLeaseNotReturnedAsNeverHandled() {
        MutableClock clock = MutableClock.at("2030-01-01T00:00:00Z");
        var msg = Fixtures.enqueueOne(pg.dsl(), clock, Fixtures.message("sent-but-unrecorded"));
        Duration lease = Duration.ofSeconds(2); // the completer retries for half of it, then gives up
        // Every completion statement finds its session gone: the send happened, its outcome cannot be written.
        KillingDataSource killing = new KillingDataSource(dispatcherPool, "UPDATE mailroom.outbox_message AS m SET\n  status = CASE",
                Integer.MAX_VALUE);
        List<Integer> attemptsSeen = new CopyOnWriteArrayList<>();
        Dispatcher d = new Dispatcher(killing, config().lease(lease).clock(clock).build(),
                Map.of(Fixtures.TOPIC, counting((m, ctx) -> {
                    attemptsSeen.add(m.attempt());
                    return Outcome.done();
                })), ClaimGate.OPEN, listener);

        assertThat(d.runOnce()).isEqualTo(1);
        assertThat(killing.kills.get()).as("the completer retried before giving up").isGreaterThan(1);
        assertThat(d.inFlightCount()).isZero();
        killing.left.set(0);

        clock.advance(ClaimLedger.ORPHAN_GRACE.plusSeconds(1));
        assertThat(d.releaseOrphanedClaims()).as("a sent message is never handed back as never handled").isZero();
        var row = Fixtures.row(pg.dsl(), msg.id());
        assertThat(row.get("status", String.class)).isEqualTo("running");
        assertThat(row.get("attempts", Integer.class)).as("the attempt that sent stays counted").isEqualTo(1);
        assertThat(pg.dsl().fetchCount(pg.dsl().selectFrom("outbox_attempt").where("outcome = 'released'"))).isZero();

        clock.advance(lease);
        assertThat(d.rescueOnce()).as("the lease returns it").isEqualTo(1);
        assertThat(Fixtures.row(pg.dsl(), msg.id()).get("attempts", Integer.class)).isEqualTo(1);
        clock.advance(Duration.ofSeconds(1)); // past the rescue's backoff
        assertThat(d.runOnce()).isEqualTo(1);
        assertThat(attemptsSeen).as("the next attempt knows an earlier one ran").containsExactly(1, 2);
        assertThat(Fixtures.status(pg.dsl(), msg.id())).isEqualTo("done");
        assertThat(pg.dsl().fetch("SELECT outcome FROM outbox_attempt ORDER BY attempt, finished_at").getValues(0, String.class))
                .containsExactly("lease_expired", "done");
    }

    // --------------------------------------------------------------------------- statement timeout

    @Test
    void aClaimStuckBehindAnExclusiveLockFailsWith57014AndTheDispatcherClaimsAgainOnceItIsReleased() throws Exception {
        Fixtures.enqueue(pg.dsl(), null, "timeout", 10);
        Duration statementTimeout = Duration.ofSeconds(1);
        try (Connection locker = pg.newConnection()) {
            locker.setAutoCommit(false);
            try (Statement st = locker.createStatement()) {
                st.execute("LOCK TABLE outbox_message IN ACCESS EXCLUSIVE MODE");
            }
            long locked = System.nanoTime();
            try (Dispatcher d = new Dispatcher(dispatcherPool, config().statementTimeout(statementTimeout).build(),
                    Map.of(Fixtures.TOPIC, counting((m, ctx) -> Outcome.done())), ClaimGate.OPEN, listener)) {
                d.start();
                // Two timeouts in a row: the producer logged the first and went on claiming.
                await().atMost(Duration.ofSeconds(20)).until(() -> errors.stream()
                        .filter(e -> e.getMessage().equals("claim " + SqlStates.QUERY_CANCELED)).count() >= 2);
                assertThat(Duration.ofNanos(System.nanoTime() - locked)).isGreaterThanOrEqualTo(statementTimeout);
                assertThat(handled).isEmpty();
                assertThat(d.isRunning()).isTrue();
                locker.rollback();

                await().atMost(Duration.ofSeconds(20)).until(() -> Fixtures.countByStatus(pg.dsl(), "done") == 10);
            }
        }
        assertEveryMessageDoneOnceWithOneAttempt(10);
    }

    // ------------------------------------------------------------------------------------ helpers

    /** Pid of the dispatcher session whose claim waits for a lock, or 0. */
    private static int blockedClaimPid(Connection admin) throws SQLException {
        try (PreparedStatement ps = admin.prepareStatement("""
                SELECT pid FROM pg_stat_activity
                WHERE datname = current_database() AND application_name = ? AND wait_event_type = 'Lock'
                  AND query LIKE '%"picked"%'""")) {
            ps.setString(1, APP);
            try (ResultSet rs = ps.executeQuery()) {
                return rs.next() ? rs.getInt(1) : 0;
            }
        }
    }

    /** Terminates every session of the dispatcher; returns how many. */
    private static int terminateAll(Connection admin) throws SQLException {
        try (PreparedStatement ps = admin.prepareStatement("""
                WITH victims AS MATERIALIZED (
                  SELECT pid FROM pg_stat_activity WHERE datname = current_database() AND application_name = ?)
                SELECT count(*) FROM victims WHERE pg_terminate_backend(pid, 5000)""")) {
            ps.setString(1, APP);
            try (ResultSet rs = ps.executeQuery()) {
                rs.next();
                return rs.getInt(1);
            }
        }
    }

    /** Terminates one backend and waits (up to 5 s) until it is gone. */
    private static void terminate(Connection admin, int pid) throws SQLException {
        try (PreparedStatement ps = admin.prepareStatement("SELECT pg_terminate_backend(?, 5000)")) {
            ps.setInt(1, pid);
            try (ResultSet rs = ps.executeQuery()) {
                rs.next();
                assertThat(rs.getBoolean(1)).as("backend %d terminated", pid).isTrue();
            }
        }
    }

    /**
     * Hands out the pool's connections, but kills a connection's server session (from a second
     * connection) just before it prepares a statement containing {@code marker}, {@code times} times.
     */
    private static final class KillingDataSource extends WrappingDataSource {
        private final String marker;
        private final AtomicInteger left;
        final AtomicInteger kills = new AtomicInteger();

        KillingDataSource(DataSource delegate, String marker, int times) {
            super(delegate);
            this.marker = marker;
            this.left = new AtomicInteger(times);
        }

        @Override
        protected Connection wrap(Connection real) throws SQLException {
            int pid = real.unwrap(PGConnection.class).getBackendPID();
            InvocationHandler h = (proxy, method, args) -> {
                if (method.getName().startsWith("prepare") && args != null && args[0] instanceof String sql
                        && sql.contains(marker) && left.getAndDecrement() > 0) {
                    try (Connection admin = pg.newConnection()) {
                        terminate(admin, pid);
                    }
                    kills.incrementAndGet();
                }
                return invoke(real, method, args);
            };
            return (Connection) Proxy.newProxyInstance(Connection.class.getClassLoader(), new Class<?>[]{Connection.class}, h);
        }
    }
}
