package io.mailroom.outbox.maintenance;

import io.mailroom.outbox.Fixtures;
import io.mailroom.outbox.MutableClock;
import io.mailroom.outbox.NewMessage;
import io.mailroom.outbox.admin.TopicRollup;
import io.mailroom.outbox.admin.TopicRollup.Resolution;
import io.mailroom.testing.PostgresExtension;
import org.jooq.DSLContext;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import java.sql.Connection;
import java.sql.Statement;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.stream.Collectors;

import static io.mailroom.db.jooq.Tables.OUTBOX_ROLLUP;
import static io.mailroom.db.jooq.Tables.OUTBOX_ROLLUP_MARK;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * The stats rollup on an injected clock: attempts land in their minute and hour once, however many
 * runs race or stop halfway; the waiting emails are sampled once a minute; old buckets go; and the
 * 7-day read touches only rollup rows. Attempts are written directly (with the times the test needs);
 * their effects are made by the real enqueuer, which is where the topic comes from.
 */
class StatsRollupTest {

    @RegisterExtension
    static final PostgresExtension pg = new PostgresExtension();

    private final MutableClock clock = MutableClock.at("2031-01-05T10:00:20Z");

    @BeforeEach
    void clean() {
        pg.dsl().execute("TRUNCATE outbox_message, outbox_effect, outbox_effect_term, outbox_attempt, outbox_rollup, outbox_rollup_mark");
    }

    private StatsRollup rollup(RollupConfig.Builder config) {
        return new StatsRollup(pg.dataSource(), config.clock(clock).build());
    }

    /** A first run that starts two hours back, folding ten minutes per transaction. */
    private StatsRollup rollup() {
        return rollup(RollupConfig.builder().backfill(Duration.ofHours(2)));
    }

    private void email(String key, String topic) {
        Fixtures.enqueueOne(pg.dsl(), clock, NewMessage.of(topic, "order", key, key, "{}"));
    }

    private static void attempt(String key, String finishedAt, String outcome) {
        pg.dsl().execute("INSERT INTO outbox_attempt (idempotency_key, message_id, attempt, claim_version, worker, started_at,"
                + " finished_at, outcome) VALUES (?, 0, 1, 1, 'w', ?::timestamptz, ?::timestamptz, ?)", key, finishedAt, finishedAt, outcome);
    }

    /** "resolution bucket topic: sent/retried/failed/review/other", the rows with counts. */
    private static List<String> buckets(Resolution resolution) {
        var r = OUTBOX_ROLLUP;
        return pg.dsl().selectFrom(r).where(r.RESOLUTION.eq(resolution.dbValue()))
                .and(r.SENT.plus(r.RETRIED).plus(r.FAILED).plus(r.REVIEW).plus(r.OTHER).gt(0L))
                .orderBy(r.BUCKET, r.TOPIC)
                .fetch(x -> x.getBucket() + " " + x.getTopic() + ": " + x.getSent() + "/" + x.getRetried() + "/" + x.getFailed()
                        + "/" + x.getReview() + "/" + x.getOther());
    }

    private static long total() {
        return pg.dsl().fetchSingle("SELECT coalesce(sum(sent + retried + failed + review + other), 0) FROM outbox_rollup WHERE resolution = 'minute'")
                .get(0, Long.class);
    }

    private static Instant mark() {
        return pg.dsl().select(OUTBOX_ROLLUP_MARK.FOLDED_UNTIL).from(OUTBOX_ROLLUP_MARK).fetchSingle().value1();
    }

    @Test
    void eachAttemptIsCountedInItsMinuteAndHourOnceTheMinuteHasClosed() {
        email("a-1", "t.a");
        email("a-2", "t.a");
        email("b-1", "t.b");
        attempt("a-1", "2031-01-05T09:05:10Z", "retry");
        attempt("a-1", "2031-01-05T09:05:50Z", "done");
        attempt("a-2", "2031-01-05T09:59:40Z", "review");
        attempt("b-1", "2031-01-05T09:59:59.999Z", "failed");
        attempt("a-2", "2031-01-05T10:00:00Z", "lease_expired");

        // 10:00:20, settle 30 s: 09:59 has not closed yet
        StatsRollup.Report first = rollup().run();
        assertThat(first.attempts()).isEqualTo(2);
        assertThat(first.caughtUp()).isTrue();
        assertThat(first.foldedUntil()).isEqualTo(Instant.parse("2031-01-05T09:59:00Z"));
        assertThat(buckets(Resolution.MINUTE)).containsExactly("2031-01-05T09:05:00Z t.a: 1/1/0/0/0");
        assertThat(buckets(Resolution.HOUR)).containsExactly("2031-01-05T09:00:00Z t.a: 1/1/0/0/0");

        // again at once: nothing new, nothing counted twice
        assertThat(rollup().run().attempts()).isZero();
        assertThat(buckets(Resolution.MINUTE)).containsExactly("2031-01-05T09:05:00Z t.a: 1/1/0/0/0");

        clock.advance(Duration.ofSeconds(40)); // 10:01:00: 09:59 has closed, 10:00 not yet
        assertThat(rollup().run().attempts()).isEqualTo(2);
        assertThat(buckets(Resolution.MINUTE)).containsExactly("2031-01-05T09:05:00Z t.a: 1/1/0/0/0",
                "2031-01-05T09:59:00Z t.a: 0/0/0/1/0", "2031-01-05T09:59:00Z t.b: 0/0/1/0/0");
        assertThat(buckets(Resolution.HOUR)).containsExactly("2031-01-05T09:00:00Z t.a: 1/1/0/1/0",
                "2031-01-05T09:00:00Z t.b: 0/0/1/0/0");

        clock.advance(Duration.ofMinutes(1));
        assertThat(rollup().run().attempts()).isEqualTo(1);
        assertThat(buckets(Resolution.HOUR)).containsExactly("2031-01-05T09:00:00Z t.a: 1/1/0/1/0",
                "2031-01-05T09:00:00Z t.b: 0/0/1/0/0", "2031-01-05T10:00:00Z t.a: 0/0/0/0/1");
        assertThat(mark()).isEqualTo(Instant.parse("2031-01-05T10:01:00Z"));
    }

    /** 1,200 attempts from 08:00 to 10:00, ten a minute, on two topics, with every kind of outcome. */
    private void history() {
        for (int i = 0; i < 40; i++) {
            email("k-" + i, i % 2 == 0 ? "t.even" : "t.odd");
        }
        String[] outcomes = {"done", "done", "done", "retry", "failed", "review", "claim_lost"};
        pg.dsl().execute("""
                INSERT INTO outbox_attempt (idempotency_key, message_id, attempt, claim_version, worker, started_at, finished_at, outcome)
                SELECT 'k-' || (g % 40), 0, 1, 1, 'w', t, t, (?::varchar[])[1 + g % 7]
                FROM generate_series(0, 1199) g, LATERAL (SELECT timestamptz '2031-01-05 08:00:00+00' + g * interval '6 seconds' AS t) x
                """, (Object) outcomes);
    }

    /** What the raw history says, minute by minute: what the rollup's minute rows must say. */
    private static List<String> rawByMinute() {
        return pg.dsl().fetch("""
                SELECT date_bin('1 minute', a.finished_at, timestamptz '2000-01-01 00:00:00+00') AS b, e.topic,
                       count(*) FILTER (WHERE outcome = 'done'), count(*) FILTER (WHERE outcome = 'retry'),
                       count(*) FILTER (WHERE outcome = 'failed'), count(*) FILTER (WHERE outcome = 'review'),
                       count(*) FILTER (WHERE outcome NOT IN ('done', 'retry', 'failed', 'review'))
                FROM outbox_attempt a JOIN outbox_effect e USING (idempotency_key) GROUP BY 1, 2 ORDER BY 1, 2
                """).stream().map(r -> r.get(0, Instant.class) + " " + r.get(1) + ": " + r.get(2) + "/" + r.get(3) + "/"
                + r.get(4) + "/" + r.get(5) + "/" + r.get(6)).toList();
    }

    @Test
    void twoRunsRacingCountEveryAttemptExactlyOnce() throws Exception {
        history();
        clock.advance(Duration.ofHours(1)); // 11:00:20: both hours closed
        // two dispatchers, each with its own role instance, in a tight loop over small chunks
        RollupConfig.Builder config = RollupConfig.builder().backfill(Duration.ofHours(4)).foldChunk(Duration.ofMinutes(1))
                .maxChunksPerRun(3);
        CountDownLatch go = new CountDownLatch(1);
        ExecutorService threads = Executors.newFixedThreadPool(2);
        try {
            List<Future<long[]>> runs = new ArrayList<>();
            for (int t = 0; t < 2; t++) {
                StatsRollup mine = rollup(config);
                runs.add(threads.submit(() -> {
                    go.await();
                    long folded = 0;
                    long skipped = 0;
                    for (int i = 0; i < 500; i++) {
                        StatsRollup.Report r = mine.run();
                        folded += r.attempts();
                        skipped += r.skipped() ? 1 : 0;
                        if (r.caughtUp()) {
                            break;
                        }
                    }
                    return new long[]{folded, skipped};
                }));
            }
            go.countDown();
            long total = 0;
            for (Future<long[]> run : runs) {
                total += run.get()[0];
            }
            assertThat(total).as("attempts folded by both runs together").isEqualTo(1200);
        } finally {
            threads.shutdownNow();
        }
        assertThat(buckets(Resolution.MINUTE)).hasSize(240).containsExactlyElementsOf(rawByMinute());
        assertThat(pg.dsl().fetchValue("SELECT sum(sent + retried + failed + review + other) FROM outbox_rollup WHERE resolution = 'hour'"))
                .hasToString("1200");
        assertThat(buckets(Resolution.HOUR)).hasSize(4);
        assertThat(mark()).isEqualTo(Instant.parse("2031-01-05T10:59:00Z"));
    }

    @Test
    void aRunThatFailsMovesNothing_andANewProcessCarriesOnFromTheMark() throws Exception {
        history();
        clock.advance(Duration.ofHours(1));
        RollupConfig.Builder small = RollupConfig.builder().backfill(Duration.ofHours(4)).maxChunksPerRun(7)
                .lockTimeout(Duration.ofMillis(200));
        // the first process folds 70 minutes from 07:00 (the first hour has no attempts), then stops
        StatsRollup.Report partial = rollup(small).run();
        assertThat(partial.caughtUp()).isFalse();
        Instant stoppedAt = mark();
        assertThat(stoppedAt).isEqualTo(Instant.parse("2031-01-05T08:10:00Z"));
        long before = total();
        assertThat(before).isEqualTo(100);

        // a fold that cannot finish (a bucket it must add to is locked past the lock timeout) changes nothing
        try (Connection blocker = pg.newConnection()) {
            blocker.setAutoCommit(false);
            try (Statement st = blocker.createStatement()) {
                st.execute("SELECT 1 FROM outbox_rollup WHERE resolution = 'hour' FOR UPDATE");
            }
            assertThatThrownBy(() -> rollup(small).run()).hasMessageContaining("lock timeout");
            blocker.rollback();
        }
        assertThat(mark()).isEqualTo(stoppedAt);
        assertThat(total()).isEqualTo(before);

        // a new process (a new instance, nothing in memory) carries on where the mark says, until caught up
        StatsRollup.Report r;
        do {
            r = rollup(small).run();
        } while (!r.caughtUp());
        assertThat(buckets(Resolution.MINUTE)).containsExactlyElementsOf(rawByMinute());
    }

    @Test
    void aChunkHoldsAtMostChunkAttemptsCutAtAMinute_butAlwaysAWholeMinute() {
        history(); // ten attempts a minute from 08:00
        clock.advance(Duration.ofHours(1));
        StatsRollup.Report r = rollup(RollupConfig.builder().backfill(Duration.ofHours(3)).chunkAttempts(25).maxChunksPerRun(3)).run();
        assertThat(r.chunks()).isEqualTo(3);
        assertThat(r.attempts()).isEqualTo(60); // 08:00-08:02, 08:02-08:04, 08:04-08:06
        assertThat(mark()).isEqualTo(Instant.parse("2031-01-05T08:06:00Z"));
        // fewer than one minute's attempts: the minute is folded whole all the same
        r = rollup(RollupConfig.builder().chunkAttempts(5).maxChunksPerRun(1)).run();
        assertThat(r.attempts()).isEqualTo(10);
        assertThat(mark()).isEqualTo(Instant.parse("2031-01-05T08:07:00Z"));
        assertThatThrownBy(() -> RollupConfig.builder().chunkAttempts(0).build()).hasMessageContaining("chunkAttempts");
    }

    @Test
    void theEmailsWaitingAreSampledOnceAMinutePerTopic_andATopicThatEmptiedGetsZero() {
        email("a-1", "t.a");
        email("a-2", "t.a");
        email("b-1", "t.b");
        attempt("b-1", "2031-01-05T09:30:00Z", "done");
        pg.dsl().execute("UPDATE outbox_message SET status = 'done', finished_at = now() WHERE idempotency_key = 'b-1'");
        StatsRollup.Report first = rollup().run();
        assertThat(first.sampled()).isTrue();
        assertThat(waiting(Resolution.MINUTE, "2031-01-05T10:00:00Z")).isEqualTo(Map.of("t.a", 2L, "t.b", 0L));
        assertThat(waiting(Resolution.HOUR, "2031-01-05T10:00:00Z")).isEqualTo(Map.of("t.a", 2L, "t.b", 0L));

        // within the same minute: no second sample
        email("a-3", "t.a");
        assertThat(rollup().run().sampled()).isFalse();
        assertThat(waiting(Resolution.MINUTE, "2031-01-05T10:00:00Z")).containsEntry("t.a", 2L);

        // the next minute: a new sample; the hour keeps the most seen
        clock.advance(Duration.ofMinutes(1));
        pg.dsl().execute("UPDATE outbox_message SET status = 'done', finished_at = now() WHERE topic = 't.a' AND idempotency_key <> 'a-3'");
        assertThat(rollup().run().sampled()).isTrue();
        assertThat(waiting(Resolution.MINUTE, "2031-01-05T10:01:00Z")).isEqualTo(Map.of("t.a", 1L, "t.b", 0L));
        assertThat(waiting(Resolution.HOUR, "2031-01-05T10:00:00Z")).isEqualTo(Map.of("t.a", 2L, "t.b", 0L));
        assertThat(TopicRollup.mark(pg.dsl()).sampledAt()).isEqualTo(clock.instant());
    }

    private static Map<String, Long> waiting(Resolution resolution, String bucket) {
        var r = OUTBOX_ROLLUP;
        return pg.dsl().select(r.TOPIC, r.WAITING).from(r).where(r.RESOLUTION.eq(resolution.dbValue()))
                .and(r.BUCKET.eq(Instant.parse(bucket))).and(r.WAITING.isNotNull())
                .fetchMap(r.TOPIC, r.WAITING);
    }

    @Test
    void oldBucketsAreForgotten_theOtherOwnersRollupsWithThem() {
        DSLContext dsl = pg.dsl();
        dsl.execute("""
                INSERT INTO outbox_rollup (resolution, bucket, topic, sent) VALUES
                  ('minute', '2031-01-03T09:59:00Z', 't', 1), ('minute', '2031-01-03T10:01:00Z', 't', 1),
                  ('hour', '2030-12-28T09:00:00Z', 't', 1), ('hour', '2030-12-28T11:00:00Z', 't', 1)""");
        Map<String, Instant[]> seen = new HashMap<>();
        StatsRollup withStep = new StatsRollup(pg.dataSource(), RollupConfig.builder().backfill(Duration.ZERO).clock(clock).build(),
                List.of(new RollupStep() {
                    @Override
                    public String table() {
                        return "other_rollup";
                    }

                    @Override
                    public int deleteBefore(DSLContext tx, Instant minutesBefore, Instant hoursBefore) {
                        seen.put(table(), new Instant[]{minutesBefore, hoursBefore});
                        return 3;
                    }
                }));
        StatsRollup.Report report = withStep.run();
        assertThat(report.deleted()).isEqualTo(2 + 3);
        var r = OUTBOX_ROLLUP;
        assertThat(dsl.select(r.RESOLUTION, r.BUCKET).from(r).where(r.SENT.gt(0L)).orderBy(r.RESOLUTION)
                .fetch(x -> x.value1() + " " + x.value2()))
                .containsExactly("hour 2030-12-28T11:00:00Z", "minute 2031-01-03T10:01:00Z");
        assertThat(seen.get("other_rollup")).containsExactly(Instant.parse("2031-01-03T10:00:20Z"), Instant.parse("2030-12-28T10:00:20Z"));
    }

    @Test
    void theWeekIsReadFromHourBucketsOnly_neverFromTheAttempts() {
        history();
        clock.advance(Duration.ofHours(1));
        StatsRollup.Report r;
        do {
            r = rollup(RollupConfig.builder().backfill(Duration.ofHours(4))).run();
        } while (!r.caughtUp());
        Instant to = Instant.parse("2031-01-05T11:00:00Z");
        var query = TopicRollup.query(pg.dsl(), Resolution.HOUR, to.minus(Duration.ofDays(7)), to, Duration.ofHours(1));
        String plan = pg.dsl().fetch("EXPLAIN " + pg.dsl().renderInlined(query)).stream().map(x -> x.get(0, String.class))
                .collect(Collectors.joining("\n"));
        assertThat(plan).contains("outbox_rollup").doesNotContain("outbox_attempt").doesNotContain("outbox_effect")
                .doesNotContain("outbox_message");
        List<TopicRollup.Bucket> week = TopicRollup.read(pg.dsl(), Resolution.HOUR, to.minus(Duration.ofDays(7)), to, Duration.ofHours(1));
        assertThat(week).extracting(b -> b.start() + " " + b.topic()).containsExactly("2031-01-05T08:00:00Z t.even",
                "2031-01-05T08:00:00Z t.odd", "2031-01-05T09:00:00Z t.even", "2031-01-05T09:00:00Z t.odd");
        assertThat(week.stream().mapToLong(b -> b.sent() + b.retried() + b.failed() + b.review() + b.other()).sum()).isEqualTo(1200);
        // a day in quarter hours, from the minute buckets: the same attempts
        List<TopicRollup.Bucket> day = TopicRollup.read(pg.dsl(), Resolution.MINUTE, to.minus(Duration.ofDays(1)), to, Duration.ofMinutes(15));
        assertThat(day).hasSize(16);
        assertThat(day.getFirst().start()).isEqualTo(Instant.parse("2031-01-05T08:00:00Z"));
        assertThat(day.stream().mapToLong(b -> b.sent() + b.retried() + b.failed() + b.review() + b.other()).sum()).isEqualTo(1200);
        assertThatThrownBy(() -> TopicRollup.query(pg.dsl(), Resolution.HOUR, to, to, Duration.ofMinutes(15)))
                .hasMessageContaining("step must be a positive multiple");
    }

    @Test
    void badSettingsAreRefusedByName() {
        assertThatThrownBy(() -> RollupConfig.builder().foldChunk(Duration.ofSeconds(90)).build()).hasMessageContaining("foldChunk");
        assertThatThrownBy(() -> RollupConfig.builder().minuteRetention(Duration.ofHours(24)).build())
                .hasMessageContaining("minuteRetention");
        assertThatThrownBy(() -> RollupConfig.builder().backfill(Duration.ofDays(30)).build()).hasMessageContaining("backfill");
        assertThatThrownBy(() -> RollupConfig.builder().settle(Duration.ofSeconds(-1)).build()).hasMessageContaining("settle");
        assertThat(RollupConfig.defaults().settle()).isEqualTo(Duration.ofSeconds(30));
    }
}
