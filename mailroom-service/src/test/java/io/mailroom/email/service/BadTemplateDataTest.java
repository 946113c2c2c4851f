package io.mailroom.email.service;

import com.icegreen.greenmail.junit5.GreenMailExtension;
import com.icegreen.greenmail.util.ServerSetupTest;
import io.mailroom.email.api.EmailOutbox;
import io.mailroom.email.api.OutgoingEmail;
import io.mailroom.outbox.OutboxEnqueuer;
import io.mailroom.testing.PostgresExtension;
import org.jooq.Record;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * Through the real dispatcher service: data a template cannot render, and a template that compiles
 * but fails on every render, each end their message as {@code failed} on its first attempt with the
 * cause named (no retries that cannot help, nothing half-rendered sent), visible in the history,
 * while the good messages around them are sent.
 */
class BadTemplateDataTest {

    @RegisterExtension
    static final PostgresExtension pg = new PostgresExtension();

    @RegisterExtension
    static final GreenMailExtension greenMail = new GreenMailExtension(ServerSetupTest.SMTP.dynamicPort());

    private static void templates(Path dir) throws Exception {
        Path notice = Files.createDirectories(dir.resolve("notice"));
        Files.writeString(notice.resolve("subject.peb"), "Notice for {{ customer.name }}");
        Files.writeString(notice.resolve("text.peb"), "Dear {{ customer.name }}, your code is {{ code }}.");
        Files.writeString(notice.resolve("html.peb"), "<p>Dear {{ customer.name }}, your code is {{ code }}.</p>");
        // compiles, but every render asks the messages for a key no file has
        Path broken = Files.createDirectories(dir.resolve("broken"));
        Files.writeString(broken.resolve("subject.peb"), "{{ t(\"no_such_key\") }}");
        Files.writeString(broken.resolve("text.peb"), "text");
        Files.writeString(broken.resolve("html.peb"), "<p>html</p>");
    }

    private static OutgoingEmail email(String template, String key, Map<String, Object> data) {
        return OutgoingEmail.template(template).to("anh@example.com", "Nguyễn Thị Ánh").locale("vi")
                .about("order", "7").idempotencyKey(key).data(data).build();
    }

    private static Record message(String key) {
        return pg.dsl().fetchSingle("SELECT status, attempts, last_error FROM outbox_message WHERE idempotency_key = ?", key);
    }

    @Test
    void missingDataAndABrokenTemplateFailTheirMessageForGoodNamingTheCauseAndTheRestIsSent(@TempDir Path dir) throws Exception {
        templates(dir);
        Map<String, String> env = ServiceEnv.smtp(pg.database().jdbcUrlWithCredentials(), greenMail.getSmtp().getPort());
        env.put("MAILROOM_MIGRATE", "true");
        env.put("MAILROOM_TEMPLATES_DIR", dir.toString());
        env.put("MAILROOM_TOPICS", "email.notice = notice; email.broken = broken");

        try (DispatcherService service = DispatcherService.start(ServiceConfig.fromEnv(env))) {
            EmailOutbox outbox = new EmailOutbox(new OutboxEnqueuer());
            pg.dsl().transaction(cfg -> {
                outbox.enqueue(cfg.dsl(), email("notice", "notice-1", Map.of("customer", Map.of("name", "Ánh"), "code", "A1")));
                outbox.enqueue(cfg.dsl(), email("notice", "notice-no-code", Map.of("customer", Map.of("name", "Ánh"))));
                outbox.enqueue(cfg.dsl(), email("broken", "broken-1", Map.of()));
                outbox.enqueue(cfg.dsl(), email("notice", "notice-2", Map.of("customer", Map.of("name", "Bảo"), "code", "B2")));
            });

            await().atMost(Duration.ofSeconds(20)).until(() -> pg.dsl().fetchCount(
                    pg.dsl().selectFrom("outbox_message").where("status IN ('done', 'failed')")) == 4);
        }

        assertThat(message("notice-1").get("status", String.class)).isEqualTo("done");
        assertThat(message("notice-2").get("status", String.class)).isEqualTo("done");
        assertThat(greenMail.getReceivedMessages()).hasSize(2);
        assertThat(greenMail.getReceivedMessages()).extracting(m -> m.getSubject())
                .containsExactlyInAnyOrder("Notice for Ánh", "Notice for Bảo");

        Record noCode = message("notice-no-code");
        assertThat(noCode.get("status", String.class)).isEqualTo("failed");
        assertThat(noCode.get("attempts", Integer.class)).as("not retried: more attempts cannot add the data").isEqualTo(1);
        assertThat(noCode.get("last_error", String.class)).contains("code").contains("notice");

        Record broken = message("broken-1");
        assertThat(broken.get("status", String.class)).isEqualTo("failed");
        assertThat(broken.get("attempts", Integer.class)).isEqualTo(1);
        assertThat(broken.get("last_error", String.class)).contains("no_such_key").contains("broken");

        // the history keeps why, for support; and no effect key was reserved for an email that was never sent
        assertThat(pg.dsl().fetchSingle("SELECT error FROM outbox_attempt WHERE idempotency_key = 'notice-no-code'").get(0, String.class))
                .contains("code");
        assertThat(pg.dsl().fetchCount(pg.dsl().selectFrom("idempotency_record")
                .where("effect_key IN ('notice-no-code', 'broken-1')"))).isZero();
    }
}
