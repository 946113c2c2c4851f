package io.mailroom.outbox.maintenance;

import io.mailroom.outbox.Fixtures;
import io.mailroom.outbox.MessageStatus;
import io.mailroom.outbox.MutableClock;
import io.mailroom.outbox.admin.MessageActions;
import io.mailroom.outbox.runtime.Dispatcher;
import io.mailroom.outbox.runtime.DispatcherConfig;
import io.mailroom.outbox.runtime.Outcome;
import io.mailroom.testing.PostgresExtension;
import org.jooq.DSLContext;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import static io.mailroom.db.jooq.Tables.AUDIT_LOG;
import static io.mailroom.db.jooq.Tables.OUTBOX_ATTEMPT;
import static io.mailroom.db.jooq.Tables.OUTBOX_EFFECT;
import static io.mailroom.db.jooq.Tables.OUTBOX_MESSAGE;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * Support history retention on an injected clock: only old, finished history goes, in bounded
 * batches; unfinished and review effects and their timelines stay; other owners' steps get the deleted
 * effects in the same transaction (their own retention is tested where the service wires them:
 * OwnerRetentionTest).
 * Rows are made in 2031, where no daily partition exists, so hot rows sit in the default partition.
 */
class HistoryCleanerTest {

    @RegisterExtension
    static final PostgresExtension pg = new PostgresExtension();

    private final MutableClock clock = MutableClock.at("2031-01-05T10:00:00Z");

    @BeforeEach
    void clean() {
        pg.dsl().execute("TRUNCATE outbox_message, outbox_effect, outbox_effect_term, outbox_attempt, audit_log");
    }

    @Test
    void onlyOldFinishedEffectsWhoseHotRowIsGoneAreDeletedWithTheirAttempts() {
        var actions = new MessageActions(pg.dataSource(), clock, 0, Duration.ofMillis(1));
        for (String key : List.of("old-done", "old-failed", "old-review", "old-pending", "old-done-hot")) {
            Fixtures.enqueueOne(pg.dsl(), clock, Fixtures.message(key));
        }
        Fixtures.enqueueOne(pg.dsl(), clock, Fixtures.message("old-cancelled").withAvailableAt(clock.instant().plusSeconds(3600)));
        assertThat(actions.cancel("old-cancelled", null)).isEqualTo(new MessageActions.Result.Applied(MessageStatus.CANCELLED));
        Dispatcher d = dispatcher();
        assertThat(d.runOnce()).isEqualTo(5);
        // the hot rows leave, as partition retention does after three days; one stays (a pinned partition)
        pg.dsl().deleteFrom(OUTBOX_MESSAGE)
                .where(OUTBOX_MESSAGE.IDEMPOTENCY_KEY.in("old-done", "old-failed", "old-review", "old-cancelled"))
                .execute();

        at("2031-03-01T10:00:00Z");
        Fixtures.enqueueOne(pg.dsl(), clock, Fixtures.message("recent-done"));
        assertThat(d.runOnce()).isEqualTo(1);

        at("2031-04-20T10:00:00Z"); // 90 days later: cutoff 2031-01-20
        var report = cleaner(RetentionConfig.builder()).cleanHistory();

        assertThat(effectKeys()).containsExactlyInAnyOrder("old-review", "old-pending", "old-done-hot", "recent-done");
        assertThat(report.effects()).isEqualTo(3);
        assertThat(attemptKeys()).containsExactlyInAnyOrder("old-review", "old-pending", "recent-done");
        assertThat(report.attempts()).isEqualTo(3);
        assertThat(report.complete()).isTrue();

        // a year later the review effect and the pending one (and their timelines) are still there
        pg.dsl().deleteFrom(OUTBOX_MESSAGE).where(OUTBOX_MESSAGE.IDEMPOTENCY_KEY.eq("recent-done")).execute();
        at("2032-04-20T10:00:00Z");
        cleaner(RetentionConfig.builder()).cleanHistory();
        assertThat(effectKeys()).containsExactlyInAnyOrder("old-review", "old-pending", "old-done-hot");
        assertThat(attemptKeys()).containsExactlyInAnyOrder("old-review", "old-pending");
    }

    @Test
    void aClosedEffectLeavesLikeOtherFinishedOnesAndAReviewOneStays() {
        var actions = new MessageActions(pg.dataSource(), clock, 0, Duration.ofMillis(1));
        Fixtures.enqueueOne(pg.dsl(), clock, Fixtures.message("old-failed"));
        Fixtures.enqueueOne(pg.dsl(), clock, Fixtures.message("old-review"));
        assertThat(dispatcher().runOnce()).isEqualTo(2);
        assertThat(actions.close("old-failed", (tx, from) -> { })).isEqualTo(new MessageActions.Result.Applied(MessageStatus.CLOSED));
        pg.dsl().deleteFrom(OUTBOX_MESSAGE).execute(); // partition retention, which drops closed rows like failed ones
        at("2031-04-20T10:00:00Z");
        var report = cleaner(RetentionConfig.builder()).cleanHistory();
        assertThat(effectKeys()).containsExactly("old-review");
        assertThat(attemptKeys()).containsExactly("old-review");
        assertThat(report.effects()).isEqualTo(1);
    }

    @Test
    void aRunDeletesInBatchesAndStopsAtItsBound() {
        pg.dsl().execute("""
                INSERT INTO outbox_attempt (idempotency_key, message_id, attempt, claim_version, worker, started_at,
                                            finished_at, outcome)
                SELECT 'gone-' || g, g, 1, 1, 'w1', timestamptz '2031-01-01T00:00:00Z', timestamptz '2031-01-01T00:00:01Z', 'done'
                FROM generate_series(1, 25) g
                """);
        at("2031-06-01T00:00:00Z");
        HistoryCleaner cleaner = cleaner(RetentionConfig.builder().historyBatchSize(10).historyMaxBatchesPerRun(2));

        var first = cleaner.cleanHistory();
        assertThat(first.attempts()).isEqualTo(20);
        assertThat(first.complete()).isFalse();
        assertThat(pg.dsl().fetchCount(OUTBOX_ATTEMPT)).isEqualTo(5);

        var second = cleaner.cleanHistory();
        assertThat(second.attempts()).isEqualTo(5);
        assertThat(second.complete()).isTrue();
        assertThat(pg.dsl().fetchCount(OUTBOX_ATTEMPT)).isZero();
    }

    @Test
    void theAuditLogFollowsItsOwnRetention() {
        audit(Instant.parse("2030-01-01T00:00:00Z"), "older-than-a-year");
        audit(Instant.parse("2031-01-01T00:00:00Z"), "older-than-the-history");
        audit(Instant.parse("2031-03-15T00:00:00Z"), "recent");

        at("2031-04-20T00:00:00Z");
        var report = cleaner(RetentionConfig.builder().auditRetention(Duration.ofDays(365))).cleanHistory();

        assertThat(pg.dsl().fetch(AUDIT_LOG).getValues(AUDIT_LOG.ACTION))
                .containsExactlyInAnyOrder("older-than-the-history", "recent");
        assertThat(report.auditEntries()).isEqualTo(1);
    }

    @Test
    void aStepGetsTheDeletedEffectsInTheirTransaction_andAFailingStepKeepsThem() {
        for (String key : List.of("old-done", "old-review")) {
            Fixtures.enqueueOne(pg.dsl(), clock, Fixtures.message(key));
        }
        assertThat(dispatcher().runOnce()).isEqualTo(2);
        pg.dsl().deleteFrom(OUTBOX_MESSAGE).execute(); // partition retention (after three days)
        at("2031-04-20T10:00:00Z");
        RetentionConfig config = RetentionConfig.builder().clock(clock).build();

        RetentionStep failing = new RecordingStep("failing") {
            @Override
            public int deleteWithEffects(DSLContext tx, List<DeletedEffect> effects, Instant cutoff) {
                throw new IllegalStateException("owner's statement failed");
            }
        };
        assertThatThrownBy(() -> new HistoryCleaner(pg.dataSource(), config, List.of(failing)).cleanHistory())
                .hasMessageContaining("owner's statement failed");
        assertThat(effectKeys()).as("the effect deletion rolled back with its owner's step")
                .containsExactlyInAnyOrder("old-done", "old-review");

        RecordingStep step = new RecordingStep("recording");
        var report = new HistoryCleaner(pg.dataSource(), config, List.of(step)).cleanHistory();
        assertThat(effectKeys()).containsExactly("old-review");
        assertThat(step.handed).extracting(RetentionStep.DeletedEffect::idempotencyKey).containsExactly("old-done");
        assertThat(step.handedBeforeCommit).as("gone in the step's transaction, still there for everyone else").isTrue();
        assertThat(report.deleted("recording")).isEqualTo(1);
        assertThat(step.ownPasses).isEqualTo(1);
    }

    @Test
    void twoStepsForOneTableAreRefused() {
        assertThatThrownBy(() -> new HistoryCleaner(pg.dataSource(), RetentionConfig.defaults(),
                List.of(new RecordingStep("t"), new RecordingStep("t"))))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("steps");
    }

    /** A step that remembers what it was handed and whether the effects were gone only in its transaction. */
    private static class RecordingStep implements RetentionStep {
        private final String table;
        final List<DeletedEffect> handed = new ArrayList<>();
        boolean handedBeforeCommit;
        int ownPasses;

        RecordingStep(String table) {
            this.table = table;
        }

        @Override
        public String table() {
            return table;
        }

        @Override
        public int deleteWithEffects(DSLContext tx, List<DeletedEffect> effects, Instant cutoff) {
            handed.addAll(effects);
            List<String> keys = effects.stream().map(DeletedEffect::idempotencyKey).toList();
            handedBeforeCommit = tx.fetchCount(OUTBOX_EFFECT, OUTBOX_EFFECT.IDEMPOTENCY_KEY.in(keys)) == 0
                    && pg.dsl().fetchCount(OUTBOX_EFFECT, OUTBOX_EFFECT.IDEMPOTENCY_KEY.in(keys)) == keys.size();
            return effects.size();
        }

        @Override
        public int deleteOld(DSLContext tx, Instant cutoff, int limit) {
            ownPasses++;
            return 0;
        }
    }

    // ----------------------------------------------------------------------------------- helpers

    private HistoryCleaner cleaner(RetentionConfig.Builder config) {
        return new HistoryCleaner(pg.dataSource(), config.clock(clock).build());
    }

    /** Sends by key: done, failed, review, or a retry a year away (stays pending). */
    private Dispatcher dispatcher() {
        DispatcherConfig config = DispatcherConfig.builder().workerId("w1").batchSize(10)
                .listenForNotifications(false).clock(clock).build();
        return new Dispatcher(pg.dataSource(), config, Map.of(Fixtures.TOPIC, (msg, ctx) -> switch (msg.idempotencyKey()) {
            case "old-failed" -> Outcome.failed("550 no such mailbox");
            case "old-review" -> Outcome.review("connection dropped after DATA");
            case "old-pending" -> Outcome.retryLater("421 try later", Duration.ofDays(400));
            default -> Outcome.done();
        }));
    }

    private void at(String iso) {
        clock.advance(Duration.between(clock.instant(), Instant.parse(iso)));
    }

    private static List<String> effectKeys() {
        return pg.dsl().fetch(OUTBOX_EFFECT).getValues(OUTBOX_EFFECT.IDEMPOTENCY_KEY);
    }

    private static List<String> attemptKeys() {
        return pg.dsl().fetch(OUTBOX_ATTEMPT).getValues(OUTBOX_ATTEMPT.IDEMPOTENCY_KEY);
    }

    private static void audit(Instant at, String action) {
        var a = AUDIT_LOG;
        pg.dsl().insertInto(a, a.AT, a.ACTOR, a.ROLE, a.ACTION).values(at, "alice", "support", action).execute();
    }

    @Test
    void oldEffectsAreFoundThroughTheTimeIndexNotByReadingTheHistory() {
        // 30,000 finished effects over 300 days, enough for the planner to care
        pg.dsl().execute("""
                INSERT INTO outbox_effect (idempotency_key, topic, aggregate_type, aggregate_id, message_id,
                                           message_created_at, status, attempts, max_attempts, created_at, updated_at, finished_at)
                SELECT 'old-' || g, 'email.receipt', 'order', g::text, g, t, 'done', 1, 10, t, t, t
                FROM generate_series(1, 30000) g, LATERAL (SELECT timestamptz '2030-03-01' + g * interval '15 minutes' AS t) x
                """);
        pg.dsl().execute("ANALYZE outbox_effect");
        String plan = pg.dsl().fetch("EXPLAIN " + pg.dsl().renderInlined(
                        RetentionStore.deletableEffects(pg.dsl(), Instant.parse("2030-06-01T00:00:00Z"), 500)))
                .stream().map(r -> r.get(0, String.class)).collect(java.util.stream.Collectors.joining("\n"));
        assertThat(plan).contains("outbox_effect_created_idx").doesNotContain("Seq Scan on outbox_effect");
        int deleted = pg.dsl().transactionResult(cfg ->
                new RetentionStore(io.mailroom.db.sql.SqlClock.database()).deleteEffects(cfg.dsl(), Instant.parse("2030-06-01T00:00:00Z"), 500).size());
        assertThat(deleted).isEqualTo(500);
    }
}
