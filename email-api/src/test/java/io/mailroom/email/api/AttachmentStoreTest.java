package io.mailroom.email.api;

import io.mailroom.outbox.OutboxEnqueuer;
import io.mailroom.testing.PostgresExtension;
import org.jooq.DSLContext;
import org.jooq.impl.DSL;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.List;
import java.util.Map;

import static io.mailroom.db.jooq.Tables.EMAIL_ATTACHMENT_CONTENT;
import static io.mailroom.db.jooq.Tables.EMAIL_ATTACHMENT_REF;
import static io.mailroom.db.jooq.Tables.OUTBOX_EFFECT;
import static io.mailroom.db.jooq.Tables.OUTBOX_MESSAGE;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** Attachment content stored once per hash, refs per email, and the retention of content nobody refers to. */
class AttachmentStoreTest {

    @RegisterExtension
    static final PostgresExtension pg = new PostgresExtension();

    private final EmailOutbox outbox = new EmailOutbox(new OutboxEnqueuer());

    private static final byte[] LOGO = "\u0089PNG logo bytes".getBytes(StandardCharsets.ISO_8859_1);

    private static byte[] invoice(String n) {
        return ("%PDF-1.4 invoice " + n).getBytes(StandardCharsets.US_ASCII);
    }

    private static OutgoingEmail email(String key, String invoiceNo) {
        return OutgoingEmail.template("invoice").to("an@example.com", null).about("order", invoiceNo).idempotencyKey(key)
                .data(Map.of()).attach("Hóa đơn " + invoiceNo + ".pdf", "application/pdf", invoice(invoiceNo))
                .inline("logo", "logo.png", "image/png", LOGO).build();
    }

    private long contentRows(byte[] bytes) {
        return pg.dsl().fetchCount(EMAIL_ATTACHMENT_CONTENT, EMAIL_ATTACHMENT_CONTENT.SHA256.eq(Attachment.sha256(bytes)));
    }

    private List<String> refs(String key) {
        return pg.dsl().select(EMAIL_ATTACHMENT_REF.SHA256).from(EMAIL_ATTACHMENT_REF)
                .where(EMAIL_ATTACHMENT_REF.IDEMPOTENCY_KEY.eq(key)).orderBy(EMAIL_ATTACHMENT_REF.POSITION).fetch(EMAIL_ATTACHMENT_REF.SHA256);
    }

    private void ageContent(byte[] bytes, Instant lastUsed) {
        pg.dsl().update(EMAIL_ATTACHMENT_CONTENT).set(EMAIL_ATTACHMENT_CONTENT.LAST_USED_AT, lastUsed)
                .where(EMAIL_ATTACHMENT_CONTENT.SHA256.eq(Attachment.sha256(bytes))).execute();
    }

    /** Drops an effect the way the history cleaner does (its queue row first), handing it to the step. */
    private void dropEffect(String key) {
        pg.dsl().transaction(cfg -> {
            var e = cfg.dsl().selectFrom(OUTBOX_EFFECT).where(OUTBOX_EFFECT.IDEMPOTENCY_KEY.eq(key)).fetchSingle();
            cfg.dsl().deleteFrom(OUTBOX_MESSAGE).where(OUTBOX_MESSAGE.IDEMPOTENCY_KEY.eq(key)).execute();
            cfg.dsl().deleteFrom(OUTBOX_EFFECT).where(OUTBOX_EFFECT.IDEMPOTENCY_KEY.eq(key)).execute();
            new AttachmentRetention().deleteWithEffects(cfg.dsl(), List.of(new io.mailroom.outbox.maintenance.RetentionStep.DeletedEffect(
                    key, e.getMessageId(), e.getMessageCreatedAt())), Instant.now());
        });
    }

    @Test
    void theOwnPassTakesRefsWhoseEffectIsGoneOtherwise() {
        pg.dsl().transaction(cfg -> outbox.enqueue(cfg.dsl(), email("att-orphan", "601")));
        pg.dsl().deleteFrom(OUTBOX_MESSAGE).where(OUTBOX_MESSAGE.IDEMPOTENCY_KEY.eq("att-orphan")).execute();
        pg.dsl().deleteFrom(OUTBOX_EFFECT).where(OUTBOX_EFFECT.IDEMPOTENCY_KEY.eq("att-orphan")).execute();
        assertThat(refs("att-orphan")).hasSize(2);
        pg.dsl().transaction(cfg -> new AttachmentRetention().deleteOld(cfg.dsl(), Instant.now(), 100));
        assertThat(refs("att-orphan")).isEmpty();
        assertThat(contentRows(invoice("601"))).as("used within the grace period").isEqualTo(1);
    }

    @Test
    void anErasureRemovesTheRefsOfTheErasedEmails() {
        pg.dsl().transaction(cfg -> outbox.enqueue(cfg.dsl(), email("att-erased", "701")));
        int erased = pg.dsl().transactionResult(cfg -> AttachmentStore.erase(cfg.dsl(), List.of("att-erased")));
        assertThat(erased).isEqualTo(2);
        assertThat(refs("att-erased")).isEmpty();
        assertThat(AttachmentReads.of(pg.dsl(), List.of("att-erased"))).isEmpty();
    }

    @Test
    void contentIsStoredOncePerHashAndEachEmailRefersToItInOrder() {
        pg.dsl().transaction(cfg -> outbox.enqueue(cfg.dsl(), email("att-once-1", "101")));
        pg.dsl().transaction(cfg -> outbox.enqueue(cfg.dsl(), email("att-once-2", "102")));

        assertThat(contentRows(LOGO)).isEqualTo(1);
        assertThat(contentRows(invoice("101"))).isEqualTo(1);
        assertThat(refs("att-once-1")).containsExactly(Attachment.sha256(invoice("101")), Attachment.sha256(LOGO));
        assertThat(refs("att-once-2")).containsExactly(Attachment.sha256(invoice("102")), Attachment.sha256(LOGO));
        assertThat(AttachmentReads.content(pg.dsl(), List.of(Attachment.sha256(LOGO), "0".repeat(64))))
                .containsOnlyKeys(Attachment.sha256(LOGO));
        assertThat(AttachmentReads.content(pg.dsl(), List.of(Attachment.sha256(LOGO))).get(Attachment.sha256(LOGO))).isEqualTo(LOGO);
        var listed = AttachmentReads.of(pg.dsl(), List.of("att-once-1")).get("att-once-1");
        assertThat(listed).extracting(AttachmentReads.Listed::filename).containsExactly("Hóa đơn 101.pdf", "logo.png");
        assertThat(listed.get(1).inline()).isTrue();
        assertThat(listed.get(0).size()).isEqualTo(invoice("101").length);
    }

    @Test
    void aRolledBackEnqueueLeavesNeitherContentNorRefs() {
        byte[] pdf = invoice("rollback");
        assertThatThrownBy(() -> pg.dsl().transaction(cfg -> {
            outbox.enqueue(cfg.dsl(), OutgoingEmail.template("invoice").to("an@example.com", null).about("order", "9").idempotencyKey("att-rollback")
                    .attach("x.pdf", "application/pdf", pdf).build());
            throw new IllegalStateException("business failure");
        })).hasMessageContaining("business failure");
        assertThat(contentRows(pdf)).isZero();
        assertThat(refs("att-rollback")).isEmpty();
    }

    @Test
    void aResendRefersToTheSameContentWithoutCopyingIt() {
        pg.dsl().transaction(cfg -> outbox.enqueue(cfg.dsl(), email("att-resent", "201")));
        pg.dsl().transaction(cfg -> {
            new OutboxEnqueuer().enqueue(cfg.dsl(), io.mailroom.outbox.NewMessage.of("email.invoice", "order", "201",
                    "att-resent-resend-1", "{}"));
            assertThat(AttachmentStore.copyRefs(cfg.dsl(), "att-resent", "att-resent-resend-1")).isEqualTo(2);
        });
        assertThat(refs("att-resent-resend-1")).isEqualTo(refs("att-resent"));
        assertThat(contentRows(invoice("201"))).isEqualTo(1);
    }

    @Test
    void contentWhoseRefsAreGoneIsDeletedAfterTheGracePeriod_referredOrRecentContentStays() {
        pg.dsl().transaction(cfg -> outbox.enqueue(cfg.dsl(), email("att-gc-1", "301")));
        pg.dsl().transaction(cfg -> outbox.enqueue(cfg.dsl(), email("att-gc-2", "302")));
        Instant now = pg.dsl().select(DSL.currentOffsetDateTime()).fetchSingle().value1().toInstant();
        Instant longAgo = now.minus(2, ChronoUnit.DAYS);
        ageContent(invoice("301"), longAgo);
        ageContent(invoice("302"), longAgo);
        ageContent(LOGO, longAgo);

        dropEffect("att-gc-1");
        assertThat(refs("att-gc-1")).as("refs leave with their effect").isEmpty();
        assertThat(refs("att-gc-2")).hasSize(2);
        dropEffect("att-gc-2");
        // the second invoice's refs are gone too, but its content was used within the grace period
        ageContent(invoice("302"), now.minus(10, ChronoUnit.MINUTES));
        pg.dsl().transaction(cfg -> outbox.enqueue(cfg.dsl(), OutgoingEmail.template("invoice").to("an@example.com", null).about("order", "9")
                .idempotencyKey("att-gc-3").inline("logo", "logo.png", "image/png", LOGO).build()));
        ageContent(LOGO, longAgo); // referred to by att-gc-3: stays whatever its age

        int deleted = pg.dsl().transactionResult(cfg -> AttachmentRetention.deleteUnreferenced(cfg.dsl(), now.minus(1, ChronoUnit.HOURS), 100));

        assertThat(deleted).isEqualTo(1);
        assertThat(contentRows(invoice("301"))).isZero();
        assertThat(contentRows(invoice("302"))).isEqualTo(1);
        assertThat(contentRows(LOGO)).isEqualTo(1);
    }

    @Test
    void theRetentionSkipsContentThatAnUncommittedEnqueueRefersTo() throws Exception {
        byte[] pdf = invoice("401");
        pg.dsl().transaction(cfg -> outbox.enqueue(cfg.dsl(), OutgoingEmail.template("invoice").to("an@example.com", null).about("order", "9")
                .idempotencyKey("att-race-1").attach("a.pdf", "application/pdf", pdf).build()));
        dropEffect("att-race-1");
        ageContent(pdf, Instant.now().minus(2, ChronoUnit.DAYS));

        try (Connection c = pg.newConnection()) {
            c.setAutoCommit(false);
            DSLContext open = DSL.using(c, org.jooq.SQLDialect.POSTGRES);
            outbox.enqueue(open, OutgoingEmail.template("invoice").to("an@example.com", null).about("order", "9")
                    .idempotencyKey("att-race-2").attach("b.pdf", "application/pdf", pdf).build());
            // the enqueue holds the content row; a retention run far in the future still skips it
            pg.dsl().transactionResult(cfg -> AttachmentRetention.deleteUnreferenced(cfg.dsl(),
                    Instant.now().plus(1, ChronoUnit.DAYS), 100));
            assertThat(contentRows(pdf)).isEqualTo(1);
            c.commit();
        }
        pg.dsl().transactionResult(cfg -> AttachmentRetention.deleteUnreferenced(cfg.dsl(), Instant.now().plus(1, ChronoUnit.DAYS), 100));
        assertThat(contentRows(pdf)).isEqualTo(1);
        assertThat(refs("att-race-2")).containsExactly(Attachment.sha256(pdf));
    }

    @Test
    void theRetentionStepUsesItsOwnGraceNotTheHistoryCutoff() {
        assertThat(new AttachmentRetention().table()).isEqualTo("email_attachment_content");
        assertThatThrownBy(() -> new AttachmentRetention(java.time.Duration.ofSeconds(5), java.time.Clock.systemUTC()))
                .hasMessageStartingWith("grace must be at least 1 minute");
        byte[] pdf = invoice("501");
        pg.dsl().transaction(cfg -> outbox.enqueue(cfg.dsl(), OutgoingEmail.template("invoice").to("an@example.com", null).about("order", "9")
                .idempotencyKey("att-step-1").attach("a.pdf", "application/pdf", pdf).build()));
        dropEffect("att-step-1");
        java.time.Clock later = java.time.Clock.fixed(Instant.now().plus(2, ChronoUnit.HOURS), java.time.ZoneOffset.UTC);
        // a history cutoff 90 days back does not keep it: an hour's grace after its last use does not either
        int n = pg.dsl().transactionResult(cfg -> new AttachmentRetention(java.time.Duration.ofHours(1), later)
                .deleteOld(cfg.dsl(), Instant.now().minus(90, ChronoUnit.DAYS), 100));
        assertThat(n).isGreaterThanOrEqualTo(1);
        assertThat(contentRows(pdf)).isZero();
    }
}
