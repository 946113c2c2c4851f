package io.mailroom.email.service;

import com.icegreen.greenmail.junit5.GreenMailExtension;
import com.icegreen.greenmail.util.ServerSetupTest;
import io.mailroom.email.api.EmailOutbox;
import io.mailroom.email.api.OutgoingEmail;
import io.mailroom.outbox.OutboxEnqueuer;
import io.mailroom.outbox.PendingChange;
import io.mailroom.testing.PostgresExtension;
import jakarta.mail.Message;
import jakarta.mail.internet.MimeMessage;
import io.mailroom.db.jooq.tables.records.OutboxMessageRecord;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import java.time.Duration;
import java.time.Instant;
import java.util.Arrays;
import java.util.Map;
import java.util.Set;
import java.util.stream.Collectors;

import static io.mailroom.db.jooq.Tables.OUTBOX_MESSAGE;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * Send later, cancel and reschedule through the real dispatcher service and a real SMTP server: an
 * email scheduled 2 s ahead is neither claimed nor sent before its time and is after it; a cancelled
 * one is never sent; a rescheduled one goes at its new time.
 */
class SendLaterServiceTest {

    @RegisterExtension
    static final PostgresExtension pg = new PostgresExtension();

    @RegisterExtension
    static final GreenMailExtension greenMail = new GreenMailExtension(ServerSetupTest.SMTP.dynamicPort());

    private final EmailOutbox outbox = new EmailOutbox(new OutboxEnqueuer());

    private static OutgoingEmail welcome(String key, String to, Instant sendAt) {
        return OutgoingEmail.template("welcome").to(to, "Ann").about("account", key).idempotencyKey(key)
                .data(Map.of("customer", Map.of("name", "Ann"))).sendAt(sendAt).build();
    }

    private static Set<String> receivedBy() {
        return Arrays.stream(greenMail.getReceivedMessages()).map(SendLaterServiceTest::to).collect(Collectors.toSet());
    }

    private static String to(MimeMessage m) {
        try {
            return ((jakarta.mail.internet.InternetAddress) m.getRecipients(Message.RecipientType.TO)[0]).getAddress();
        } catch (jakarta.mail.MessagingException e) {
            throw new IllegalStateException(e);
        }
    }

    private static OutboxMessageRecord row(String key) {
        return pg.dsl().fetchSingle(OUTBOX_MESSAGE, OUTBOX_MESSAGE.IDEMPOTENCY_KEY.eq(key));
    }

    @Test
    void scheduledCancelledAndRescheduledEmailsGoAtTheirTimeOrNever() {
        Map<String, String> env = ServiceEnv.smtp(pg.database().jdbcUrlWithCredentials(), greenMail.getSmtp().getPort());
        env.put("MAILROOM_MIGRATE", "true");
        try (DispatcherService service = DispatcherService.start(ServiceConfig.fromEnv(env))) {
            // a control email at once: the service is up and sending
            pg.dsl().transaction(c -> outbox.enqueue(c.dsl(), welcome("now-1", "now@example.com", null)));
            await().atMost(Duration.ofSeconds(20)).until(() -> receivedBy().contains("now@example.com"));

            Instant start = Instant.now().truncatedTo(java.time.temporal.ChronoUnit.MILLIS); // PostgreSQL keeps microseconds
            Instant inTwoSeconds = start.plusSeconds(2);
            Instant inOneSecond = start.plusSeconds(1);
            pg.dsl().transaction(c -> {
                outbox.enqueue(c.dsl(), welcome("later-1", "later@example.com", inTwoSeconds));
                outbox.enqueue(c.dsl(), welcome("cancelled-1", "cancelled@example.com", inOneSecond));
                outbox.enqueue(c.dsl(), welcome("moved-1", "moved@example.com", start.plus(Duration.ofDays(20))));
            });
            // business code changes its mind, each in a transaction of its own
            PendingChange cancelled = pg.dsl().transactionResult(c -> outbox.cancel(c.dsl(), "cancelled-1"));
            Instant movedTo = start.plusSeconds(3);
            PendingChange moved = pg.dsl().transactionResult(c -> outbox.reschedule(c.dsl(), "moved-1", movedTo));
            assertThat(cancelled.outcome()).isEqualTo(PendingChange.Outcome.CANCELLED);
            assertThat(moved.outcome()).isEqualTo(PendingChange.Outcome.RESCHEDULED);

            // before its time: not claimed (the row is still pending, never attempted) and not sent
            await().during(Duration.ofMillis(1200)).atMost(Duration.ofMillis(1800)).until(() ->
                    !receivedBy().contains("later@example.com") && row("later-1").getAttempts() == 0
                            && Instant.now().isBefore(inTwoSeconds));
            await().atMost(Duration.ofSeconds(15)).until(() -> receivedBy().contains("later@example.com")
                    && receivedBy().contains("moved@example.com"));
            await().atMost(Duration.ofSeconds(10)).until(() -> "done".equals(row("later-1").getStatus())
                    && "done".equals(row("moved-1").getStatus()));

            // claimed at or after the send time, by the database's clock
            OutboxMessageRecord later = row("later-1");
            assertThat(later.get(OUTBOX_MESSAGE.CLAIMED_AT)).isAfterOrEqualTo(later.get(OUTBOX_MESSAGE.AVAILABLE_AT));
            assertThat(later.get(OUTBOX_MESSAGE.AVAILABLE_AT)).isEqualTo(inTwoSeconds);
            assertThat(later.get(OUTBOX_MESSAGE.ATTEMPTS)).isEqualTo(1);
            OutboxMessageRecord movedRow = row("moved-1");
            assertThat(movedRow.get(OUTBOX_MESSAGE.AVAILABLE_AT)).isEqualTo(movedTo);
            assertThat(movedRow.get(OUTBOX_MESSAGE.CLAIMED_AT)).isAfterOrEqualTo(movedTo);

            // the cancelled one's time passed long ago: it is still cancelled, never attempted, never sent
            OutboxMessageRecord gone = row("cancelled-1");
            assertThat(gone.get(OUTBOX_MESSAGE.STATUS)).isEqualTo("cancelled");
            assertThat(gone.get(OUTBOX_MESSAGE.ATTEMPTS)).isZero();
            assertThat(receivedBy()).containsExactlyInAnyOrder("now@example.com", "later@example.com", "moved@example.com");
            // once sent, too late for either
            PendingChange late = pg.dsl().transactionResult(c -> outbox.cancel(c.dsl(), "later-1"));
            assertThat(late.answer()).isEqualTo("too_late:sent");
        }
    }
}
