package io.mailroom.email.dispatch;

import com.icegreen.greenmail.junit5.GreenMailExtension;
import com.icegreen.greenmail.util.ServerSetupTest;
import io.mailroom.email.EmailAddress;
import io.mailroom.email.resilience.ResilientTransport;
import io.mailroom.email.resilience.TransportPolicyConfig;
import io.mailroom.email.transport.smtp.MessageIds;
import io.mailroom.email.transport.smtp.SmtpConfig;
import io.mailroom.email.transport.smtp.SmtpSecurity;
import io.mailroom.email.transport.smtp.SmtpTransport;
import io.mailroom.outbox.runtime.Dispatcher;
import io.mailroom.testing.PostgresExtension;
import jakarta.mail.internet.MimeMessage;
import jakarta.mail.internet.MimeMultipart;
import org.jooq.Record;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import java.time.Duration;

import static io.mailroom.db.jooq.Tables.IDEMPOTENCY_RECORD;
import static io.mailroom.db.jooq.Tables.OUTBOX_MESSAGE;
import static io.mailroom.email.dispatch.DispatchFixture.enqueueOrder;
import static io.mailroom.email.dispatch.DispatchFixture.key;
import static io.mailroom.email.dispatch.DispatchFixture.makeDue;
import static io.mailroom.email.dispatch.DispatchFixture.message;
import static org.assertj.core.api.Assertions.assertThat;

/** Outbox message → email at a real SMTP server (GreenMail), with the idempotency record kept alongside. */
class SmtpDispatchTest {

    @RegisterExtension
    static final PostgresExtension pg = new PostgresExtension();

    @RegisterExtension
    static final GreenMailExtension greenMail = new GreenMailExtension(ServerSetupTest.SMTP.dynamicPort())
            .withPerMethodLifecycle(true);

    private SmtpTransport smtp;
    private ResilientTransport transport;

    @BeforeEach
    void setUp() {
        pg.dsl().execute("TRUNCATE outbox_message, outbox_effect, outbox_effect_term, outbox_attempt, idempotency_record");
        smtp = new SmtpTransport(SmtpConfig.builder().host("127.0.0.1").port(greenMail.getSmtp().getPort())
                .security(SmtpSecurity.NONE).from(EmailAddress.of("bounces@example.com")).messageIdDomain("shop.example.com")
                .connectTimeout(Duration.ofSeconds(2)).readTimeout(Duration.ofSeconds(5)).build());
        transport = DispatchFixture.resilient(smtp, TransportPolicyConfig.defaults());
    }

    @AfterEach
    void tearDown() {
        transport.close();
    }

    @Test
    void anOrderBecomesExactlyOneEmailWithTheDeterministicMessageId() throws Exception {
        enqueueOrder(pg.dsl(), 102);
        Dispatcher d = DispatchFixture.dispatcher(pg.dataSource(), transport, AmbiguityPolicy.review(), 10);
        assertThat(d.runOnce()).isEqualTo(1);

        MimeMessage[] received = greenMail.getReceivedMessages();
        assertThat(received).hasSize(1);
        MimeMessage mail = received[0];
        String messageId = MessageIds.forKey(key(102), "shop.example.com");
        assertThat(mail.getMessageID()).isEqualTo(messageId);
        assertThat(mail.getAllRecipients()[0].toString()).contains("customer102@example.com");
        assertThat(mail.getSubject()).contains("102");
        MimeMultipart body = (MimeMultipart) mail.getContent();
        String parts = "";
        for (int i = 0; i < body.getCount(); i++) {
            parts += body.getBodyPart(i).getContentType() + "\n" + body.getBodyPart(i).getContent();
        }
        assertThat(parts).contains("text/plain").contains("text/html").contains("Mug").contains("25.00");

        assertThat(message(pg.dsl(), 102).get(OUTBOX_MESSAGE.STATUS)).isEqualTo("done");
        Record rec = DispatchFixture.idempotency(pg.dsl(), 102);
        assertThat(rec.get(IDEMPOTENCY_RECORD.STATE)).isEqualTo("succeeded");
        assertThat(rec.get(IDEMPOTENCY_RECORD.RESULT_REF)).isEqualTo(messageId);
        assertThat(rec.get(IDEMPOTENCY_RECORD.DESCRIPTOR).data()).contains("customer102@example.com");
    }

    @Test
    void aCrashAfterTheSendParksTheEmailForReviewAndSendsNothingMore() {
        enqueueOrder(pg.dsl(), 7);
        DispatchFixture.dispatcher(pg.dataSource(), transport, AmbiguityPolicy.review(), 10,
                DispatchFixture::dyingBeforeRecording).runOnce();
        assertThat(greenMail.getReceivedMessages()).hasSize(1);
        assertThat(DispatchFixture.idempotency(pg.dsl(), 7).get(IDEMPOTENCY_RECORD.STATE)).as("never recorded").isEqualTo("reserved");
        assertThat(message(pg.dsl(), 7).get(OUTBOX_MESSAGE.STATUS)).isEqualTo("pending");

        makeDue(pg.dsl());
        DispatchFixture.dispatcher(pg.dataSource(), transport, AmbiguityPolicy.review(), 10).runOnce();
        assertThat(greenMail.getReceivedMessages()).as("no second email").hasSize(1);
        Record row = message(pg.dsl(), 7);
        assertThat(row.get(OUTBOX_MESSAGE.STATUS)).isEqualTo("review");
        assertThat(row.get(OUTBOX_MESSAGE.LAST_ERROR)).contains("unknown outcome").contains("review");
        assertThat(DispatchFixture.idempotency(pg.dsl(), 7).get(IDEMPOTENCY_RECORD.STATE)).isEqualTo("ambiguous");
    }

    @Test
    void withTheResendPolicyACrashAfterTheSendSendsAgain() {
        enqueueOrder(pg.dsl(), 8);
        DispatchFixture.dispatcher(pg.dataSource(), transport, AmbiguityPolicy.resend(), 10,
                DispatchFixture::dyingBeforeRecording).runOnce();
        makeDue(pg.dsl());
        DispatchFixture.dispatcher(pg.dataSource(), transport, AmbiguityPolicy.resend(), 10).runOnce();
        MimeMessage[] received = greenMail.getReceivedMessages();
        assertThat(received).as("at least once: a second copy under the same Message-ID").hasSize(2);
        assertThat(message(pg.dsl(), 8).get(OUTBOX_MESSAGE.STATUS)).isEqualTo("done");
    }

    @Test
    void headerInjectionAndInvalidAddressesFailAtOnceWithoutAnSmtpSession() {
        pg.dsl().transaction(cfg -> {
            DispatchFixture.enqueue(cfg.dsl(), 1, DispatchFixture.payload(1, "ann@example.com", "Ann\\r\\nBcc: victim@example.com"));
            DispatchFixture.enqueue(cfg.dsl(), 2, DispatchFixture.payload(2, "not-an-address", "Bob"));
            DispatchFixture.enqueue(cfg.dsl(), 3, DispatchFixture.payload(3, "eve@example.com\\r\\nBcc: x@example.com", "Eve"));
        });
        DispatchFixture.dispatcher(pg.dataSource(), transport, AmbiguityPolicy.review(), 10).runOnce();
        for (long id = 1; id <= 3; id++) {
            Record row = message(pg.dsl(), id);
            assertThat(row.get(OUTBOX_MESSAGE.STATUS)).as("message %s", id).isEqualTo("failed");
            assertThat(row.get(OUTBOX_MESSAGE.ATTEMPTS)).isEqualTo(1);
            assertThat(row.get(OUTBOX_MESSAGE.LAST_ERROR)).as("message %s", id).contains("payload.to:");
        }
        assertThat(greenMail.getReceivedMessages()).isEmpty();
        assertThat(smtp.connectionsOpened()).as("no SMTP session was opened").isZero();
    }

    @Test
    void theSameKeyWithADifferentEmailIsAFingerprintMismatchAndNothingIsSent() {
        enqueueOrder(pg.dsl(), 9);
        Dispatcher d = DispatchFixture.dispatcher(pg.dataSource(), transport, AmbiguityPolicy.review(), 10);
        d.runOnce();
        assertThat(greenMail.getReceivedMessages()).hasSize(1);
        // the queue's rows for the effect are gone (retention), the idempotency record stays; the
        // same key now arrives with a different body
        pg.dsl().execute("DELETE FROM outbox_message; DELETE FROM outbox_effect");
        pg.dsl().transaction(cfg -> DispatchFixture.enqueue(cfg.dsl(), 9, DispatchFixture.payload(9, "someone.else@example.com", "Mallory")));
        d.runOnce();
        Record row = message(pg.dsl(), 9);
        assertThat(row.get(OUTBOX_MESSAGE.STATUS)).isEqualTo("failed");
        assertThat(row.get(OUTBOX_MESSAGE.LAST_ERROR)).contains("different email").contains("nothing sent");
        assertThat(greenMail.getReceivedMessages()).hasSize(1);
    }

    @Test
    void anAlreadySentEffectIsNotSentAgain() {
        enqueueOrder(pg.dsl(), 11);
        Dispatcher d = DispatchFixture.dispatcher(pg.dataSource(), transport, AmbiguityPolicy.review(), 10);
        d.runOnce();
        // the completion was lost (say, a lease expired right after the record committed)
        pg.dsl().execute("UPDATE outbox_message SET status = 'pending', finished_at = NULL, available_at = now()");
        d.runOnce();
        assertThat(greenMail.getReceivedMessages()).hasSize(1);
        assertThat(message(pg.dsl(), 11).get(OUTBOX_MESSAGE.STATUS)).isEqualTo("done");
    }
}
