package io.mailroom.email.dispatch;

import io.mailroom.email.Email;
import io.mailroom.email.EmailAddress;
import io.mailroom.email.config.EmailTopics;
import io.mailroom.email.render.TemplatedComposer;
import io.mailroom.email.transport.MailTransport;
import io.mailroom.email.transport.SendResult;
import io.mailroom.idempotency.IdempotencyStore;
import io.mailroom.outbox.runtime.ClaimContext;
import io.mailroom.outbox.runtime.ClaimedMessage;
import io.mailroom.outbox.runtime.Outcome;
import io.mailroom.templates.TemplateCatalogue;
import io.mailroom.testing.PostgresExtension;
import org.jooq.Record;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.function.IntFunction;

import static io.mailroom.db.jooq.Tables.EMAIL_RENDERING;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * What the handler stores of each email's rendering (email_rendering, V7): committed before the
 * send, replaced by the latest attempt that sends, left alone by attempts that send nothing.
 */
class EmailRenderingTest {

    @RegisterExtension
    static final PostgresExtension pg = new PostgresExtension();

    private static final String TOPIC = "email.greeting";
    private static final ClaimContext HELD = () -> false;
    private static final EmailAddress SHOP = EmailAddress.of("shop@example.com", "Example Shop");

    private final IdempotencyStore store = new IdempotencyStore();

    @BeforeEach
    void clean() {
        pg.dsl().execute("TRUNCATE outbox_message, outbox_effect, outbox_effect_term, outbox_attempt, idempotency_record, email_rendering");
    }

    /** Answers {@code script.apply(n)} to the n-th send (from 0), and reads the rendering row as the send starts. */
    private static final class PeekingTransport implements MailTransport {
        final List<Record> seenAtSend = new ArrayList<>();
        final List<Email> sent = new ArrayList<>();
        private final IntFunction<SendResult> script;

        PeekingTransport(IntFunction<SendResult> script) {
            this.script = script;
        }

        @Override
        public String name() {
            return "http";
        }

        @Override
        public synchronized SendResult send(Email email, String idempotencyKey) {
            // another connection: it sees only what is committed
            seenAtSend.add(pg.dsl().selectFrom(EMAIL_RENDERING).where(EMAIL_RENDERING.IDEMPOTENCY_KEY.eq(idempotencyKey))
                    .fetchOne());
            sent.add(email);
            return script.apply(sent.size() - 1);
        }
    }

    private static SendResult accepted(int n) {
        return new SendResult.Sent("prov-" + n, "{\"status\":202}");
    }

    private static TemplateCatalogue catalogue(String subjectVi) {
        Map<String, String> files = new HashMap<>();
        files.put("greeting/subject.peb", "{{ t(\"subject\") }}");
        files.put("greeting/text.peb", "Hi {{ name }} & co");
        files.put("greeting/html.peb", "<p>Hi {{ name }}</p>");
        files.put("greeting/messages.properties", "subject=Hello\n");
        files.put("greeting/messages_vi.properties", "subject=" + subjectVi + "\n");
        return TemplateCatalogue.of(files);
    }

    private EmailHandler handler(EmailComposer composer, MailTransport transport, AmbiguityPolicy policy) {
        return new EmailHandler(pg.dataSource(), store, composer, transport, policy, "worker-1", null);
    }

    private static EmailComposer templated(TemplateCatalogue catalogue) {
        return new TemplatedComposer(catalogue, Map.of(TOPIC, new EmailTopics.Route(TOPIC, "greeting", null)), SHOP,
                Email.DEFAULT_MAX_BODY_BYTES);
    }

    private static ClaimedMessage attempt(String key, int attempt) {
        Instant now = Instant.parse("2026-12-03T10:00:00Z");
        String envelope = "{\"v\":1,\"locale\":\"vi\",\"to\":{\"address\":\"an@example.com\",\"name\":\"An\"},"
                + "\"data\":{\"name\":\"An <b>\"}}";
        return new ClaimedMessage(7, now, TOPIC, "order", "102", key, null, envelope, attempt, 10, attempt, now,
                now.plusSeconds(60));
    }

    private static Outcome record(Outcome outcome) {
        if (outcome.alsoInTransaction() != null) {
            pg.dsl().transaction(c -> outcome.alsoInTransaction().run(c.dsl()));
        }
        return outcome;
    }

    private static Record rendering(String key) {
        return pg.dsl().selectFrom(EMAIL_RENDERING).where(EMAIL_RENDERING.IDEMPOTENCY_KEY.eq(key)).fetchOne();
    }

    @Test
    void theRenderingIsCommittedBeforeTheSend_withTemplateVersionLocaleAndParts() throws Exception {
        PeekingTransport http = new PeekingTransport(EmailRenderingTest::accepted);
        Outcome outcome = record(handler(templated(catalogue("Xin chào")), http, AmbiguityPolicy.review())
                .handle(attempt("email-greeting-1", 1), HELD));

        assertThat(outcome).isInstanceOf(Outcome.Done.class);
        Email email = http.sent.getFirst();
        Record seen = http.seenAtSend.getFirst();
        assertThat(seen).as("committed before the provider was called").isNotNull();
        assertThat(seen.get(EMAIL_RENDERING.TEMPLATE)).isEqualTo("greeting");
        assertThat(seen.get(EMAIL_RENDERING.TEMPLATE_VERSION)).isEqualTo(email.templateVersion()).startsWith("greeting@");
        assertThat(seen.get(EMAIL_RENDERING.LOCALE)).isEqualTo("vi");
        assertThat(seen.get(EMAIL_RENDERING.SUBJECT)).isEqualTo("Xin chào").isEqualTo(email.subject());
        assertThat(seen.get(EMAIL_RENDERING.TEXT_PART)).isEqualTo(email.textBody()).startsWith("Hi An <b> & co");
        assertThat(seen.get(EMAIL_RENDERING.HTML_PART)).isEqualTo(email.htmlBody()).contains("Hi An &lt;b&gt;");
        assertThat(seen.get(EMAIL_RENDERING.ATTEMPT)).isEqualTo(1);
        assertThat(seen.get(EMAIL_RENDERING.MESSAGE_ID)).isEqualTo(7L);
        assertThat(seen.get(EMAIL_RENDERING.MESSAGE_CREATED_AT)).isEqualTo(Instant.parse("2026-12-03T10:00:00Z"));
        assertThat(seen.get(EMAIL_RENDERING.RENDERED_AT)).isNotNull();
    }

    @Test
    void aRetryReplacesTheRenderingWithTheLatestAttempts_andAnAttemptThatSendsNothingLeavesIt() throws Exception {
        PeekingTransport http = new PeekingTransport(n -> n == 0
                ? new SendResult.Transient("503", "busy", null, false) : accepted(n));
        String key = "email-greeting-2";

        record(handler(templated(catalogue("Chào bạn")), http, AmbiguityPolicy.review()).handle(attempt(key, 1), HELD));
        String firstVersion = rendering(key).get(EMAIL_RENDERING.TEMPLATE_VERSION);
        assertThat(rendering(key).get(EMAIL_RENDERING.SUBJECT)).isEqualTo("Chào bạn");

        // a template deploy between the attempts: the second one sends the new wording
        record(handler(templated(catalogue("Xin chào")), http, AmbiguityPolicy.review()).handle(attempt(key, 2), HELD));
        Record latest = rendering(key);
        assertThat(latest.get(EMAIL_RENDERING.ATTEMPT)).isEqualTo(2);
        assertThat(latest.get(EMAIL_RENDERING.SUBJECT)).isEqualTo("Xin chào");
        assertThat(latest.get(EMAIL_RENDERING.TEMPLATE_VERSION)).isNotEqualTo(firstVersion)
                .isEqualTo(http.sent.get(1).templateVersion());
        assertThat(pg.dsl().fetchCount(EMAIL_RENDERING)).as("one row per message").isEqualTo(1);

        // already sent: a third attempt (another deploy) sends nothing and keeps what the customer got
        Outcome third = record(handler(templated(catalogue("Kính chào")), http, AmbiguityPolicy.review())
                .handle(attempt(key, 3), HELD));
        assertThat(third).isInstanceOf(Outcome.Done.class);
        assertThat(http.sent).hasSize(2);
        assertThat(rendering(key).get(EMAIL_RENDERING.ATTEMPT)).isEqualTo(2);
        assertThat(rendering(key).get(EMAIL_RENDERING.SUBJECT)).isEqualTo("Xin chào");
    }

    @Test
    void aResendOfAnUnknownOutcomeStoresItsOwnRendering() throws Exception {
        PeekingTransport http = new PeekingTransport(n -> n == 0
                ? new SendResult.Ambiguous("no answer after the request was sent") : accepted(n));
        String key = "email-greeting-3";
        EmailHandler h = handler(templated(catalogue("Xin chào")), http, AmbiguityPolicy.resend(1));

        record(h.handle(attempt(key, 1), HELD));
        ClaimedMessage second = attempt(key, 2);
        Outcome outcome = record(h.handle(second, HELD));

        assertThat(outcome).isInstanceOf(Outcome.Done.class);
        assertThat(http.seenAtSend).hasSize(2);
        assertThat(http.seenAtSend.get(1).get(EMAIL_RENDERING.ATTEMPT)).as("written with the repeated reservation, before the resend")
                .isEqualTo(2);
    }

    @Test
    void aComposerThatKnowsNoTemplateStoresNoNameOrLocale() throws Exception {
        EmailComposer custom = m -> new EmailComposer.Composed(new Email(SHOP, EmailAddress.of("an@example.com", null),
                "Custom subject", "custom text", "<p>custom</p>", Map.of(), "custom-v1"), List.of(m.idempotencyKey()));
        PeekingTransport http = new PeekingTransport(EmailRenderingTest::accepted);
        record(handler(custom, http, AmbiguityPolicy.review()).handle(attempt("email-custom-1", 1), HELD));

        Record r = rendering("email-custom-1");
        assertThat(r.get(EMAIL_RENDERING.TEMPLATE)).isNull();
        assertThat(r.get(EMAIL_RENDERING.LOCALE)).isNull();
        assertThat(r.get(EMAIL_RENDERING.TEMPLATE_VERSION)).isEqualTo("custom-v1");
        assertThat(r.get(EMAIL_RENDERING.SUBJECT)).isEqualTo("Custom subject");
    }

    @Test
    void aFingerprintMismatchSendsNothingAndStoresNothing() throws Exception {
        PeekingTransport http = new PeekingTransport(EmailRenderingTest::accepted);
        String key = "email-greeting-4";
        EmailComposer other = m -> new EmailComposer.Composed(new Email(SHOP, EmailAddress.of("bob@example.com", null),
                "Other", "other", "<p>other</p>", Map.of(), "custom-v1"), List.of("another request"));
        record(handler(other, http, AmbiguityPolicy.review()).handle(attempt(key, 1), HELD));
        pg.dsl().deleteFrom(EMAIL_RENDERING).execute();

        Outcome outcome = record(handler(templated(catalogue("Xin chào")), http, AmbiguityPolicy.review())
                .handle(attempt(key, 2), HELD));
        assertThat(outcome).isInstanceOf(Outcome.Failed.class);
        assertThat(http.sent).hasSize(1);
        assertThat(rendering(key)).isNull();
    }

    @Test
    void oneStatementWritesABatchInKeyOrder_andABatchMayNameAKeyOnce() {
        RenderingStore renderings = new RenderingStore();
        Instant at = Instant.parse("2026-12-03T10:00:00Z");
        List<RenderingStore.Rendering> batch = List.of(
                new RenderingStore.Rendering("k-b", 2, at, 1, "greeting", "greeting@1", "vi", "B", "b", null),
                new RenderingStore.Rendering("k-a", 1, at, 3, null, "custom-v1", null, "A", "a", "<p>a</p>"));
        int written = pg.dsl().transactionResult(c -> renderings.upsert(c.dsl(), batch));
        assertThat(written).isEqualTo(2);
        assertThat(pg.dsl().selectFrom(EMAIL_RENDERING).orderBy(EMAIL_RENDERING.IDEMPOTENCY_KEY).fetch())
                .extracting(r -> r.getIdempotencyKey() + ":" + r.getAttempt() + ":" + r.getTemplate() + ":" + r.getHtmlPart())
                .containsExactly("k-a:3:null:<p>a</p>", "k-b:1:greeting:null");

        assertThatThrownBy(() -> renderings.upsert(pg.dsl(), List.of(batch.get(0), batch.get(0))))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("k-b");
    }
}
