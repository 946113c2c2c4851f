package io.mailroom.email.api;

import io.mailroom.outbox.OutboxEnqueuer;
import io.mailroom.testing.PostgresExtension;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.Base64;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * {@code enqueue_email}'s attachments share content with the Java API's and keep the invariant
 * {@link AttachmentStore} keeps: content that an uncommitted enqueue refers to is locked by its upsert
 * (and its last use moved to now), so the retention ({@code FOR UPDATE SKIP LOCKED}) never deletes it.
 */
class EnqueueEmailAttachmentsTest {

    @RegisterExtension
    static final PostgresExtension pg = new PostgresExtension();

    private static final String CALL = "SELECT enqueue_email(template => 'invoice', to_address => 'an@example.com',"
            + " idempotency_key => ?, about_type => 'order', about_id => '9', attachments => ?::json)";

    @Test
    void anUncommittedSqlEnqueueHoldsContentTheJavaApiStored_theRetentionSkipsIt() throws Exception {
        byte[] pdf = "%PDF-1.4\n% shared by Java and SQL\n%%EOF".getBytes(StandardCharsets.UTF_8);
        String sha = Attachment.sha256(pdf);
        pg.dsl().transaction(cfg -> new EmailOutbox(new OutboxEnqueuer()).enqueue(cfg.dsl(), OutgoingEmail.template("invoice")
                .to("an@example.com", null).about("order", "9").idempotencyKey("sql-att-1").attach("a.pdf", "application/pdf", pdf)
                .build()));
        // the first email's refs are gone and its content unused for two days: retention's to take
        pg.dsl().execute("DELETE FROM email_attachment_ref WHERE idempotency_key = 'sql-att-1'");
        pg.dsl().execute("UPDATE email_attachment_content SET last_used_at = now() - interval '2 days' WHERE sha256 = ?", sha);

        try (Connection c = pg.newConnection()) {
            c.setAutoCommit(false);
            try (PreparedStatement ps = c.prepareStatement(CALL)) {
                ps.setString(1, "sql-att-2");
                ps.setString(2, "[{\"filename\":\"b.pdf\",\"contentType\":\"application/pdf\",\"content\":\""
                        + Base64.getEncoder().encodeToString(pdf) + "\"}]");
                ps.executeQuery().close();
            }
            int deleted = pg.dsl().transactionResult(cfg -> AttachmentRetention.deleteUnreferenced(cfg.dsl(),
                    Instant.now().plus(1, ChronoUnit.DAYS), 100));
            assertThat(deleted).as("content an uncommitted SQL enqueue refers to").isZero();
            c.commit();
        }
        pg.dsl().transactionResult(cfg -> AttachmentRetention.deleteUnreferenced(cfg.dsl(), Instant.now().minus(1, ChronoUnit.HOURS), 100));
        assertThat(pg.dsl().fetchValue("SELECT count(*) FROM email_attachment_content WHERE sha256 = ? AND last_used_at > now() - interval '1 hour'",
                sha)).as("one content row, used just now").isEqualTo(1L);
        assertThat(pg.dsl().fetch("SELECT position, sha256, filename FROM email_attachment_ref WHERE idempotency_key = 'sql-att-2'")
                .map(r -> r.get(0) + " " + r.get(1) + " " + r.get(2))).containsExactly("0 " + sha + " b.pdf");
    }
}
