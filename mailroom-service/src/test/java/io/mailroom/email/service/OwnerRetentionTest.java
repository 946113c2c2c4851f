package io.mailroom.email.service;

import io.mailroom.outbox.maintenance.HistoryCleaner;
import io.mailroom.outbox.maintenance.RetentionConfig;
import io.mailroom.testing.PostgresExtension;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.List;

import static io.mailroom.db.jooq.Tables.DELIVERY_EVENT;
import static io.mailroom.db.jooq.Tables.EMAIL_ATTACHMENT_CONTENT;
import static io.mailroom.db.jooq.Tables.EMAIL_ATTACHMENT_REF;
import static io.mailroom.db.jooq.Tables.DELIVERY_STATE;
import static io.mailroom.db.jooq.Tables.EMAIL_RENDERING;
import static io.mailroom.db.jooq.Tables.IDEMPOTENCY_RECORD;
import static io.mailroom.db.jooq.Tables.OUTBOX_EFFECT;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * Retention of the tables outbox-core does not own, through their owners' steps as the service wires
 * them ({@link RetentionSchedule#ownerSteps()}): renderings and delivery events leave in the run (and
 * the transaction) that deletes their effect and stay while it is kept, orphans leave by age, settled
 * idempotency records by age. Effects are written as history whose hot rows partition retention
 * already dropped; the cutoff is 90 days before 2031-04-20.
 */
class OwnerRetentionTest {

    @RegisterExtension
    static final PostgresExtension pg = new PostgresExtension();

    private static final Instant OLD = Instant.parse("2031-01-05T10:00:00Z");
    private static final Instant NOW = Instant.parse("2031-04-20T10:00:00Z");

    @BeforeEach
    void clean() {
        pg.dsl().execute("TRUNCATE outbox_effect, outbox_effect_term, idempotency_record, email_rendering, delivery_event, delivery_state,"
                + " delivery_recipient_state, email_attachment_ref, email_attachment_content");
    }

    @Test
    void aRenderingLeavesInTheRunOfItsEffectAndStaysWhileItsEffectIsHeld() {
        effect("old-done", 1, "done", OLD);
        effect("old-review", 2, "review", OLD);
        Instant young = NOW.minus(Duration.ofDays(10));
        effect("young-done", 3, "done", young);
        rendering("old-done", 1, OLD, OLD);
        rendering("old-review", 2, OLD, OLD);
        rendering("young-done", 3, young, OLD); // rendered long ago (a clock step), its effect is young
        rendering("reused", 999_999, OLD, OLD); // a key used again after its first effect left
        effect("reused", 4, "pending", OLD);

        var early = cleaner(OLD.plus(Duration.ofDays(10))).cleanHistory();
        assertThat(early.deleted("email_rendering")).isZero();

        var report = cleaner(NOW).cleanHistory();
        assertThat(effectKeys()).containsExactlyInAnyOrder("old-review", "young-done", "reused");
        assertThat(renderingKeys()).as("gone with its effect; kept while the effect is kept, whatever its age")
                .containsExactlyInAnyOrder("old-review", "young-done");
        assertThat(report.deleted("email_rendering")).isEqualTo(2);
        assertThat(report.complete()).isTrue();

        // a year on, the review effect is still undecided: its rendering stays with it
        cleaner(NOW.plus(Duration.ofDays(365))).cleanHistory();
        assertThat(renderingKeys()).contains("old-review");
    }

    @Test
    void deliveryEventsStayWithTheirEmail_andOrphansLeaveByAge() {
        effect("old-done", 1, "done", OLD);
        effect("old-review", 2, "review", OLD);
        deliveryEvent("wh-1", "old-done", OLD);
        deliveryEvent("wh-2", "old-review", OLD);
        deliveryEvent("wh-3", null, OLD);
        deliveryEvent("wh-4", null, Instant.parse("2031-02-01T10:00:00Z"));
        deliveryEvent("wh-5", "gone-long-ago", OLD);
        deliveryState("old-done", NOW.minus(Duration.ofDays(1))); // a late report: the state still leaves with its effect
        deliveryState("old-review", OLD);
        deliveryState("gone-long-ago", OLD);

        var report = cleaner(NOW).cleanHistory();

        assertThat(effectKeys()).containsExactly("old-review");
        assertThat(pg.dsl().fetch(DELIVERY_EVENT).getValues(DELIVERY_EVENT.DELIVERY_ID))
                .as("the review email keeps its bounce; old orphans and the finished email's events go")
                .containsExactlyInAnyOrder("wh-2", "wh-4");
        assertThat(report.deleted("delivery_event")).isEqualTo(3);
        assertThat(pg.dsl().fetch(DELIVERY_STATE).getValues(DELIVERY_STATE.IDEMPOTENCY_KEY))
                .as("a delivery state leaves with its effect, an old one of no effect by age")
                .containsExactly("old-review");
        assertThat(report.deleted("delivery_state")).isEqualTo(2);
        assertThat(report.complete()).isTrue();
    }

    @Test
    void settledIdempotencyRecordsFollowTheHistoryRetention() {
        Instant recent = Instant.parse("2031-03-15T00:00:00Z");
        record(OLD, "old-succeeded", "succeeded");
        record(OLD, "old-failed", "failed");
        record(OLD, "old-reserved", "reserved");
        record(OLD, "old-ambiguous", "ambiguous");
        record(recent, "recent-succeeded", "succeeded");

        var report = cleaner(NOW).cleanHistory();

        assertThat(pg.dsl().fetch(IDEMPOTENCY_RECORD).getValues(IDEMPOTENCY_RECORD.EFFECT_KEY))
                .containsExactlyInAnyOrder("old-reserved", "old-ambiguous", "recent-succeeded");
        assertThat(report.deleted("idempotency_record")).isEqualTo(2);
    }

    @Test
    void attachmentRefsLeaveWithTheirEffect_andContentNoEmailRefersToLeavesAfterItsGracePeriod() {
        effect("old-done", 1, "done", OLD);
        effect("old-review", 2, "review", OLD);
        Instant longUnused = Instant.now().minus(Duration.ofHours(2)); // content's grace runs on the real clock
        content("a".repeat(64), longUnused);
        content("b".repeat(64), longUnused);
        content("c".repeat(64), Instant.now()); // its email's refs are gone, but it was used a moment ago
        ref("old-done", 0, "a".repeat(64));
        ref("old-done", 1, "b".repeat(64));
        ref("old-review", 0, "b".repeat(64)); // shared with the email still in review

        var report = cleaner(NOW).cleanHistory();

        assertThat(effectKeys()).containsExactly("old-review");
        assertThat(pg.dsl().fetch(EMAIL_ATTACHMENT_REF).getValues(EMAIL_ATTACHMENT_REF.IDEMPOTENCY_KEY)).containsExactly("old-review");
        assertThat(pg.dsl().fetch(EMAIL_ATTACHMENT_CONTENT).getValues(EMAIL_ATTACHMENT_CONTENT.SHA256))
                .as("the review email's content stays, the fresh one waits out its grace, the old unreferenced one goes")
                .containsExactlyInAnyOrder("b".repeat(64), "c".repeat(64));
        assertThat(report.deleted("email_attachment_content")).isEqualTo(3); // 2 refs with the effect, 1 content row
        assertThat(report.complete()).isTrue();
    }

    // ----------------------------------------------------------------------------------- helpers

    private static void content(String sha256, Instant lastUsed) {
        var c = EMAIL_ATTACHMENT_CONTENT;
        pg.dsl().insertInto(c, c.SHA256, c.CONTENT, c.SIZE, c.CREATED_AT, c.LAST_USED_AT)
                .values(sha256, new byte[]{1, 2, 3}, 3, lastUsed, lastUsed).execute();
    }

    private static void ref(String key, int position, String sha256) {
        var r = EMAIL_ATTACHMENT_REF;
        pg.dsl().insertInto(r, r.IDEMPOTENCY_KEY, r.POSITION, r.SHA256, r.FILENAME, r.CONTENT_TYPE)
                .values(key, (short) position, sha256, "f.pdf", "application/pdf").execute();
    }

    private static HistoryCleaner cleaner(Instant now) {
        return new HistoryCleaner(pg.dataSource(), RetentionConfig.builder().clock(Clock.fixed(now, ZoneOffset.UTC)).build(),
                RetentionSchedule.ownerSteps());
    }

    private static List<String> effectKeys() {
        return pg.dsl().fetch(OUTBOX_EFFECT).getValues(OUTBOX_EFFECT.IDEMPOTENCY_KEY);
    }

    private static List<String> renderingKeys() {
        return pg.dsl().fetch(EMAIL_RENDERING).getValues(EMAIL_RENDERING.IDEMPOTENCY_KEY);
    }

    /** An effect whose hot row is gone, finished (unless pending or review) at {@code at}. */
    private static void effect(String key, long messageId, String status, Instant at) {
        var e = OUTBOX_EFFECT;
        pg.dsl().insertInto(e, e.IDEMPOTENCY_KEY, e.TOPIC, e.AGGREGATE_TYPE, e.AGGREGATE_ID, e.MESSAGE_ID, e.MESSAGE_CREATED_AT,
                        e.STATUS, e.MAX_ATTEMPTS, e.CREATED_AT, e.UPDATED_AT, e.FINISHED_AT)
                .values(key, "email.test", "order", key, messageId, at, status, 5, at, at,
                        status.equals("pending") || status.equals("review") ? null : at)
                .execute();
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

    private static void deliveryState(String key, Instant at) {
        var s = DELIVERY_STATE;
        pg.dsl().insertInto(s, s.IDEMPOTENCY_KEY, s.STATE, s.DETAIL, s.UPDATED_AT).values(key, "bounced", "hard bounce", at).execute();
    }

    private static void record(Instant at, String key, String state) {
        var r = IDEMPOTENCY_RECORD;
        pg.dsl().insertInto(r, r.EFFECT_KEY, r.FINGERPRINT, r.STATE, r.FIRST_RESERVED_AT, r.RESERVED_AT, r.UPDATED_AT)
                .values(key, "fp", state, at, at, at).execute();
    }
}
