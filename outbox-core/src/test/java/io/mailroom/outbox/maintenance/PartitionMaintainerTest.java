package io.mailroom.outbox.maintenance;

import io.mailroom.outbox.EnqueuedMessage;
import io.mailroom.outbox.Fixtures;
import io.mailroom.outbox.MessageStatus;
import io.mailroom.outbox.MutableClock;
import io.mailroom.outbox.admin.MessageActions;
import io.mailroom.outbox.runtime.Dispatcher;
import io.mailroom.outbox.runtime.DispatcherConfig;
import io.mailroom.outbox.runtime.MessageHandler;
import io.mailroom.outbox.runtime.Outcome;
import io.mailroom.testing.PostgresExtension;
import org.jooq.impl.DSL;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import java.sql.Connection;
import java.sql.Statement;
import java.time.Duration;
import java.time.Instant;
import java.time.LocalDate;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;

import static io.mailroom.db.jooq.Tables.OUTBOX_ATTEMPT;
import static io.mailroom.db.jooq.Tables.OUTBOX_EFFECT;
import static io.mailroom.db.jooq.Tables.OUTBOX_MESSAGE;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * Daily partitions of the hot queue on an injected clock: created ahead with the queue's autovacuum
 * settings, dropped once expired and finished, never while a row is pending, running or in review.
 * Dates are in 2031, far from the partitions the migration made around the day the template
 * database was built; every test starts with no daily partition at all.
 */
class PartitionMaintainerTest {

    @RegisterExtension
    static final PostgresExtension pg = new PostgresExtension();

    private static final List<String> QUEUE_RELOPTIONS = List.of("autovacuum_vacuum_scale_factor=0.01",
            "autovacuum_vacuum_threshold=1000", "autovacuum_vacuum_insert_scale_factor=0.01",
            "autovacuum_analyze_scale_factor=0.02", "autovacuum_vacuum_cost_delay=0");

    private final MutableClock clock = MutableClock.at("2031-03-10T15:00:00Z");

    @BeforeEach
    void noDailyPartitions() {
        pg.dsl().execute("TRUNCATE outbox_message, outbox_effect, outbox_effect_term, outbox_attempt, idempotency_record, audit_log");
        pg.dsl().execute("""
                DO $$
                DECLARE r record;
                BEGIN
                  FOR r IN SELECT c.relname FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid
                           WHERE i.inhparent = 'outbox_message'::regclass AND c.relname LIKE 'outbox\\_message\\_p%'
                  LOOP
                    EXECUTE format('DROP TABLE %I', r.relname);
                  END LOOP;
                END
                $$""");
        assertThat(partitions()).isEmpty();
    }

    // ------------------------------------------------------------------------------------ ensure

    @Test
    void ensureCreatesYesterdayTodayAndTheDaysAheadWithTheQueueAutovacuumSettings() {
        var report = maintainer(cfg().partitionsAhead(7)).ensurePartitions();

        List<LocalDate> window = range("2031-03-09", "2031-03-17");
        assertThat(report.created()).containsExactlyElementsOf(window);
        assertThat(report.complete()).isTrue();
        assertThat(partitions()).containsExactlyElementsOf(window.stream().map(RetentionStore::partitionName).toList());
        for (LocalDate day : window) {
            assertThat(reloptions(RetentionStore.partitionName(day))).as(day.toString())
                    .containsExactlyInAnyOrderElementsOf(QUEUE_RELOPTIONS)
                    .containsExactlyInAnyOrderElementsOf(reloptions(RetentionStore.DEFAULT_PARTITION));
        }
    }

    @Test
    void partitionsCoverWholeUtcDays() {
        maintainer(cfg()).ensurePartitions();
        at("2031-03-10T23:59:59.999999Z");
        var lastOfTenth = Fixtures.enqueueOne(pg.dsl(), clock, Fixtures.message("late"));
        at("2031-03-11T00:00:00Z");
        var firstOfEleventh = Fixtures.enqueueOne(pg.dsl(), clock, Fixtures.message("early"));

        assertThat(partitionOf(lastOfTenth.id())).isEqualTo("outbox_message_p20310310");
        assertThat(partitionOf(firstOfEleventh.id())).isEqualTo("outbox_message_p20310311");
    }

    @Test
    void ensureTwiceChangesNothingTheSecondTime() {
        PartitionMaintainer m = maintainer(cfg().partitionsAhead(3));
        var first = m.ensurePartitions();
        var second = m.ensurePartitions();

        assertThat(first.created()).hasSize(5);
        assertThat(second.created()).isEmpty();
        assertThat(second.present()).containsExactlyElementsOf(first.created());
        assertThat(partitions()).hasSize(5);
    }

    @Test
    void twoMaintainersEnsuringAtOnceNeitherFailsAndEachDayIsCreatedOnce() throws Exception {
        ExecutorService threads = Executors.newFixedThreadPool(2);
        try {
            for (int round = 0; round < 4; round++) {
                at(Instant.parse("2031-04-01T12:00:00Z").plus(Duration.ofDays(20L * round)));
                PartitionMaintainer a = maintainer(cfg().partitionsAhead(10));
                PartitionMaintainer b = maintainer(cfg().partitionsAhead(10));
                CyclicBarrier start = new CyclicBarrier(2);
                Future<PartitionMaintainer.EnsureReport> ra = threads.submit(() -> {
                    start.await();
                    return a.ensurePartitions();
                });
                Future<PartitionMaintainer.EnsureReport> rb = threads.submit(() -> {
                    start.await();
                    return b.ensurePartitions();
                });
                var reportA = ra.get(60, TimeUnit.SECONDS);
                var reportB = rb.get(60, TimeUnit.SECONDS);

                LocalDate today = LocalDate.ofInstant(clock.instant(), java.time.ZoneOffset.UTC);
                List<LocalDate> window = range(today.minusDays(1).toString(), today.plusDays(10).toString());
                Set<LocalDate> overlap = new HashSet<>(reportA.created());
                overlap.retainAll(reportB.created());
                assertThat(overlap).as("no day created twice").isEmpty();
                List<LocalDate> createdByEither = new ArrayList<>(reportA.created());
                createdByEither.addAll(reportB.created());
                assertThat(createdByEither).containsExactlyInAnyOrderElementsOf(window);
                assertThat(reportA.complete()).isTrue();
                assertThat(reportB.complete()).isTrue();
                assertThat(partitions()).containsAll(window.stream().map(RetentionStore::partitionName).toList());
            }
        } finally {
            threads.shutdownNow();
        }
    }

    @Test
    void aDayWhoseRowsSitInTheDefaultPartitionIsSkippedAndItsRowsStay() {
        at("2031-05-20T10:00:00Z");
        var early = Fixtures.enqueueOne(pg.dsl(), clock, Fixtures.message("before-any-partition"));
        assertThat(partitionOf(early.id())).isEqualTo(RetentionStore.DEFAULT_PARTITION);

        PartitionMaintainer m = maintainer(cfg().partitionsAhead(2));
        var report = m.ensurePartitions();

        assertThat(report.conflicting()).containsExactly(day("2031-05-20"));
        assertThat(report.created()).containsExactlyElementsOf(List.of(day("2031-05-19"), day("2031-05-21"), day("2031-05-22")));
        assertThat(report.complete()).isFalse();
        assertThat(partitions()).doesNotContain("outbox_message_p20310520");
        assertThat(partitionOf(early.id())).isEqualTo(RetentionStore.DEFAULT_PARTITION);
        assertThat(Fixtures.status(pg.dsl(), early.id())).isEqualTo("pending");

        // still a conflict on the next run, not an error; the row is still claimed normally
        assertThat(m.ensurePartitions().conflicting()).containsExactly(day("2031-05-20"));
        assertThat(dispatcher((msg, ctx) -> Outcome.done()).runOnce()).isEqualTo(1);
        assertThat(Fixtures.status(pg.dsl(), early.id())).isEqualTo("done");
    }

    // -------------------------------------------------------------------------------------- drop

    @Test
    void partitionsPastTheHotRetentionAreDroppedAndTheirHistoryStays() {
        at("2031-06-01T08:00:00Z");
        PartitionMaintainer m = maintainer(cfg().hotRetention(Duration.ofDays(3)));
        m.ensurePartitions();
        var sent = Fixtures.enqueue(pg.dsl(), clock, "june-first", 3);
        assertThat(dispatcher((msg, ctx) -> Outcome.done()).runOnce()).isEqualTo(3);
        clock.advance(Duration.ofDays(1));
        var younger = Fixtures.enqueueOne(pg.dsl(), clock, Fixtures.message("june-second"));

        // 2031-06-05T00:00:01: the day of June 1st ended on June 2nd, more than three days ago
        at("2031-06-05T00:00:01Z");
        var report = m.dropExpiredPartitions();

        assertThat(report.dropped()).containsExactly("outbox_message_p20310531", "outbox_message_p20310601");
        assertThat(report.kept()).isEmpty();
        assertThat(report.busy()).isEmpty();
        assertThat(partitions()).doesNotContain("outbox_message_p20310531", "outbox_message_p20310601")
                .contains("outbox_message_p20310602", "outbox_message_p20310605");
        assertThat(pg.dsl().fetchCount(OUTBOX_MESSAGE, OUTBOX_MESSAGE.ID.in(sent.stream().map(EnqueuedMessage::id).toList())))
                .isZero();
        assertThat(Fixtures.status(pg.dsl(), younger.id())).isEqualTo("pending");
        // the support history of the dropped rows is untouched
        assertThat(pg.dsl().fetchCount(OUTBOX_EFFECT, OUTBOX_EFFECT.IDEMPOTENCY_KEY.like("june-first-%")
                .and(OUTBOX_EFFECT.STATUS.eq("done")))).isEqualTo(3);
        assertThat(pg.dsl().fetchCount(OUTBOX_ATTEMPT, OUTBOX_ATTEMPT.IDEMPOTENCY_KEY.like("june-first-%"))).isEqualTo(3);
    }

    @Test
    void aPartitionHoldingAPendingRowIsKeptIntactUntilTheRowFinishes() {
        at("2031-07-01T08:00:00Z");
        PartitionMaintainer m = maintainer(cfg());
        m.ensurePartitions();
        var done = Fixtures.enqueueOne(pg.dsl(), clock, Fixtures.message("sent-at-once"));
        var waiting = Fixtures.enqueueOne(pg.dsl(), clock,
                Fixtures.message("scheduled").withAvailableAt(Instant.parse("2031-07-30T00:00:00Z")));
        Dispatcher d = dispatcher((msg, ctx) -> Outcome.done());
        assertThat(d.runOnce()).isEqualTo(1);

        at("2031-07-12T00:00:00Z");
        var report = m.dropExpiredPartitions();

        assertThat(report.dropped()).doesNotContain("outbox_message_p20310701").contains("outbox_message_p20310630");
        assertThat(report.kept()).containsExactly(
                new PartitionMaintainer.Kept("outbox_message_p20310701", day("2031-07-01"), 1, 0, 0));
        assertThat(partitions()).contains("outbox_message_p20310701");
        assertThat(Fixtures.status(pg.dsl(), done.id())).isEqualTo("done");
        assertThat(Fixtures.status(pg.dsl(), waiting.id())).isEqualTo("pending");
        assertThat(Fixtures.row(pg.dsl(), waiting.id()).get(OUTBOX_MESSAGE.PAYLOAD).data()).contains("scheduled");

        at("2031-07-30T00:00:00Z");
        assertThat(d.runOnce()).isEqualTo(1);
        var after = m.dropExpiredPartitions();
        assertThat(after.dropped()).contains("outbox_message_p20310701");
        assertThat(after.kept()).isEmpty();
        assertThat(pg.dsl().fetchCount(OUTBOX_MESSAGE)).isZero();
    }

    @Test
    void aPartitionHoldingARunningRowIsKeptWhileItsHandlerRuns() {
        at("2031-08-01T08:00:00Z");
        PartitionMaintainer m = maintainer(cfg());
        m.ensurePartitions();
        var msg = Fixtures.enqueueOne(pg.dsl(), clock, Fixtures.message("slow-send"));
        at("2031-08-10T00:00:00Z");

        AtomicReference<PartitionMaintainer.DropReport> duringSend = new AtomicReference<>();
        assertThat(dispatcher((claimed, ctx) -> {
            duringSend.set(m.dropExpiredPartitions());
            return Outcome.done();
        }).runOnce()).isEqualTo(1);

        assertThat(duringSend.get().kept()).containsExactly(
                new PartitionMaintainer.Kept("outbox_message_p20310801", day("2031-08-01"), 0, 1, 0));
        assertThat(duringSend.get().dropped()).doesNotContain("outbox_message_p20310801");
        assertThat(Fixtures.status(pg.dsl(), msg.id())).isEqualTo("done");
        assertThat(m.dropExpiredPartitions().dropped()).contains("outbox_message_p20310801");
    }

    @Test
    void aPartitionHoldingAReviewRowIsKeptUntilAPersonDecides() {
        at("2031-09-01T08:00:00Z");
        PartitionMaintainer m = maintainer(cfg());
        m.ensurePartitions();
        Fixtures.enqueueOne(pg.dsl(), clock, Fixtures.message("unknown-outcome"));
        assertThat(dispatcher((msg, ctx) -> Outcome.review("SMTP connection dropped after DATA")).runOnce()).isEqualTo(1);

        at("2031-09-20T00:00:00Z");
        assertThat(m.dropExpiredPartitions().kept()).containsExactly(
                new PartitionMaintainer.Kept("outbox_message_p20310901", day("2031-09-01"), 0, 0, 1));

        var actions = new MessageActions(pg.dataSource(), clock, 0, Duration.ofMillis(1));
        assertThat(actions.confirmDone("unknown-outcome", null)).isEqualTo(new MessageActions.Result.Applied(MessageStatus.DONE));
        assertThat(m.dropExpiredPartitions().dropped()).contains("outbox_message_p20310901");
    }

    @Test
    void aRowRetriedBetweenTheCheckAndTheDetachRollsTheDropBack() {
        at("2031-10-01T08:00:00Z");
        PartitionMaintainer m = maintainer(cfg());
        m.ensurePartitions();
        var msg = Fixtures.enqueueOne(pg.dsl(), clock, Fixtures.message("bounced"));
        assertThat(dispatcher((claimed, ctx) -> Outcome.failed("550 mailbox unavailable")).runOnce()).isEqualTo(1);
        at("2031-10-10T00:00:00Z");

        var actions = new MessageActions(pg.dataSource(), clock, 0, Duration.ofMillis(1));
        m.beforeDetach(partition -> {
            if (partition.equals("outbox_message_p20311001")) {
                // support presses "retry" after the unlocked check found only finished rows
                assertThat(actions.retryNow("bounced", null)).isEqualTo(new MessageActions.Result.Applied(MessageStatus.PENDING));
            }
        });
        var report = m.dropExpiredPartitions();

        assertThat(report.kept()).containsExactly(
                new PartitionMaintainer.Kept("outbox_message_p20311001", day("2031-10-01"), 1, 0, 0));
        assertThat(report.dropped()).doesNotContain("outbox_message_p20311001");
        assertThat(partitions()).contains("outbox_message_p20311001");
        assertThat(partitionOf(msg.id())).isEqualTo("outbox_message_p20311001");
        assertThat(Fixtures.status(pg.dsl(), msg.id())).isEqualTo("pending");
    }

    @Test
    void aRowParkedForReviewBetweenTheCheckAndTheDetachRollsTheDropBack() {
        at("2031-10-15T08:00:00Z");
        PartitionMaintainer m = maintainer(cfg());
        m.ensurePartitions();
        var msg = Fixtures.enqueueOne(pg.dsl(), clock, Fixtures.message("flaky-relay"));
        AtomicReference<Outcome> next = new AtomicReference<>(Outcome.failed("554 transaction failed"));
        Dispatcher d = dispatcher((claimed, ctx) -> next.get());
        assertThat(d.runOnce()).isEqualTo(1);
        at("2031-10-25T00:00:00Z");

        var actions = new MessageActions(pg.dataSource(), clock, 0, Duration.ofMillis(1));
        m.beforeDetach(partition -> {
            if (partition.equals("outbox_message_p20311015")) {
                // retried, claimed and parked for review, all after the unlocked check
                actions.retryNow("flaky-relay", null);
                next.set(Outcome.review("connection dropped after DATA"));
                assertThat(d.runOnce()).isEqualTo(1);
            }
        });
        var report = m.dropExpiredPartitions();

        assertThat(report.kept()).containsExactly(
                new PartitionMaintainer.Kept("outbox_message_p20311015", day("2031-10-15"), 0, 0, 1));
        assertThat(partitions()).contains("outbox_message_p20311015");
        assertThat(Fixtures.status(pg.dsl(), msg.id())).isEqualTo("review");
    }

    @Test
    void twoMaintainersDroppingAtOnceDropEachPartitionOnce() throws Exception {
        at("2031-06-15T08:00:00Z");
        maintainer(cfg().partitionsAhead(10)).ensurePartitions();
        Fixtures.enqueue(pg.dsl(), clock, "mid-june", 5);
        dispatcher((msg, ctx) -> Outcome.done()).runOnce();
        at("2031-07-15T00:00:00Z");
        List<String> expired = partitions();
        assertThat(expired).hasSize(12);

        PartitionMaintainer a = maintainer(cfg());
        PartitionMaintainer b = maintainer(cfg());
        CyclicBarrier start = new CyclicBarrier(2);
        ExecutorService threads = Executors.newFixedThreadPool(2);
        try {
            Future<PartitionMaintainer.DropReport> ra = threads.submit(() -> {
                start.await();
                return a.dropExpiredPartitions();
            });
            Future<PartitionMaintainer.DropReport> rb = threads.submit(() -> {
                start.await();
                return b.dropExpiredPartitions();
            });
            var reportA = ra.get(60, TimeUnit.SECONDS);
            var reportB = rb.get(60, TimeUnit.SECONDS);

            List<String> droppedByEither = new ArrayList<>(reportA.dropped());
            droppedByEither.addAll(reportB.dropped());
            assertThat(droppedByEither).containsExactlyInAnyOrderElementsOf(expired);
            assertThat(reportA.busy()).isEmpty();
            assertThat(reportB.busy()).isEmpty();
            assertThat(partitions()).isEmpty();
        } finally {
            threads.shutdownNow();
        }
    }

    @Test
    void maintainCreatesAheadThenDropsExpired() {
        at("2031-01-10T08:00:00Z");
        PartitionMaintainer m = maintainer(cfg().partitionsAhead(2));
        var first = m.maintain();
        assertThat(first.ensured().created()).containsExactlyElementsOf(range("2031-01-09", "2031-01-12"));
        assertThat(first.dropped().dropped()).isEmpty();

        at("2031-01-20T08:00:00Z");
        var later = m.maintain();
        assertThat(later.ensured().created()).containsExactlyElementsOf(range("2031-01-19", "2031-01-22"));
        assertThat(later.dropped().dropped()).containsExactlyElementsOf(
                range("2031-01-09", "2031-01-12").stream().map(RetentionStore::partitionName).toList());
        assertThat(later.frozen().frozen()).isEmpty();
        assertThat(partitions()).containsExactlyElementsOf(
                range("2031-01-19", "2031-01-22").stream().map(RetentionStore::partitionName).toList());
    }

    @Test
    void aBusyQueueTableIsLeftForTheNextRun() throws Exception {
        at("2031-11-01T08:00:00Z");
        PartitionMaintainer m = maintainer(cfg().partitionsAhead(1).lockTimeout(Duration.ofMillis(100)));
        m.ensurePartitions();
        Fixtures.enqueueOne(pg.dsl(), clock, Fixtures.message("old"));
        dispatcher((msg, ctx) -> Outcome.done()).runOnce();
        at("2031-11-10T00:00:00Z");

        try (Connection other = pg.newConnection(); Statement st = other.createStatement()) {
            other.setAutoCommit(false);
            // e.g. a long business transaction that read the queue table
            st.execute("LOCK TABLE outbox_message IN ACCESS SHARE MODE");

            var dropped = m.dropExpiredPartitions();
            assertThat(dropped.busy()).contains("outbox_message_p20311101");
            assertThat(dropped.dropped()).isEmpty();
            var ensured = m.ensurePartitions();
            assertThat(ensured.busy()).containsExactlyElementsOf(range("2031-11-09", "2031-11-11"));
            assertThat(ensured.complete()).isFalse();
            other.rollback();
        }
        assertThat(partitions()).contains("outbox_message_p20311101");
        assertThat(m.dropExpiredPartitions().dropped()).contains("outbox_message_p20311101");
        assertThat(m.ensurePartitions().created()).containsExactlyElementsOf(range("2031-11-09", "2031-11-11"));
    }

    @Test
    void theClaimFindsPendingMessagesAcrossSeveralPartitions() {
        at("2031-12-01T08:00:00Z");
        maintainer(cfg()).ensurePartitions();
        List<EnqueuedMessage> messages = new ArrayList<>();
        for (int i = 0; i < 3; i++) {
            messages.add(Fixtures.enqueueOne(pg.dsl(), clock, Fixtures.message("day-" + i)));
            clock.advance(Duration.ofDays(2));
        }
        assertThat(messages.stream().map(msg -> partitionOf(msg.id())).toList()).containsExactly(
                "outbox_message_p20311201", "outbox_message_p20311203", "outbox_message_p20311205");

        List<String> handled = new ArrayList<>();
        int claimed = dispatcher((msg, ctx) -> {
            handled.add(msg.idempotencyKey());
            return Outcome.done();
        }).runOnce();

        assertThat(claimed).isEqualTo(3);
        assertThat(handled).containsExactly("day-0", "day-1", "day-2");
        assertThat(Fixtures.countByStatus(pg.dsl(), "done")).isEqualTo(3);
    }

    @Test
    void finishedRowsInTheDefaultPartitionLeaveAfterTheHotRetention() {
        at("2031-08-10T08:00:00Z");
        Fixtures.enqueueOne(pg.dsl(), clock, Fixtures.message("stray-done"));
        var pending = Fixtures.enqueueOne(pg.dsl(), clock,
                Fixtures.message("stray-pending").withAvailableAt(Instant.parse("2032-01-01T00:00:00Z")));
        Dispatcher d = dispatcher((msg, ctx) -> Outcome.done());
        assertThat(d.runOnce()).isEqualTo(1);
        at("2031-08-14T08:00:00Z");
        var recent = Fixtures.enqueueOne(pg.dsl(), clock, Fixtures.message("stray-recent"));
        assertThat(d.runOnce()).isEqualTo(1);
        assertThat(pg.dsl().fetchCount(DSL.table(DSL.name(RetentionStore.DEFAULT_PARTITION)))).isEqualTo(3);

        at("2031-08-15T08:00:00Z");
        var report = maintainer(cfg()).dropExpiredPartitions();

        assertThat(report.defaultRowsDeleted()).isEqualTo(1);
        assertThat(pg.dsl().fetchCount(OUTBOX_MESSAGE)).isEqualTo(2);
        assertThat(Fixtures.status(pg.dsl(), pending.id())).isEqualTo("pending");
        assertThat(Fixtures.status(pg.dsl(), recent.id())).isEqualTo("done");
    }

    // ------------------------------------------------------------------------------------ freeze

    @Test
    void keptPartitionsAreFrozenAndYoungOnesAreLeftToAutovacuum() throws Exception {
        at("2031-02-01T08:00:00Z");
        maintainer(cfg()).ensurePartitions();
        Fixtures.enqueueOne(pg.dsl(), clock, Fixtures.message("pins-its-day")
                .withAvailableAt(Instant.parse("2032-01-01T00:00:00Z")));
        try (Connection c = pg.newConnection(); Statement st = c.createStatement()) {
            for (int i = 0; i < 5; i++) {
                st.execute("SELECT txid_current()"); // each in its own transaction: the xid horizon moves on
            }
        }
        at("2031-02-10T00:00:00Z");
        maintainer(cfg()).ensurePartitions();
        assertThat(maintainer(cfg()).dropExpiredPartitions().kept()).extracting(PartitionMaintainer.Kept::partition)
                .containsExactly("outbox_message_p20310201");
        long ageBefore = xidAge("outbox_message_p20310201");

        assertThat(maintainer(cfg()).freezeOldPartitions().frozen()).as("below the default freeze age").isEmpty();
        var report = maintainer(cfg().freezeMinXidAge(0)).freezeOldPartitions();

        assertThat(report.frozen()).containsExactly("outbox_message_p20310201");
        assertThat(report.busy()).isEmpty();
        assertThat(xidAge("outbox_message_p20310201")).isLessThan(ageBefore);
        assertThat(pg.dsl().fetchCount(OUTBOX_MESSAGE)).isEqualTo(1);
    }

    // ----------------------------------------------------------------------------------- helpers

    private RetentionConfig.Builder cfg() {
        return RetentionConfig.builder().clock(clock).lockTimeout(Duration.ofMillis(500));
    }

    private PartitionMaintainer maintainer(RetentionConfig.Builder config) {
        return new PartitionMaintainer(pg.dataSource(), config.build());
    }

    private Dispatcher dispatcher(MessageHandler handler) {
        DispatcherConfig config = DispatcherConfig.builder().workerId("w1").batchSize(10)
                .listenForNotifications(false).clock(clock).build();
        return new Dispatcher(pg.dataSource(), config, Map.of(Fixtures.TOPIC, handler));
    }

    /** Daily partitions attached now, by name. */
    private static List<String> partitions() {
        return pg.dsl().fetch("""
                SELECT c.relname::text FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid
                WHERE i.inhparent = 'outbox_message'::regclass AND c.relname <> 'outbox_message_default'
                ORDER BY c.relname
                """).getValues(0, String.class);
    }

    private static String partitionOf(long id) {
        return pg.dsl().fetchSingle("SELECT tableoid::regclass::text FROM outbox_message WHERE id = ?", id)
                .get(0, String.class);
    }

    private static List<String> reloptions(String table) {
        String[] options = pg.dsl().fetchSingle("SELECT reloptions FROM pg_class WHERE oid = to_regclass(?)", table)
                .get(0, String[].class);
        return options == null ? List.of() : Arrays.asList(options);
    }

    private static long xidAge(String table) {
        return pg.dsl().fetchSingle("SELECT age(relfrozenxid)::bigint FROM pg_class WHERE oid = to_regclass(?)", table)
                .get(0, Long.class);
    }

    /** Moves the clock to {@code iso}, backwards if need be. */
    private void at(String iso) {
        at(Instant.parse(iso));
    }

    private void at(Instant instant) {
        clock.advance(Duration.between(clock.instant(), instant));
    }

    private static LocalDate day(String iso) {
        return LocalDate.parse(iso);
    }

    /** The days from {@code first} to {@code last}, both included. */
    private static List<LocalDate> range(String first, String last) {
        List<LocalDate> out = new ArrayList<>();
        for (LocalDate d = day(first); !d.isAfter(day(last)); d = d.plusDays(1)) {
            out.add(d);
        }
        return out;
    }
}
