package io.mailroom.outbox.runtime;

import io.mailroom.outbox.DispatcherSessions;
import io.mailroom.outbox.Fixtures;
import io.mailroom.outbox.NewMessage;
import io.mailroom.outbox.OutboxEnqueuer;
import io.mailroom.outbox.SessionSettings;
import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import io.mailroom.testing.PgBouncer;
import io.mailroom.testing.PostgresExtension;
import org.jooq.DSLContext;
import org.jooq.SQLDialect;
import org.jooq.impl.DSL;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import java.net.URI;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assumptions.assumeThat;
import static org.awaitility.Awaitility.await;

/**
 * The dispatcher and the enqueuer through PgBouncer 1.18 in transaction pooling mode (a process of
 * its own, started here): pgjdbc's named server-side statements break there, {@code
 * prepareThreshold=0} does not; the session settings hold per transaction and do not leak into the
 * server sessions other clients get; and two dispatchers deliver every message enqueued through
 * the pooler exactly once. Skipped, saying why, when pgbouncer is not installed.
 */
class PgBouncerTransactionPoolingTest {

    @RegisterExtension
    static final PostgresExtension pg = new PostgresExtension();

    static PgBouncer bouncer;
    static HikariDataSource pooled;

    @BeforeAll
    static void startPgBouncer() throws Exception {
        assumeThat(PgBouncer.binary()).as("pgbouncer is not installed (apt-get install pgbouncer): PgBouncer tests skipped").isPresent();
        URI uri = URI.create(pg.jdbcUrl().substring("jdbc:".length()));
        String user = String.valueOf(pg.dsl().fetchValue("SELECT current_user"));
        bouncer = PgBouncer.start(uri.getHost(), uri.getPort(), pg.database().name(), user, 6);
        HikariConfig hc = new HikariConfig();
        hc.setJdbcUrl(bouncer.jdbcUrl());
        hc.setMaximumPoolSize(16);
        pooled = new HikariDataSource(hc);
    }

    @AfterAll
    static void stopPgBouncer() {
        if (pooled != null) {
            pooled.close();
        }
        if (bouncer != null) {
            bouncer.close();
        }
    }

    @Test
    void pgjdbcNamedStatementsBreakThroughTheTransactionPoolerAndPrepareThresholdZeroDoesNot() throws Exception {
        // c1 prepares a named statement on its server session (5 uses, pgjdbc's default threshold);
        // c2 then holds that server session in a transaction, and c1's next use lands on another one
        assertThat(reuseAfterServerSessionMoves(bouncer.jdbcUrlDefaults()))
                .as("pgjdbc defaults through pgbouncer 1.18, log: %s", bouncer.log())
                .isIn("26000", "42P05"); // prepared statement "S_1" does not exist / already exists
        assertThat(reuseAfterServerSessionMoves(bouncer.jdbcUrl())).isNull();
    }

    /**
     * The SQLSTATE of the first statement that failed, or null when all succeeded. Which of the two
     * errors comes depends on which server sessions already saw a "S_1": 26000 (does not exist)
     * where c1 lands on a session that never had it, 42P05 (already exists) where pgjdbc prepares
     * it again on one that had it from another client.
     */
    private static String reuseAfterServerSessionMoves(String url) {
        try (Connection c1 = DriverManager.getConnection(url); Connection c2 = DriverManager.getConnection(url);
             PreparedStatement ps = c1.prepareStatement("SELECT ?::int + 1")) {
            for (int round = 0; round < 3; round++) {
                for (int i = 0; i < 6; i++) {
                    ps.setInt(1, i);
                    try (ResultSet rs = ps.executeQuery()) {
                        rs.next();
                        assertThat(rs.getInt(1)).isEqualTo(i + 1);
                    }
                }
                c2.setAutoCommit(false);
                try (Statement st = c2.createStatement()) {
                    st.execute("SELECT 1");
                    ps.setInt(1, 7);
                    try (ResultSet rs = ps.executeQuery()) {
                        rs.next();
                        assertThat(rs.getInt(1)).isEqualTo(8);
                    }
                } finally {
                    c2.rollback();
                    c2.setAutoCommit(true);
                }
            }
            return null;
        } catch (SQLException e) {
            return e.getSQLState();
        }
    }

    @Test
    void perTransactionSettingsHoldInTheTransactionAndDoNotLeakIntoTheServerSession() throws Exception {
        DispatcherSessions sessions = new DispatcherSessions(pooled, Duration.ofMillis(1234), Duration.ofMillis(5678),
                SessionSettings.TRANSACTION);
        String inside = sessions.inTransaction(tx -> String.valueOf(tx.fetchValue(
                "SELECT current_setting('statement_timeout') || ' ' || current_setting('idle_in_transaction_session_timeout')"
                        + " || ' ' || current_setting('transaction_isolation')")));
        assertThat(inside).isEqualTo("1234ms 5678ms read committed");
        // every server session behind the pooler still has the server's defaults afterwards
        List<Connection> held = new ArrayList<>();
        try {
            for (int i = 0; i < 6; i++) {
                Connection c = pooled.getConnection();
                held.add(c);
                c.setAutoCommit(false); // holds its server session until rollback
                try (Statement st = c.createStatement(); ResultSet rs = st.executeQuery(
                        "SELECT current_setting('statement_timeout'), current_setting('idle_in_transaction_session_timeout')")) {
                    rs.next();
                    assertThat(rs.getString(1) + " " + rs.getString(2)).isEqualTo("0 0");
                }
            }
        } finally {
            for (Connection c : held) {
                c.rollback();
                c.close();
            }
        }
        // and the timeout does fire inside the transaction (SQLSTATE 57014, query_canceled)
        assertThatThrownBy(() -> sessions.inTransaction(tx -> tx.fetchValue("SELECT pg_sleep(3)")))
                .hasRootCauseInstanceOf(SQLException.class)
                .rootCause().extracting(e -> ((SQLException) e).getSQLState()).isEqualTo("57014");
    }

    @Test
    void twoDispatchersDeliverEveryMessageEnqueuedThroughThePoolerExactlyOnce() throws Exception {
        int n = 3000;
        Map<Long, AtomicInteger> deliveries = new ConcurrentHashMap<>();
        List<Dispatcher> dispatchers = new ArrayList<>();
        for (int i = 1; i <= 2; i++) {
            DispatcherConfig config = DispatcherConfig.builder()
                    .workerId("bounced-" + i).batchSize(50).concurrency(16)
                    .pollInterval(Duration.ofMillis(100)).lease(Duration.ofSeconds(60))
                    .sessionSettings(SessionSettings.TRANSACTION).build();
            // LISTEN on, no direct session given: the dispatcher must poll, not LISTEN through the pooler
            dispatchers.add(new Dispatcher(pooled, config, Map.of(Fixtures.TOPIC, (m, ctx) -> {
                deliveries.computeIfAbsent(m.id(), id -> new AtomicInteger()).incrementAndGet();
                return Outcome.done();
            })));
        }
        dispatchers.forEach(Dispatcher::start);
        List<Long> ids = new ArrayList<>();
        try {
            DSLContext bounced = DSL.using(pooled, SQLDialect.POSTGRES);
            OutboxEnqueuer enqueuer = new OutboxEnqueuer(null, true);
            for (int from = 1; from <= n; from += 100) {
                List<NewMessage> chunk = new ArrayList<>();
                for (int i = from; i < from + 100; i++) {
                    chunk.add(Fixtures.message("b-" + i));
                }
                bounced.transactionResult(cfg -> enqueuer.enqueueAll(cfg.dsl(), chunk)).forEach(e -> ids.add(e.id()));
            }
            await().atMost(Duration.ofMinutes(2)).pollInterval(Duration.ofMillis(200))
                    .until(() -> Fixtures.countByStatus(pg.dsl(), "done") == n);
        } finally {
            dispatchers.forEach(Dispatcher::stop);
        }
        assertThat(ids).hasSize(n).doesNotHaveDuplicates();
        assertThat(deliveries.keySet()).containsExactlyInAnyOrderElementsOf(ids);
        assertThat(deliveries.values()).allSatisfy(c -> assertThat(c.get()).isEqualTo(1));
        assertThat(Fixtures.countByStatus(pg.dsl(), "running")).isZero();
        assertThat(Fixtures.countByStatus(pg.dsl(), "pending")).isZero();
        // the pooler, not the dispatchers, decided how many server sessions there were
        assertThat(((Number) pg.dsl().fetchValue("SELECT count(*) FROM pg_stat_activity WHERE datname = current_database()"
                + " AND backend_type = 'client backend' AND pid <> pg_backend_pid() AND application_name = ''")).intValue())
                .isLessThanOrEqualTo(6);
    }
}
