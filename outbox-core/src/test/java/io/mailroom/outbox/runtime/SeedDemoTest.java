package io.mailroom.outbox.runtime;

import io.mailroom.outbox.DispatcherSessions;
import io.mailroom.outbox.Fixtures;
import io.mailroom.db.sql.SqlClock;
import io.mailroom.db.sql.SqlStates;
import io.mailroom.testing.PostgresExtension;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.postgresql.util.PSQLException;

import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * The seed's verified two-session demo, on the real outbox table with two real connections:
 * NOWAIT, SKIP LOCKED, the atomic claim, "empty is not empty", concurrent claimers and the fenced
 * completion; and why the claimer refuses REPEATABLE READ.
 */
class SeedDemoTest {

    @RegisterExtension
    static final PostgresExtension pg = new PostgresExtension();

    private final OutboxStore store = new OutboxStore(SqlClock.database(), Backoff.DEFAULT);
    private long job1;
    private long job2;

    @BeforeEach
    void fourPendingJobs() {
        pg.dsl().execute("TRUNCATE outbox_message, outbox_effect, outbox_effect_term, outbox_attempt");
        var jobs = Fixtures.enqueue(pg.dsl(), null, "job-" + System.nanoTime(), 4);
        // available_at equal for all: the claim orders by (available_at, id)
        pg.dsl().execute("UPDATE outbox_message SET available_at = now() - interval '1 minute'");
        job1 = jobs.get(0).id();
        job2 = jobs.get(1).id();
    }

    private static Connection begin(Connection c) throws SQLException {
        c.setAutoCommit(false);
        c.setTransactionIsolation(Connection.TRANSACTION_READ_COMMITTED);
        return c;
    }

    private void lockJob1(Connection a) throws SQLException {
        try (Statement st = a.createStatement()) {
            st.executeQuery("SELECT id FROM outbox_message WHERE id = " + job1 + " FOR UPDATE").close();
        }
    }

    @Test
    void nowaitOnALockedRowRaises55P03() throws Exception {
        try (Connection a = begin(pg.newConnection()); Connection b = begin(pg.newConnection())) {
            lockJob1(a);
            assertThatThrownBy(() -> {
                try (Statement st = b.createStatement()) {
                    st.executeQuery("SELECT id FROM outbox_message WHERE id = " + job1 + " FOR UPDATE NOWAIT");
                }
            }).isInstanceOf(PSQLException.class)
                    .satisfies(e -> assertThat(((SQLException) e).getSQLState()).isEqualTo(SqlStates.LOCK_NOT_AVAILABLE));
            b.rollback();
            a.rollback();
        }
    }

    @Test
    void skipLockedSkipsJob1AndReturnsJob2() throws Exception {
        try (Connection a = begin(pg.newConnection()); Connection b = begin(pg.newConnection())) {
            lockJob1(a);
            try (Statement st = b.createStatement();
                 ResultSet rs = st.executeQuery("SELECT id FROM outbox_message WHERE status = 'pending'"
                         + " AND available_at <= now() ORDER BY available_at, id LIMIT 1 FOR UPDATE SKIP LOCKED")) {
                assertThat(rs.next()).isTrue();
                assertThat(rs.getLong(1)).isEqualTo(job2);
            }
            b.rollback();
            a.rollback();
        }
    }

    @Test
    void atomicClaimReturnsJob2WithClaimVersion1() throws Exception {
        try (Connection a = begin(pg.newConnection())) {
            lockJob1(a);
            List<ClaimedMessage> claimed = claimOne("worker-b");
            assertThat(claimed).singleElement().satisfies(m -> {
                assertThat(m.id()).isEqualTo(job2);
                assertThat(m.claimVersion()).isEqualTo(1);
                assertThat(m.attempt()).isEqualTo(1);
            });
            a.rollback();
        }
        assertThat(Fixtures.status(pg.dsl(), job2)).isEqualTo("running");
        assertThat(Fixtures.status(pg.dsl(), job1)).isEqualTo("pending");
    }

    @Test
    void withEveryPendingRowLockedTheClaimIsEmptyWhileACountStillSeesThem() throws Exception {
        try (Connection a = begin(pg.newConnection())) {
            try (Statement st = a.createStatement()) {
                st.executeQuery("SELECT id FROM outbox_message WHERE status = 'pending' FOR UPDATE").close();
            }
            assertThat(claimOne("worker-b")).isEmpty();
            assertThat(Fixtures.countByStatus(pg.dsl(), "pending")).isEqualTo(4);
            a.rollback();
        }
        assertThat(claimOne("worker-b")).hasSize(1);
    }

    @Test
    void twoConcurrentClaimersGetDifferentIds() throws Exception {
        CyclicBarrier barrier = new CyclicBarrier(2);
        try (ExecutorService pool = Executors.newFixedThreadPool(2)) {
            List<Future<List<ClaimedMessage>>> results = new ArrayList<>();
            for (String worker : List.of("w1", "w2")) {
                results.add(pool.submit(() -> {
                    barrier.await();
                    return new DispatcherSessions(pg.dataSource(), null, null)
                            .inTransaction(tx -> store.claims().claim(tx, worker, 2, List.of(Fixtures.TOPIC), Duration.ofMinutes(1)));
                }));
            }
            List<Long> ids = new ArrayList<>();
            for (var f : results) {
                f.get().forEach(m -> ids.add(m.id()));
            }
            assertThat(ids).hasSize(4).doesNotHaveDuplicates();
        }
    }

    @Test
    void aCompletionWithAStaleClaimVersionUpdatesNothing() {
        ClaimedMessage first = claimOne("worker-a").getFirst();
        // the lease is taken over: version 2 now owns the row
        pg.dsl().execute("UPDATE outbox_message SET claim_version = claim_version + 1 WHERE id = " + first.id());
        var sessions = new DispatcherSessions(pg.dataSource(), null, null);
        List<ChangedRow> changed = sessions.inTransaction(tx -> store.completions().finish(tx, List.of(
                new CompletionStore.Finish(first, CompletionStore.Finish.Kind.DONE, null, null, null, first.claimedAt()))));
        assertThat(changed).isEmpty();
        assertThat(Fixtures.status(pg.dsl(), first.id())).isEqualTo("running");
    }

    @Test
    void repeatableReadClaimOfARowChangedAfterTheSnapshotRaises40001() throws Exception {
        // Why the claimer forbids REPEATABLE READ: instead of skipping a candidate that another
        // transaction changed after our snapshot, PostgreSQL aborts with a serialization failure.
        try (Connection b = pg.newConnection()) {
            b.setAutoCommit(false);
            b.setTransactionIsolation(Connection.TRANSACTION_REPEATABLE_READ);
            try (Statement st = b.createStatement()) {
                st.executeQuery("SELECT count(*) FROM outbox_message").close(); // takes the snapshot
            }
            pg.dsl().execute("UPDATE outbox_message SET available_at = available_at WHERE id = " + job1); // committed
            assertThatThrownBy(() -> {
                try (Statement st = b.createStatement()) {
                    st.executeQuery("SELECT id FROM outbox_message WHERE status = 'pending' ORDER BY available_at, id"
                            + " LIMIT 1 FOR NO KEY UPDATE SKIP LOCKED");
                }
            }).satisfies(e -> assertThat(SqlStates.sqlState(e)).isEqualTo(SqlStates.SERIALIZATION_FAILURE));
            b.rollback();
        }
    }

    @Test
    void theClaimerRunsAtReadCommittedWhateverTheSessionDefault() {
        pg.dsl().execute("ALTER DATABASE \"" + pg.database().name() + "\" SET default_transaction_isolation = 'repeatable read'");
        try {
            // New sessions now default to REPEATABLE READ; the dispatcher's sessions set their own level.
            var sessions = new DispatcherSessions(freshDataSource(), null, null);
            String level = sessions.inTransaction(tx -> tx.fetchSingle("SHOW transaction_isolation").get(0, String.class));
            assertThat(level).isEqualTo("read committed");
        } finally {
            pg.dsl().execute("ALTER DATABASE \"" + pg.database().name() + "\" RESET default_transaction_isolation");
        }
    }

    private javax.sql.DataSource freshDataSource() {
        var ds = new org.postgresql.ds.PGSimpleDataSource();
        ds.setURL(pg.database().jdbcUrlWithCredentials());
        return ds;
    }

    private List<ClaimedMessage> claimOne(String worker) {
        return new DispatcherSessions(pg.dataSource(), null, null)
                .inTransaction(tx -> store.claims().claim(tx, worker, 1, List.of(Fixtures.TOPIC), Duration.ofMinutes(1)));
    }

    @Test
    void theClaimIsOneStatementWithTheLockingClauseInsideTheCte() {
        String sql = store.claims().claimQuery(pg.dsl(), "w", null, 10, List.of(Fixtures.TOPIC), Duration.ofMinutes(1), true)
                .getSQL(org.jooq.conf.ParamType.INLINED);
        System.out.println("Claim SQL: " + sql);
        String lower = sql.toLowerCase(java.util.Locale.ROOT);
        int cte = lower.indexOf("with \"picked\"");
        int lock = lower.indexOf("for no key update skip locked");
        int update = lower.indexOf("update \"mailroom\".\"outbox_message\"");
        assertThat(cte).isGreaterThanOrEqualTo(0);
        assertThat(lock).as("locking clause inside the CTE, before the outer UPDATE").isBetween(cte, update);
        assertThat(lower).contains("order by \"c\".\"available_at\", \"c\".\"id\"").contains("returning");
    }
}
