package io.mailroom.outbox.maintenance;

import io.mailroom.outbox.EnqueuedMessage;
import io.mailroom.outbox.Fixtures;
import io.mailroom.outbox.MessageStatus;
import io.mailroom.outbox.MutableClock;
import io.mailroom.outbox.admin.MessageActions;
import io.mailroom.outbox.runtime.Dispatcher;
import io.mailroom.outbox.runtime.DispatcherConfig;
import io.mailroom.outbox.runtime.Outcome;
import io.mailroom.testing.PostgresExtension;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;

import static io.mailroom.db.jooq.Tables.AUDIT_LOG;
import static io.mailroom.db.jooq.Tables.DELIVERY_EVENT;
import static io.mailroom.db.jooq.Tables.EMAIL_RENDERING;
import static io.mailroom.db.jooq.Tables.IDEMPOTENCY_RECORD;
import static io.mailroom.db.jooq.Tables.OUTBOX_ATTEMPT;
import static io.mailroom.db.jooq.Tables.OUTBOX_EFFECT;
import static io.mailroom.db.jooq.Tables.OUTBOX_MESSAGE;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * Support history retention on an injected clock: only old, finished history goes, in bounded
 * batches; unfinished and review effects, their timelines and unsettled idempotency records stay.
 * Rows are made in 2031, where no daily partition exists, so hot rows sit in the default partition.
 */
class HistoryCleanerTest {

    @RegisterExtension
    static final PostgresExtension pg = new PostgresExtension();

    private final MutableClock clock = MutableClock.at("2031-01-05T10:00:00Z");

    @BeforeEach
    void clean() {
        pg.dsl().execute("TRUNCATE outbox_message, outbox_effect, outbox_attempt, idempotency_record, audit_log, email_rendering, delivery_event");
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
    void aRenderingOutlivesItsHotRowAndLeavesWithItsEffect() {
        for (String key : List.of("old-done", "old-review")) {
            EnqueuedMessage m = Fixtures.enqueueOne(pg.dsl(), clock, Fixtures.message(key));
            rendering(key, m.id(), m.createdAt(), clock.instant());
        }
        assertThat(dispatcher().runOnce()).isEqualTo(2);
        // a key used again after its first effect left: the old rendering names a message no effect has
        rendering("reused", 999_999, clock.instant(), clock.instant());
        pg.dsl().deleteFrom(OUTBOX_MESSAGE).execute(); // partition retention (after three days)

        at("2031-01-10T10:00:00Z");
        var early = cleaner(RetentionConfig.builder()).cleanHistory();
        assertThat(renderingKeys()).as("support still sees what was sent after the hot rows left")
                .containsExactlyInAnyOrder("old-done", "old-review", "reused");
        assertThat(early.renderings()).isZero();

        at("2031-04-20T10:00:00Z");
        var report = cleaner(RetentionConfig.builder()).cleanHistory();
        assertThat(effectKeys()).containsExactly("old-review");
        assertThat(renderingKeys()).as("gone in the same run as their effects; the review one stays with its effect")
                .containsExactly("old-review");
        assertThat(report.renderings()).isEqualTo(2);
        assertThat(report.complete()).isTrue();
    }

    @Test
    void deliveryEventsStayWithTheirEmail_andOrphansLeaveByAge() {
        for (String key : List.of("old-done", "old-review")) {
            Fixtures.enqueueOne(pg.dsl(), clock, Fixtures.message(key));
        }
        assertThat(dispatcher().runOnce()).isEqualTo(2);
        deliveryEvent("wh-1", "old-done", clock.instant());
        deliveryEvent("wh-2", "old-review", clock.instant());
        deliveryEvent("wh-3", null, clock.instant());
        pg.dsl().deleteFrom(OUTBOX_MESSAGE).execute(); // partition retention (after three days)

        at("2031-02-01T10:00:00Z");
        deliveryEvent("wh-4", null, clock.instant());
        assertThat(cleaner(RetentionConfig.builder()).cleanHistory().deliveryEvents()).isZero();

        at("2031-04-20T10:00:00Z"); // cutoff 2031-01-20: wh-4 is younger than that
        var report = cleaner(RetentionConfig.builder()).cleanHistory();

        assertThat(effectKeys()).containsExactly("old-review");
        assertThat(pg.dsl().fetch(DELIVERY_EVENT).getValues(DELIVERY_EVENT.DELIVERY_ID))
                .as("the review email keeps its bounce; the old orphan and the finished email's events go")
                .containsExactlyInAnyOrder("wh-2", "wh-4");
        assertThat(report.deliveryEvents()).isEqualTo(2);
        assertThat(report.complete()).isTrue();
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
    void settledIdempotencyRecordsAndTheAuditLogFollowTheirOwnRetention() {
        Instant old = Instant.parse("2031-01-01T00:00:00Z");
        Instant recent = Instant.parse("2031-03-15T00:00:00Z");
        record(old, "old-succeeded", "succeeded");
        record(old, "old-failed", "failed");
        record(old, "old-reserved", "reserved");
        record(old, "old-ambiguous", "ambiguous");
        record(recent, "recent-succeeded", "succeeded");
        audit(Instant.parse("2030-01-01T00:00:00Z"), "older-than-a-year");
        audit(old, "older-than-the-history");
        audit(recent, "recent");

        at("2031-04-20T00:00:00Z");
        var report = cleaner(RetentionConfig.builder().auditRetention(Duration.ofDays(365))).cleanHistory();

        assertThat(pg.dsl().fetch(IDEMPOTENCY_RECORD).getValues(IDEMPOTENCY_RECORD.EFFECT_KEY))
                .containsExactlyInAnyOrder("old-reserved", "old-ambiguous", "recent-succeeded");
        assertThat(report.idempotencyRecords()).isEqualTo(2);
        assertThat(pg.dsl().fetch(AUDIT_LOG).getValues(AUDIT_LOG.ACTION))
                .containsExactlyInAnyOrder("older-than-the-history", "recent");
        assertThat(report.auditEntries()).isEqualTo(1);
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

    private static List<String> renderingKeys() {
        return pg.dsl().fetch(EMAIL_RENDERING).getValues(EMAIL_RENDERING.IDEMPOTENCY_KEY);
    }

    private static void rendering(String key, long messageId, Instant messageCreatedAt, Instant at) {
        var r = EMAIL_RENDERING;
        pg.dsl().insertInto(r, r.IDEMPOTENCY_KEY, r.MESSAGE_ID, r.MESSAGE_CREATED_AT, r.ATTEMPT, r.TEMPLATE_VERSION,
                r.SUBJECT, r.TEXT_PART, r.HTML_PART, r.RENDERED_AT)
                .values(key, messageId, messageCreatedAt, 1, "t@1", "Subject", "text", "<p>html</p>", at).execute();
    }

    private static void deliveryEvent(String deliveryId, String key, Instant at) {
        var d = DELIVERY_EVENT;
        pg.dsl().insertInto(d, d.SOURCE, d.DELIVERY_ID, d.RECEIVED_AT, d.KIND, d.BOUNCE_TYPE, d.PROVIDER_EVENT, d.IDEMPOTENCY_KEY)
                .values("neutral", deliveryId, at, "bounced", "hard", "bounced", key).execute();
    }

    private static void record(Instant at, String key, String state) {
        var r = IDEMPOTENCY_RECORD;
        pg.dsl().insertInto(r, r.EFFECT_KEY, r.FINGERPRINT, r.STATE, r.FIRST_RESERVED_AT, r.RESERVED_AT, r.UPDATED_AT)
                .values(key, "fp", state, at, at, at).execute();
    }

    private static void audit(Instant at, String action) {
        var a = AUDIT_LOG;
        pg.dsl().insertInto(a, a.AT, a.ACTOR, a.ROLE, a.ACTION).values(at, "alice", "support", action).execute();
    }
}
