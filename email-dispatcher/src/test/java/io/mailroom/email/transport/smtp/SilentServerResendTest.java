package io.mailroom.email.transport.smtp;

import io.mailroom.email.EmailAddress;
import io.mailroom.email.dispatch.AmbiguityPolicy;
import io.mailroom.email.dispatch.EmailHandler;
import io.mailroom.email.config.EmailTopics;
import io.mailroom.email.render.TemplatedComposer;
import io.mailroom.idempotency.IdempotencyStore;
import io.mailroom.outbox.runtime.Backoff;
import io.mailroom.outbox.runtime.Dispatcher;
import io.mailroom.outbox.runtime.DispatcherConfig;
import io.mailroom.outbox.NewMessage;
import io.mailroom.outbox.OutboxEnqueuer;
import io.mailroom.templates.TemplateCatalogue;
import io.mailroom.testing.PostgresExtension;
import org.jooq.Record;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import java.io.IOException;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;

import static io.mailroom.db.jooq.Tables.IDEMPOTENCY_RECORD;
import static io.mailroom.db.jooq.Tables.OUTBOX_MESSAGE;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * Resend mode against an SMTP server that takes the message data and never gives the final reply
 * (every copy may have been delivered): the dispatcher sends at most
 * {@code MAILROOM_SMTP_AMBIGUOUS_RESENDS} more copies, spaced by the resend backoff, then parks the
 * email in review. It used to send one copy per attempt, seconds apart, until the attempts ran out.
 */
class SilentServerResendTest {

    @RegisterExtension
    static final PostgresExtension pg = new PostgresExtension();

    private static final String KEY = "email-order-801";
    private ScriptedSmtpServer server;
    private SmtpTransport smtp;

    private static final String TOPIC = "email.receipt";
    private TemplateCatalogue templates;

    @BeforeEach
    void setUp() throws Exception {
        pg.dsl().execute("TRUNCATE outbox_message, outbox_effect, outbox_effect_term, outbox_attempt, idempotency_record");
        server = ScriptedSmtpServer.start();
        server.finalReply = null;
        smtp = new SmtpTransport(SmtpTransportTest.config(server.port()).build());
        String payload = """
                {"v":1,"template":"receipt","locale":"en","to":{"address":"customer801@example.com","name":"Customer 801"},
                 "headers":{},"data":{"customer":{"name":"Customer 801"},"order":{"id":"801","currency":"EUR","total":25.00,
                 "createdAt":"2026-12-02T10:00:00Z","lines":[{"sku":"MUG-1","name":"Mug","quantity":2,"unitPrice":12.50,"amount":25.00}]}}}""";
        pg.dsl().transaction(cfg -> new OutboxEnqueuer(null, false).enqueueAll(cfg.dsl(), List.of(
                NewMessage.of(TOPIC, "order", "801", KEY, payload))));
        templates = TemplateCatalogue.load(io.mailroom.testing.TestTemplates.directory());
    }

    @AfterEach
    void tearDown() throws IOException {
        smtp.close();
        server.close();
    }

    private Dispatcher dispatcher(AmbiguityPolicy policy) {
        EmailHandler handler = new EmailHandler(pg.dataSource(), new IdempotencyStore(),
                new TemplatedComposer(templates, Map.of(TOPIC, new EmailTopics.Route(TOPIC, "receipt", null)),
                        EmailAddress.of("shop@example.com"), io.mailroom.email.Email.DEFAULT_MAX_BODY_BYTES), smtp, policy,
                "test-worker", null);
        DispatcherConfig config = DispatcherConfig.builder().workerId("test-worker").batchSize(10)
                .backoff(new Backoff(Duration.ofSeconds(2), Duration.ofMinutes(1), 2, 0)).build();
        return new Dispatcher(pg.dataSource(), config, Map.of(TOPIC, handler));
    }

    private static Record message() {
        return pg.dsl().selectFrom(OUTBOX_MESSAGE).where(OUTBOX_MESSAGE.IDEMPOTENCY_KEY.eq(KEY)).fetchSingle();
    }

    @Test
    void resendModeSendsOneMoreCopyAfterABackoffThenParksTheEmailForReview() {
        Dispatcher d = dispatcher(AmbiguityPolicy.resend(1));
        Instant before = Instant.now();
        assertThat(d.runOnce()).isEqualTo(1);
        assertThat(server.messagesCompleted.get()).isEqualTo(1);
        Record waiting = message();
        assertThat(waiting.get(OUTBOX_MESSAGE.STATUS)).isEqualTo("pending");
        assertThat(waiting.get(OUTBOX_MESSAGE.AVAILABLE_AT)).as("not the dispatcher's 2 s backoff")
                .isAfter(before.plusSeconds(44));

        // Let every attempt the message has come due at once: only one more copy goes out.
        for (int round = 0; round < 8 && !"review".equals(message().get(OUTBOX_MESSAGE.STATUS)); round++) {
            pg.dsl().execute("UPDATE outbox_message SET available_at = now() WHERE status = 'pending'");
            d.runOnce();
        }

        assertThat(server.messagesCompleted.get()).as("copies that reached the server").isEqualTo(2);
        Record parked = message();
        assertThat(parked.get(OUTBOX_MESSAGE.STATUS)).isEqualTo("review");
        assertThat(parked.get(OUTBOX_MESSAGE.LAST_ERROR)).contains("MAILROOM_SMTP_AMBIGUOUS_RESENDS");
        Record effect = pg.dsl().selectFrom(IDEMPOTENCY_RECORD).where(IDEMPOTENCY_RECORD.EFFECT_KEY.eq(KEY)).fetchSingle();
        assertThat(effect.get(IDEMPOTENCY_RECORD.STATE)).isEqualTo("ambiguous");
        assertThat(effect.get(IDEMPOTENCY_RECORD.REPEATS)).isEqualTo(1);
    }
}
