package io.mailroom.outbox.runtime;

import io.mailroom.outbox.DispatcherSessions;
import io.mailroom.outbox.Fixtures;
import io.mailroom.outbox.MutableClock;
import io.mailroom.db.sql.HotSql;
import io.mailroom.db.sql.SqlClock;
import io.mailroom.db.sql.SqlStates;
import io.mailroom.testing.PostgresExtension;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import javax.sql.DataSource;
import java.lang.reflect.Proxy;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.Statement;
import java.time.Duration;
import java.time.Instant;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** The hot path's statements: their placeholders, their arguments, and the plans PostgreSQL keeps for them. */
class HotSqlTest {

    @RegisterExtension
    static final PostgresExtension pg = new PostgresExtension();

    @BeforeEach
    void clean() {
        pg.dsl().execute("TRUNCATE outbox_message, outbox_effect, outbox_effect_term, outbox_attempt");
    }

    @Test
    void nowIsTheDatabaseClockOrABoundInstantOfTheInjectedOne() {
        assertThat(HotSql.of("SELECT {now}, ?::int", SqlClock.database()).sql()).isEqualTo("SELECT now(), ?::int");
        assertThat(HotSql.of("SELECT {now}, ?::int", SqlClock.of(MutableClock.at("2030-01-01T00:00:00Z"))).sql())
                .isEqualTo("SELECT cast(? as timestamptz), ?::int");
    }

    @Test
    void theInjectedInstantAndTheArgumentsAreBoundInTheirPlaces() {
        MutableClock clock = MutableClock.at("2030-01-01T00:00:00Z");
        HotSql sql = HotSql.of("SELECT ?::int, {now}, ?::text, {now}", SqlClock.of(clock));
        List<String> row = new DispatcherSessions(pg.dataSource(), null, null).inTransaction(tx ->
                sql.query(tx, rs -> rs.getInt(1) + "|" + HotSql.instant(rs, 2) + "|" + rs.getString(3) + "|"
                        + HotSql.instant(rs, 4), 7, "x"));
        assertThat(row).containsExactly("7|2030-01-01T00:00:00Z|x|2030-01-01T00:00:00Z");
    }

    @Test
    void aWrongNumberOfArgumentsIsRefusedNamingBothCounts() {
        HotSql sql = HotSql.of("SELECT ?::int, ?::int", SqlClock.database());
        assertThatThrownBy(() -> new DispatcherSessions(pg.dataSource(), null, null)
                .inTransaction(tx -> sql.execute(tx, 1)))
                .hasMessage("statement takes 2 arguments, got 1");
        assertThatThrownBy(() -> new DispatcherSessions(pg.dataSource(), null, null)
                .inTransaction(tx -> sql.execute(tx, 1, 2, 3)))
                .hasMessage("statement takes 2 arguments, got 3");
    }

    @Test
    void aFailingStatementKeepsItsSqlStateForClassification() {
        HotSql sql = HotSql.of("SELECT 1 / ?::int", SqlClock.database());
        assertThatThrownBy(() -> new DispatcherSessions(pg.dataSource(), null, null).inTransaction(tx -> sql.execute(tx, 0)))
                .satisfies(e -> assertThat(SqlStates.sqlState(e)).isEqualTo("22012"));
    }

    /**
     * With the statuses and the limit in the text, PostgreSQL can prove the partial claim index's
     * predicate for a generic plan and keeps one after its first five custom plans; with them bound
     * it planned every execution afresh. Checked on one session, as the driver prepares it.
     */
    @Test
    void theClaimGetsACachedGenericPlan() throws Exception {
        OutboxStore store = new OutboxStore(SqlClock.database(), Backoff.DEFAULT);
        for (int i = 0; i < 40; i++) {
            Fixtures.enqueueOne(pg.dsl(), null, Fixtures.message("plan-" + i));
        }
        try (Connection c = pg.dataSource().getConnection()) {
            DispatcherSessions sessions = new DispatcherSessions(oneSession(c), null, null);
            for (int i = 0; i < 12; i++) {
                List<ClaimedMessage> claimed = sessions.inTransaction(tx -> store.claims().claim(tx, "w", 3,
                        List.of(Fixtures.TOPIC), Duration.ofMinutes(1)));
                assertThat(claimed).hasSize(3);
            }
            try (Statement st = c.createStatement();
                 ResultSet rs = st.executeQuery("SELECT generic_plans, custom_plans FROM pg_prepared_statements"
                         + " WHERE statement LIKE '%for no key update skip locked%'")) {
                assertThat(rs.next()).as("the claim is a server-side prepared statement").isTrue();
                assertThat(rs.getLong(1)).as("generic plans (custom: %d)", rs.getLong(2)).isPositive();
            }
        }
    }

    /** A data source that hands out {@code c} every time and leaves it open. */
    private static DataSource oneSession(Connection c) {
        Connection unclosable = (Connection) Proxy.newProxyInstance(Connection.class.getClassLoader(),
                new Class<?>[]{Connection.class}, (proxy, method, args) ->
                        method.getName().equals("close") ? null : method.invoke(c, args));
        return (DataSource) Proxy.newProxyInstance(DataSource.class.getClassLoader(), new Class<?>[]{DataSource.class},
                (proxy, method, args) -> {
                    if (method.getName().equals("getConnection")) {
                        return unclosable;
                    }
                    throw new UnsupportedOperationException(method.getName());
                });
    }
}
