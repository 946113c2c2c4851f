package io.mailroom.email.service;

import com.icegreen.greenmail.junit5.GreenMailExtension;
import com.icegreen.greenmail.util.ServerSetupTest;
import io.mailroom.db.MailroomSchema;
import io.mailroom.email.api.EmailOutbox;
import io.mailroom.email.api.OutgoingEmail;
import io.mailroom.outbox.OutboxEnqueuer;
import io.mailroom.support.Actor;
import io.mailroom.support.Role;
import io.mailroom.support.SupportService;
import io.mailroom.testing.PostgresExtension;
import io.mailroom.testing.TestDatabase;
import io.mailroom.testing.TestDatabases;
import jakarta.mail.internet.MimeMessage;
import org.flywaydb.core.Flyway;
import org.jooq.DSLContext;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Arrays;
import java.util.List;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * The upgrade as an operator lives it: a database that the previous Mailroom migrated (every table
 * in public, one flyway_schema_history with the shop's scripts among Mailroom's) holds an email
 * waiting to be sent, one retrying after a failed attempt and one in review. The new dispatcher is
 * started on it: it moves its tables into its own schema, sends the waiting and the retrying ones,
 * support resends the one in review, and each arrives exactly once; the shop's orders stay in public.
 */
class PublicLayoutUpgradeTest {

    @RegisterExtension
    static final PostgresExtension pg = new PostgresExtension();

    @RegisterExtension
    static final GreenMailExtension greenMail = new GreenMailExtension(ServerSetupTest.SMTP.dynamicPort());

    /** The shop's scripts as the previous release applied them with its own (the db module's test resources). */
    private static final String OLD_SHOP_SCRIPTS = "filesystem:" + Path.of("../db/src/test/resources/legacy/shop-in-public").toAbsolutePath();

    @Test
    void pendingRetryingAndInReviewEmailsAreAllSentAfterTheUpgrade_onceEach(@TempDir Path templates) throws Exception {
        welcomeTemplate(templates);
        try (TestDatabase db = TestDatabases.createEmpty()) {
            // the previous release's layout: V1 to V13 in public, one history, the shop's scripts among the queue's
            Flyway.configure().dataSource(db.dataSource()).locations(OLD_SHOP_SCRIPTS, io.mailroom.db.Schema.MIGRATIONS)
                    .target("13").load().migrate();
            DSLContext dsl = db.dsl();
            dsl.execute("INSERT INTO public.orders (customer_email, customer_name, currency, total) VALUES ('ann@example.com', 'Ann', 'EUR', 10)");
            // the previous release wrote these rows: the same row format, in public, without the search terms it did not have
            EmailOutbox emails = new EmailOutbox(new OutboxEnqueuer());
            OutboxEnqueuer old = new OutboxEnqueuer(new MailroomSchema("public"));
            dsl.transaction(c -> {
                for (String key : List.of("welcome-pending", "welcome-retrying", "welcome-review")) {
                    old.enqueue(c.dsl(), emails.message(OutgoingEmail.template("welcome").to(key + "@example.com", "Ann")
                            .about("user", key).idempotencyKey(key).data(Map.of("name", "Ann")).build()).withSearchTerms(List.of()));
                }
            });
            dsl.execute("UPDATE public.outbox_message SET attempts = 2, last_error = '421 4.3.2 try later',"
                    + " available_at = now() + interval '2 seconds' WHERE idempotency_key = 'welcome-retrying'");
            dsl.execute("UPDATE public.outbox_message SET status = 'review', attempts = 1, finished_at = now(),"
                    + " last_error = 'unknown outcome: the connection was lost after DATA' WHERE idempotency_key = 'welcome-review'");
            dsl.execute("UPDATE public.outbox_effect SET status = 'review', attempts = 1 WHERE idempotency_key = 'welcome-review'");

            Map<String, String> env = ServiceEnv.smtp(db.jdbcUrlWithCredentials(), greenMail.getSmtp().getPort());
            env.put("MAILROOM_MIGRATE", "true");
            env.put("MAILROOM_TEMPLATES_DIR", templates.toString());
            try (DispatcherService service = DispatcherService.start(ServiceConfig.fromEnv(env))) {
                await().atMost(Duration.ofSeconds(30)).until(() -> greenMail.getReceivedMessages().length == 2);
                new SupportService(db.dataSource()).resend(new Actor("alice", Role.SUPPORT), "welcome-review",
                        "ambiguous send before the upgrade; customer says nothing arrived");
                await().atMost(Duration.ofSeconds(30)).until(() -> greenMail.getReceivedMessages().length == 3);
                await().pollDelay(Duration.ofSeconds(1)).atMost(Duration.ofSeconds(2)).until(() -> true);
            }
            List<String> recipients = Arrays.stream(greenMail.getReceivedMessages())
                    .map(PublicLayoutUpgradeTest::recipient).sorted().toList();
            assertThat(recipients).containsExactly("welcome-pending@example.com", "welcome-retrying@example.com",
                    "welcome-review@example.com");
            assertThat(dsl.fetch("SELECT idempotency_key, status FROM mailroom.outbox_effect ORDER BY 1").map(r -> r.get(0) + "=" + r.get(1)))
                    .containsExactly("welcome-pending=done", "welcome-retrying=done", "welcome-review=failed",
                            "welcome-review-resend-1=done");
            // the upgrade gave the emails of the previous release their search terms (V18), and the resend copied them
            assertThat(dsl.fetch("SELECT idempotency_key FROM mailroom.outbox_effect_term WHERE term = 'to:welcome-review@example.com'"
                    + " ORDER BY 1").getValues(0, String.class)).containsExactly("welcome-review", "welcome-review-resend-1");
            assertThat(dsl.fetchValue("SELECT count(*) FROM mailroom.outbox_effect_term WHERE term = 'template:welcome'")).isEqualTo(4L);
            assertThat(dsl.fetchValue("SELECT count(*) FROM public.orders")).isEqualTo(1L);
            assertThat(dsl.fetchValue("SELECT count(*) FROM pg_tables WHERE schemaname = 'public' AND tablename LIKE 'outbox%'")).isEqualTo(0L);
        }
    }

    private static String recipient(MimeMessage m) {
        try {
            return ((jakarta.mail.internet.InternetAddress) m.getAllRecipients()[0]).getAddress();
        } catch (jakarta.mail.MessagingException e) {
            throw new IllegalStateException(e);
        }
    }

    private static void welcomeTemplate(Path dir) throws Exception {
        Path t = Files.createDirectories(dir.resolve("welcome"));
        Files.writeString(t.resolve("subject.peb"), "Welcome, {{ name }}");
        Files.writeString(t.resolve("text.peb"), "Hello {{ name }}, welcome aboard.");
        Files.writeString(t.resolve("html.peb"), "<p>Hello {{ name }}, welcome aboard.</p>");
    }
}
