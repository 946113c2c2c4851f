package io.mailroom.outbox.runtime;

import io.mailroom.db.sql.SqlClock;
import io.mailroom.outbox.DispatcherSessions;
import io.mailroom.outbox.Fixtures;
import io.mailroom.outbox.MutableClock;
import io.mailroom.outbox.admin.MessageActions;
import io.mailroom.testing.PostgresExtension;
import org.jooq.conf.ParamType;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.Statement;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicLong;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * The claimers' low-water marks ({@link ClaimMarks}): a claim from the mark skips what lies below
 * it, the claim that reaches {@code markLookback} below it every {@code fullScanInterval} takes what
 * appeared there, and one such claim in {@value ClaimMarks#HEAD_EVERY} starts from the head. Single steps, an injected clock and an injected ticker for the interval: no sleeping.
 */
class ClaimMarkTest {

    @RegisterExtension
    static final PostgresExtension pg = new PostgresExtension();

    private static final Duration FULL_SCAN = Duration.ofSeconds(1);
    private static final Instant T0 = Instant.parse("2030-01-01T00:00:00Z");

    private final MutableClock clock = MutableClock.at("2030-01-01T00:00:00Z");
    private final AtomicLong ticker = new AtomicLong();
    private final ClaimMarks marks = new ClaimMarks(FULL_SCAN, ticker::get);
    private final List<Long> handled = new ArrayList<>();

    @BeforeEach
    void clean() {
        pg.dsl().execute("TRUNCATE outbox_message, outbox_effect, outbox_effect_term, outbox_attempt");
    }

    private Dispatcher dispatcher(int batch) {
        DispatcherConfig config = DispatcherConfig.builder().workerId("w1").batchSize(batch)
                .lease(Duration.ofSeconds(30)).clock(clock).build();
        return new Dispatcher(pg.dataSource(), config, Map.of(Fixtures.TOPIC, (m, ctx) -> {
            handled.add(m.id());
            return Outcome.done();
        }));
    }

    private long enqueue(String key, Instant availableAt) {
        return Fixtures.enqueueOne(pg.dsl(), clock, Fixtures.message(key).withAvailableAt(availableAt)).id();
    }

    private void fullScanDue() {
        ticker.addAndGet(FULL_SCAN.toNanos());
    }

    @Test
    void aRowCommittedBelowTheMarkIsClaimedByTheNextClaimFromTheHead() {
        clock.advance(Duration.ofSeconds(10));
        long a1 = enqueue("a1", T0.plusSeconds(1));
        long a2 = enqueue("a2", T0.plusSeconds(2));
        long a3 = enqueue("a3", T0.plusSeconds(3));
        Dispatcher d = dispatcher(1);

        assertThat(d.runOnce(marks)).isEqualTo(1); // no mark yet: from the head
        assertThat(d.runOnce(marks)).isEqualTo(1); // from a1
        // an enqueue whose transaction started before a2 was claimed commits now, below the mark (a2)
        long late = enqueue("late", T0.plusMillis(1500));
        assertThat(d.runOnce(marks)).isEqualTo(1); // from a2: a3
        assertThat(d.runOnce(marks)).as("below the mark, before the claim from the head").isZero();
        assertThat(Fixtures.status(pg.dsl(), late)).isEqualTo("pending");

        fullScanDue();
        assertThat(d.runOnce(marks)).isEqualTo(1);
        assertThat(handled).containsExactly(a1, a2, a3, late);
    }

    @Test
    void anOrderingKeysFollowerBelowTheMarkIsClaimedOnceItsPredecessorIsDone() {
        clock.advance(Duration.ofSeconds(10));
        var o1 = Fixtures.enqueueOne(pg.dsl(), clock, Fixtures.message("o1").withOrderingKey("K")
                .withAvailableAt(T0.plusSeconds(1)));
        var o2 = Fixtures.enqueueOne(pg.dsl(), clock, Fixtures.message("o2").withOrderingKey("K")
                .withAvailableAt(T0.plusSeconds(2)));
        long x1 = enqueue("x1", T0.plusSeconds(3));
        long x2 = enqueue("x2", T0.plusSeconds(4));
        // another dispatcher runs o1
        OutboxStore store = new OutboxStore(SqlClock.of(clock), Backoff.DEFAULT);
        DispatcherSessions sessions = new DispatcherSessions(pg.dataSource(), null, null);
        List<ClaimedMessage> other = sessions.inTransaction(tx -> store.claims().claim(tx, "other", 1,
                List.of(Fixtures.TOPIC), Duration.ofMinutes(1)));
        assertThat(other).extracting(ClaimedMessage::id).containsExactly(o1.id());
        Dispatcher d = dispatcher(1);

        assertThat(d.runOnce(marks)).isEqualTo(1); // from the head: o2 waits for o1, so x1
        sessions.inTransaction(tx -> store.completions().finish(tx, List.of(new CompletionStore.Finish(other.getFirst(),
                CompletionStore.Finish.Kind.DONE, null, Duration.ofSeconds(5), null, clock.instant()))));
        assertThat(d.runOnce(marks)).isEqualTo(1); // from x1: x2; o2 is free now but below the mark
        assertThat(d.runOnce(marks)).isZero();
        assertThat(Fixtures.status(pg.dsl(), o2.id())).isEqualTo("pending");

        fullScanDue();
        assertThat(d.runOnce(marks)).isEqualTo(1);
        assertThat(handled).containsExactly(x1, x2, o2.id());
    }

    @Test
    void aMessageRescheduledBelowTheMarkIsClaimedByTheNextClaimFromTheHead() {
        clock.advance(Duration.ofSeconds(10));
        long later = enqueue("later", T0.plus(Duration.ofHours(1)));
        long x1 = enqueue("x1", T0.plusSeconds(5));
        long x2 = enqueue("x2", T0.plusSeconds(6));
        Dispatcher d = dispatcher(1);
        assertThat(d.runOnce(marks)).isEqualTo(1); // x1, the mark
        // a person's reschedule in a transaction that started at T0 + 2 s and commits after that claim
        MutableClock persons = MutableClock.at("2030-01-01T00:00:02Z");
        assertThat(new MessageActions(pg.dataSource(), persons, 0, Duration.ZERO)
                .reschedule("later", T0, null)).isInstanceOf(MessageActions.Result.Applied.class);

        assertThat(d.runOnce(marks)).isEqualTo(1); // from x1: x2
        assertThat(d.runOnce(marks)).isZero();
        fullScanDue();
        assertThat(d.runOnce(marks)).isEqualTo(1);
        assertThat(handled).containsExactly(x1, x2, later);
    }

    @Test
    void aRetriedMessageComesBackAboveTheMarkAndNeedsNoClaimFromTheHead() {
        clock.advance(Duration.ofSeconds(10));
        long r = enqueue("r", T0.plusSeconds(1));
        long x1 = enqueue("x1", T0.plusSeconds(2));
        DispatcherConfig config = DispatcherConfig.builder().workerId("w1").batchSize(1)
                .lease(Duration.ofSeconds(30)).clock(clock).build();
        boolean[] failed = {false};
        Dispatcher d = new Dispatcher(pg.dataSource(), config, Map.of(Fixtures.TOPIC, (m, ctx) -> {
            handled.add(m.id());
            if (m.id() == r && !failed[0]) {
                failed[0] = true;
                return Outcome.retryLater("later", Duration.ofSeconds(5));
            }
            return Outcome.done();
        }));
        assertThat(d.runOnce(marks)).isEqualTo(1); // r fails: back at now + 5 s
        assertThat(d.runOnce(marks)).isEqualTo(1); // x1
        clock.advance(Duration.ofMinutes(1)); // past its backoff, whatever the jitter
        assertThat(d.runOnce(marks)).as("from the mark, no full scan due").isEqualTo(1);
        assertThat(handled).containsExactly(r, x1, r);
    }

    @Test
    void withAZeroIntervalEveryClaimStartsFromTheHead() {
        clock.advance(Duration.ofSeconds(10));
        enqueue("a1", T0.plusSeconds(1));
        enqueue("a2", T0.plusSeconds(2));
        Dispatcher d = dispatcher(1);
        ClaimMarks off = new ClaimMarks(Duration.ZERO, ticker::get);
        assertThat(d.runOnce(off)).isEqualTo(1);
        long late = enqueue("late", T0);
        assertThat(d.runOnce(off)).isEqualTo(1);
        assertThat(handled).endsWith(late);
    }

    @Test
    void theMarkIsPerClaimerAndPerTopicSet() {
        List<String> ab = List.of("a", "b");
        List<String> a = List.of("a");
        ClaimMark low = new ClaimMark(T0, 1);
        ClaimMark high = new ClaimMark(T0.plusSeconds(1), 9);
        assertThat(marks.next(ab)).as("no mark yet").isNull();
        marks.claimed(ab, null, high);
        marks.claimed(a, null, low);
        assertThat(marks.next(ab)).isEqualTo(high);
        assertThat(marks.next(a)).isEqualTo(low);
        assertThat(new ClaimMarks(FULL_SCAN, ticker::get).next(ab)).as("another claimer's").isNull();

        marks.claimed(ab, high, null);
        assertThat(marks.next(ab)).as("an empty claim keeps the mark").isEqualTo(high);
        ticker.addAndGet(FULL_SCAN.toNanos() - 1);
        assertThat(marks.next(ab)).isEqualTo(high);
        ticker.incrementAndGet();
        ClaimMark reach = marks.next(ab);
        assertThat(reach).as("a claim that reaches below the mark is due").isEqualTo(lookbackBelow(high));
        marks.claimed(ab, reach, low);
        assertThat(marks.next(ab)).as("it moves the mark back").isEqualTo(low);
    }

    @Test
    void aClaimReachesLookbackBelowTheMarkEachIntervalAndOneInThirtyStartsFromTheHead() {
        List<String> a = List.of("a");
        ClaimMark mark = new ClaimMark(T0.plusSeconds(60), 50);
        assertThat(marks.next(a)).isNull();
        marks.claimed(a, null, mark);
        for (int i = 1; i < ClaimMarks.HEAD_EVERY; i++) {
            assertThat(marks.next(a)).as("within the interval").isEqualTo(mark);
            marks.claimed(a, mark, mark);
            fullScanDue();
            ClaimMark reach = marks.next(a);
            assertThat(reach).as("interval %d", i).isEqualTo(lookbackBelow(mark));
            marks.claimed(a, reach, null); // found nothing below: the mark stays
            assertThat(marks.next(a)).as("it reached below: the mark again").isEqualTo(mark);
        }
        fullScanDue();
        assertThat(marks.next(a)).as("the thirtieth interval: from the head").isNull();
        marks.claimed(a, null, mark);
        assertThat(marks.next(a)).isEqualTo(mark);
        fullScanDue();
        assertThat(marks.next(a)).as("the count starts again").isEqualTo(lookbackBelow(mark));
    }

    @Test
    void aRowLateByMoreThanTheLookbackIsClaimedByTheClaimFromTheHead() {
        clock.advance(Duration.ofMinutes(2));
        long x1 = enqueue("x1", T0.plusSeconds(60));
        long x2 = enqueue("x2", T0.plusSeconds(61));
        Dispatcher d = dispatcher(1);
        assertThat(d.runOnce(marks)).isEqualTo(1); // from the head: x1, the mark
        // an enqueue whose transaction began 50 s before the mark's row commits now
        long late = enqueue("late", T0.plusSeconds(10));
        assertThat(d.runOnce(marks)).isEqualTo(1); // from x1: x2
        fullScanDue();
        assertThat(d.runOnce(marks)).as("5 s below the mark does not reach 50 s below it").isZero();
        for (int i = 1; i < ClaimMarks.HEAD_EVERY - 1; i++) {
            fullScanDue();
            assertThat(d.runOnce(marks)).isZero();
        }
        assertThat(Fixtures.status(pg.dsl(), late)).isEqualTo("pending");
        fullScanDue();
        assertThat(d.runOnce(marks)).as("the claim from the head").isEqualTo(1);
        assertThat(handled).containsExactly(x1, x2, late);
    }

    private static ClaimMark lookbackBelow(ClaimMark mark) {
        return new ClaimMark(mark.availableAt().minus(DispatcherConfig.DEFAULT_MARK_LOOKBACK), Long.MIN_VALUE);
    }

    @Test
    void aWrittenOutcomeOfAnOrderingKeysMessageMakesTheNextClaimStartFromTheHead() {
        AtomicLong freed = new AtomicLong();
        ClaimMarks keyed = new ClaimMarks(FULL_SCAN, ticker::get, freed::get);
        List<String> a = List.of("a");
        ClaimMark mark = new ClaimMark(T0, 5);
        assertThat(keyed.next(a)).isNull();
        keyed.claimed(a, null, mark);
        assertThat(keyed.next(a)).isEqualTo(mark);

        freed.incrementAndGet(); // a predecessor's outcome written: its follower may sit below the mark
        assertThat(keyed.next(a)).as("the follower is looked for from the head at once").isNull();
        keyed.claimed(a, null, mark);
        assertThat(keyed.next(a)).as("once, not until the interval").isEqualTo(mark);

        assertThat(keyed.next(a)).isEqualTo(mark);
        freed.incrementAndGet(); // freed while a claim from the mark ran: its next claim still goes from the head
        keyed.claimed(a, mark, null);
        assertThat(keyed.next(a)).isNull();
    }

    @Test
    void theConfigRejectsBadIntervalsNamingTheSetting() {
        for (Duration bad : new Duration[]{Duration.ofMillis(-1), Duration.ofMinutes(1).plusMillis(1), null}) {
            assertThatThrownBy(() -> DispatcherConfig.builder().fullScanInterval(bad).build())
                    .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("fullScanInterval");
        }
        assertThat(DispatcherConfig.builder().build().fullScanInterval())
                .isEqualTo(DispatcherConfig.DEFAULT_FULL_SCAN_INTERVAL);
        assertThat(DispatcherConfig.builder().fullScanInterval(Duration.ZERO).build().toBuilder().build()
                .fullScanInterval()).isZero();
    }

    @Test
    void theConfigRejectsBadLookbacksNamingTheSetting() {
        for (Duration bad : new Duration[]{Duration.ZERO, Duration.ofMillis(-1), Duration.ofHours(1).plusMillis(1), null}) {
            assertThatThrownBy(() -> DispatcherConfig.builder().markLookback(bad).build())
                    .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("markLookback");
        }
        assertThat(DispatcherConfig.builder().build().markLookback()).isEqualTo(DispatcherConfig.DEFAULT_MARK_LOOKBACK);
        assertThat(DispatcherConfig.builder().markLookback(Duration.ofMinutes(2)).build().toBuilder().build()
                .markLookback()).isEqualTo(Duration.ofMinutes(2));
    }

    /**
     * The regression the marks are for: while a snapshot holds the xmin horizon, a claim from the
     * head walks the index entries of every row claimed since, and one from the mark does not. Counts
     * buffers (EXPLAIN ANALYZE), not time.
     */
    @Test
    void whileASnapshotIsHeldTheClaimFromTheMarkTouchesBoundedBuffersAndTheHeadClaimGrows() throws Exception {
        OutboxStore store = new OutboxStore(SqlClock.database(), Backoff.DEFAULT);
        DispatcherSessions sessions = new DispatcherSessions(pg.dataSource(), null, null);
        List<String> topics = List.of(Fixtures.TOPIC);
        try (Connection holder = pg.newConnection()) {
            holder.setAutoCommit(false);
            try (Statement st = holder.createStatement()) {
                st.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ");
                st.executeQuery("SELECT count(*) FROM outbox_message").close(); // the snapshot is taken here
            }
            ClaimMark[] mark = new ClaimMark[1];
            long[] headBuffers = new long[2];
            long[] markBuffers = new long[2];
            int[] processed = {2_000, 6_000}; // claimed before the comparison, about

            int done = 0;
            for (int round = 0; round < 2; round++) {
                Fixtures.enqueue(pg.dsl(), null, "r" + round, processed[round] - done);
                while (true) { // everything pending, the last round's probes too
                    ClaimMark from = mark[0];
                    ClaimStore.Claimed c = sessions.inTransaction(tx -> store.claims().claim(tx, "w", null, 100, topics,
                            Duration.ofMinutes(1), true, from));
                    if (c.messages().isEmpty()) {
                        break;
                    }
                    mark[0] = c.lowest();
                    done += c.messages().size();
                    pg.dsl().execute("UPDATE outbox_message SET status = 'done', lease_until = NULL, finished_at = now()"
                            + " WHERE status = 'running'");
                }
                Fixtures.enqueue(pg.dsl(), null, "probe" + round, 60); // what the compared claims find
                headBuffers[round] = pickBuffers(store.claims().claimQuery(pg.dsl(), "w", null, 50, topics,
                        Duration.ofMinutes(1), true));
                markBuffers[round] = pickBuffers(store.claims().claimQuery(pg.dsl(), "w", null, 50, topics,
                        Duration.ofMinutes(1), true, mark[0]));
            }
            holder.rollback();
            String figures = String.format("after %d then %d claimed, head claim %d then %d buffers, mark claim %d then %d",
                    processed[0], processed[1], headBuffers[0], headBuffers[1], markBuffers[0], markBuffers[1]);
            System.out.println("ClaimMarkTest: " + figures);
            assertThat(headBuffers[1] - headBuffers[0]).as("the head claim grows: " + figures)
                    .isGreaterThanOrEqualTo((processed[1] - processed[0]) / 100);
            assertThat(markBuffers[1]).as("the mark claim does not: " + figures)
                    .isLessThanOrEqualTo(markBuffers[0] + 5).isLessThan(headBuffers[1] / 2);
        }
    }

    /**
     * Shared buffers (hit and read) that the picking part of {@code claim} (the CTE's scan of the
     * claim index, under its LIMIT) touches in a generic plan, as the dispatchers run it (an index
     * scan from the mark; from the head an index or a bitmap scan, as the statistics say), executed
     * and rolled back.
     */
    private static long pickBuffers(org.jooq.Query claim) throws Exception {
        try (Connection c = pg.newConnection()) {
            return PlanText.pickBuffers(PlanText.genericPlanJson(c, claim, List.of()));
        }
    }

    /** As {@code HotSqlTest.theClaimGetsACachedGenericPlan}: the claim from a mark, its mark moving each time, is planned once. */
    @Test
    void theClaimFromAMovingMarkGetsACachedGenericPlan() throws Exception {
        OutboxStore store = new OutboxStore(SqlClock.database(), Backoff.DEFAULT);
        Fixtures.enqueue(pg.dsl(), null, "cached", 40);
        List<String> topics = List.of(Fixtures.TOPIC);
        try (Connection c = pg.dataSource().getConnection()) {
            Connection unclosable = (Connection) java.lang.reflect.Proxy.newProxyInstance(
                    Connection.class.getClassLoader(), new Class<?>[]{Connection.class}, (proxy, method, args) ->
                            method.getName().equals("close") ? null : method.invoke(c, args));
            javax.sql.DataSource one = (javax.sql.DataSource) java.lang.reflect.Proxy.newProxyInstance(
                    javax.sql.DataSource.class.getClassLoader(), new Class<?>[]{javax.sql.DataSource.class},
                    (proxy, method, args) -> {
                        if (method.getName().equals("getConnection")) {
                            return unclosable;
                        }
                        throw new UnsupportedOperationException(method.getName());
                    });
            DispatcherSessions sessions = new DispatcherSessions(one, null, null);
            ClaimMark mark = null;
            for (int i = 0; i < 12; i++) {
                ClaimMark from = mark;
                ClaimStore.Claimed claimed = sessions.inTransaction(tx -> store.claims().claim(tx, "w", null, 3, topics,
                        Duration.ofMinutes(1), true, from));
                assertThat(claimed.messages()).hasSize(3);
                assertThat(from == null || claimed.lowest().compareTo(from) > 0).as("the mark moves").isTrue();
                mark = claimed.lowest();
            }
            try (Statement st = c.createStatement();
                 ResultSet rs = st.executeQuery("SELECT generic_plans, custom_plans FROM pg_prepared_statements"
                         + " WHERE statement LIKE '%for no key update skip locked%'")) {
                // the one claim from the head ran once, below the driver's prepare threshold: this is the claim from the mark
                assertThat(rs.next()).as("the claim from a mark is a server-side prepared statement").isTrue();
                assertThat(rs.getLong(1)).as("generic plans (custom: %d)", rs.getLong(2)).isPositive();
            }
        }
    }

    /** The claim from a mark keeps one generic plan, and in it the mark is the claim index's Index Cond. */
    @Test
    void theClaimFromAMarkGetsAGenericPlanWithTheMarkAsIndexCond() throws Exception {
        OutboxStore store = new OutboxStore(SqlClock.database(), Backoff.DEFAULT);
        Fixtures.enqueue(pg.dsl(), null, "plan", 40);
        List<String> topics = List.of(Fixtures.TOPIC);
        DispatcherSessions sessions = new DispatcherSessions(pg.dataSource(), null, null);
        ClaimMark from = sessions.inTransaction(tx -> store.claims().claim(tx, "w", null, 1, topics,
                Duration.ofMinutes(1), true, null)).lowest();
        String sql = store.claims().claimQuery(pg.dsl(), "w", null, 3, topics, Duration.ofMinutes(1), true, from)
                .getSQL(ParamType.INDEXED);
        int n = (int) sql.chars().filter(ch -> ch == '?').count();
        try (Connection c = pg.newConnection(); Statement st = c.createStatement()) {
            st.execute("SET plan_cache_mode = force_generic_plan");
            st.execute("PREPARE mark_claim AS " + PlanText.numbered(sql));
            List<String> plan = new ArrayList<>();
            try (ResultSet rs = st.executeQuery("EXPLAIN (COSTS OFF) EXECUTE mark_claim(" + String.join(", ",
                    java.util.Collections.nCopies(n, "NULL")) + ")")) {
                while (rs.next()) {
                    plan.add(rs.getString(1));
                }
            }
            String text = String.join("\n", plan);
            assertThat(text).as(text).containsPattern(
                    "Index Scan using \\S+ on outbox_message_\\S+ c\\S*\\n\\s+Index Cond: .*ROW\\(\\S*available_at, \\S*id\\) >= ROW\\(\\$\\d+, \\$\\d+\\)");
        }
    }
}
