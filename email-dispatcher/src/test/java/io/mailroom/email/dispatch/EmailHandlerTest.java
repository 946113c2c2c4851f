package io.mailroom.email.dispatch;

import io.mailroom.email.Email;
import io.mailroom.email.config.EmailTopics;
import io.mailroom.email.render.TemplatedComposer;
import io.mailroom.email.transport.MailTransport;
import io.mailroom.email.transport.SendResult;
import io.mailroom.idempotency.EffectRecord;
import io.mailroom.idempotency.EffectState;
import io.mailroom.idempotency.IdempotencyStore;
import io.mailroom.outbox.runtime.ClaimContext;
import io.mailroom.outbox.runtime.ClaimLostException;
import io.mailroom.outbox.runtime.ClaimedMessage;
import io.mailroom.outbox.runtime.Outcome;
import io.mailroom.templates.TemplateCatalogue;
import io.mailroom.testing.PostgresExtension;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.IntFunction;

import static io.mailroom.email.dispatch.DispatchFixture.SHOP;
import static io.mailroom.email.dispatch.DispatchFixture.TOPIC;
import static io.mailroom.email.dispatch.DispatchFixture.key;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * The handler one attempt at a time, against real PostgreSQL: each test plays the attempts of one
 * message in order (and, where it matters, interleaves two holders), writing each outcome's step
 * the way the completer does, or not at all where a process "dies" before recording.
 */
class EmailHandlerTest {

    @RegisterExtension
    static final PostgresExtension pg = new PostgresExtension();

    private static final ClaimContext HELD = () -> false;
    private final IdempotencyStore store = new IdempotencyStore();

    @BeforeEach
    void clean() {
        pg.dsl().execute("TRUNCATE outbox_message, outbox_effect, outbox_effect_term, outbox_attempt, idempotency_record");
    }

    /** A transport whose n-th send (from 0) answers {@code script.apply(n)}; counts the sends. */
    private static final class CountingTransport implements MailTransport {
        final AtomicInteger sends = new AtomicInteger();
        final List<String> templates = new ArrayList<>();
        private final IntFunction<SendResult> script;

        CountingTransport(IntFunction<SendResult> script) {
            this.script = script;
        }

        @Override
        public String name() {
            return "smtp";
        }

        @Override
        public synchronized SendResult send(Email email, String idempotencyKey) {
            templates.add(email.templateVersion());
            return script.apply(sends.getAndIncrement());
        }
    }

    private static SendResult sent(int n) {
        return new SendResult.Sent("<msg-" + n + "@shop.example.com>", "{\"replyCode\":250}");
    }

    private static final SendResult NO_ANSWER_AFTER_DATA =
            new SendResult.Ambiguous("no final SMTP reply after the message data was sent (read timed out)");

    private EmailHandler handler(MailTransport transport, AmbiguityPolicy policy, String worker) {
        return new EmailHandler(pg.dataSource(), store, DispatchFixture.composer(), transport, policy, worker, null);
    }

    /** A handler rendering from {@code templates}: two catalogues that differ are two template deploys. */
    private EmailHandler handler(MailTransport transport, AmbiguityPolicy policy, String worker, TemplateCatalogue templates) {
        return new EmailHandler(pg.dataSource(), store, new TemplatedComposer(templates,
                java.util.Map.of(TOPIC, new EmailTopics.Route(TOPIC, "receipt", null)), SHOP, Email.DEFAULT_MAX_BODY_BYTES),
                transport, policy, worker, null);
    }

    private static final TemplateCatalogue V1 = DispatchFixture.TEMPLATES;
    /** The test templates after a deploy that reworded the receipt. */
    private static final TemplateCatalogue V2 = reworded();

    private static TemplateCatalogue reworded() {
        try {
            java.nio.file.Path dir = java.nio.file.Files.createTempDirectory("mailroom-templates-v2");
            java.nio.file.Path t = java.nio.file.Files.createDirectories(dir.resolve("receipt"));
            try (var files = java.nio.file.Files.list(io.mailroom.testing.TestTemplates.directory().resolve("receipt"))) {
                for (java.nio.file.Path f : files.toList()) {
                    java.nio.file.Files.copy(f, t.resolve(f.getFileName().toString()));
                }
            }
            java.nio.file.Files.writeString(t.resolve("messages.properties"), """
                    subject=Receipt #{id}: paid
                    heading=Thanks a lot, {name}!
                    item=Item
                    quantity=Qty
                    amount=Amount
                    total=Total
                    paid=Paid {when}.
                    """);
            return TemplateCatalogue.load(dir);
        } catch (Exception e) {
            throw new IllegalStateException(e);
        }
    }

    private static String version(TemplateCatalogue templates) {
        try {
            return templates.version("receipt", java.util.Locale.ENGLISH);
        } catch (io.mailroom.templates.TemplateException e) {
            throw new IllegalStateException(e);
        }
    }

    private static ClaimedMessage attempt(long orderId, int attempt) {
        Instant now = Instant.now();
        return new ClaimedMessage(orderId, now, TOPIC, "order", String.valueOf(orderId), key(orderId), null,
                DispatchFixture.payload(orderId, "customer" + orderId + "@example.com", "Customer " + orderId),
                attempt, 10, attempt, now, now.plusSeconds(60));
    }

    /** What the completer does with an outcome whose claim still holds. */
    private static Outcome record(Outcome outcome) {
        if (outcome.alsoInTransaction() != null) {
            pg.dsl().transaction(c -> outcome.alsoInTransaction().run(c.dsl()));
        }
        return outcome;
    }

    private EffectRecord effect(long orderId) {
        return store.find(pg.dsl(), key(orderId)).orElseThrow();
    }

    // ------------------------------------------------------------------------- fenced transitions

    @Test
    void aHolderWhoseClaimWasLost_doesNotTurnTheNewHoldersReservationIntoAFailure() throws Exception {
        CountingTransport smtp = new CountingTransport(EmailHandlerTest::sent);
        AmbiguityPolicy resend = AmbiguityPolicy.resend(1);
        EmailHandler a = handler(smtp, resend, "worker-a");
        EmailHandler b = handler(smtp, resend, "worker-b");

        // A reserves and stalls before sending; its lease expires and B claims the message. B finds
        // A's reservation unrecorded, repeats it (reservation 2) and sends; then B dies before
        // recording. Only after that does A check its claim, find it lost, and give back.
        ClaimContext aLosesItsClaim = () -> {
            try {
                b.handle(attempt(61, 2), HELD);
            } catch (Exception e) {
                throw new AssertionError(e);
            }
            return true;
        };
        assertThatThrownBy(() -> a.handle(attempt(61, 1), aLosesItsClaim)).isInstanceOf(ClaimLostException.class);
        assertThat(smtp.sends.get()).as("B sent once, A nothing").isEqualTo(1);
        EffectRecord afterA = effect(61);
        assertThat(afterA.state()).as("B's send stays an unknown outcome").isEqualTo(EffectState.RESERVED);
        assertThat(afterA.reservations()).isEqualTo(2);
        assertThat(afterA.reservedBy()).isEqualTo("worker-b");

        // The next attempt must see that B's outcome is unknown, not a failure that is safe to resend.
        Outcome third = record(handler(smtp, resend, "worker-c").handle(attempt(61, 3), HELD));
        assertThat(third).isInstanceOf(Outcome.Review.class);
        assertThat(smtp.sends.get()).as("no copy beyond B's").isEqualTo(1);
        assertThat(effect(61).state()).isEqualTo(EffectState.AMBIGUOUS);
    }

    // ---------------------------------------------------------------------- bounded resends (SMTP)

    @Test
    void resendMode_toAServerThatTakesTheDataAndNeverAnswers_sendsAtMostOnceMore_spacedOut_thenReview() throws Exception {
        CountingTransport silent = new CountingTransport(n -> NO_ANSWER_AFTER_DATA);
        EmailHandler h = handler(silent, AmbiguityPolicy.resend(1), "worker-1");

        List<Outcome> outcomes = new ArrayList<>();
        for (int attempt = 1; attempt <= 8 && !(last(outcomes) instanceof Outcome.Review); attempt++) {
            outcomes.add(record(h.handle(attempt(62, attempt), HELD)));
        }

        assertThat(silent.sends.get()).as("the first send and one resend").isEqualTo(2);
        assertThat(outcomes).hasSize(2);
        assertThat(outcomes.get(0)).isInstanceOfSatisfying(Outcome.RetryLater.class, r ->
                assertThat(r.after()).as("backoff before the resend")
                        .isBetween(Duration.ofSeconds(45), Duration.ofMinutes(1)));
        assertThat(outcomes.get(1)).isInstanceOfSatisfying(Outcome.Review.class, r ->
                assertThat(r.reason()).contains("MAILROOM_SMTP_AMBIGUOUS_RESENDS").contains("nothing more sent"));
        Outcome later = record(h.handle(attempt(62, 3), HELD));
        assertThat(later).as("a later attempt (e.g. a retry by support) sends nothing either")
                .isInstanceOfSatisfying(Outcome.Review.class, r -> assertThat(r.reason()).contains("nothing sent"));
        assertThat(silent.sends.get()).isEqualTo(2);
        EffectRecord rec = effect(62);
        assertThat(rec.state()).isEqualTo(EffectState.AMBIGUOUS);
        assertThat(rec.repeats()).isEqualTo(1);
    }

    @Test
    void resendMode_countsOnlyRepeatsOfUnknownOutcomes_andSpacesThemFurtherApart() throws Exception {
        // a transient refusal first (known not sent), then three sends that never get an answer
        CountingTransport smtp = new CountingTransport(n -> n == 0
                ? new SendResult.Transient("421", "4.7.0 try again later", null, false) : NO_ANSWER_AFTER_DATA);
        EmailHandler h = handler(smtp, AmbiguityPolicy.resend(2), "worker-1");

        List<Outcome> outcomes = new ArrayList<>();
        for (int attempt = 1; attempt <= 8 && !(last(outcomes) instanceof Outcome.Review); attempt++) {
            outcomes.add(record(h.handle(attempt(63, attempt), HELD)));
        }

        assertThat(smtp.sends.get()).as("refused, sent, resent, resent").isEqualTo(4);
        assertThat(outcomes).extracting(o -> o.getClass().getSimpleName())
                .containsExactly("RetryLater", "RetryLater", "RetryLater", "Review");
        assertThat(((Outcome.RetryLater) outcomes.get(1)).after()).isBetween(Duration.ofSeconds(45), Duration.ofMinutes(1));
        assertThat(((Outcome.RetryLater) outcomes.get(2)).after()).isBetween(Duration.ofSeconds(90), Duration.ofMinutes(2));
        assertThat(effect(63).repeats()).isEqualTo(2);
    }

    @Test
    void resendMode_afterACrash_repeatsAnUnrecordedSendOnlyWithinTheBound() throws Exception {
        CountingTransport smtp = new CountingTransport(EmailHandlerTest::sent);
        EmailHandler h = handler(smtp, AmbiguityPolicy.resend(1), "worker-1");

        h.handle(attempt(64, 1), HELD);            // sent; the process dies before recording
        h.handle(attempt(64, 2), HELD);            // the unknown outcome is sent again; dies again
        Outcome third = record(h.handle(attempt(64, 3), HELD));

        assertThat(smtp.sends.get()).isEqualTo(2);
        assertThat(third).isInstanceOf(Outcome.Review.class);
        assertThat(effect(64).state()).isEqualTo(EffectState.AMBIGUOUS);
    }

    private static Outcome last(List<Outcome> outcomes) {
        return outcomes.isEmpty() ? null : outcomes.getLast();
    }

    // ------------------------------------------------------------------- template version changes

    @Test
    void afterATemplateChange_anEmailAlreadySentStaysSent_andIsNotSentAgain() throws Exception {
        CountingTransport smtp = new CountingTransport(EmailHandlerTest::sent);
        record(handler(smtp, AmbiguityPolicy.review(), "worker-1", V1).handle(attempt(65, 1), HELD));
        assertThat(effect(65).state()).isEqualTo(EffectState.SUCCEEDED);

        // the completion was lost; the message comes back after a deploy with template v2
        Outcome again = record(handler(smtp, AmbiguityPolicy.review(), "worker-2", V2)
                .handle(attempt(65, 2), HELD));

        assertThat(again).isInstanceOfSatisfying(Outcome.Done.class, d ->
                assertThat(d.detail()).contains("\"deduplicated\":true").contains("msg-0"));
        assertThat(smtp.sends.get()).isEqualTo(1);
        assertThat(effect(65).state()).isEqualTo(EffectState.SUCCEEDED);
    }

    @Test
    void afterATemplateChange_anUnknownOutcomeGoesToTheAmbiguityPolicy_inReviewMode() throws Exception {
        CountingTransport silent = new CountingTransport(n -> NO_ANSWER_AFTER_DATA);
        record(handler(silent, AmbiguityPolicy.review(), "worker-1", V1).handle(attempt(66, 1), HELD));
        assertThat(effect(66).state()).isEqualTo(EffectState.AMBIGUOUS);

        Outcome again = record(handler(silent, AmbiguityPolicy.review(), "worker-2", V2)
                .handle(attempt(66, 2), HELD));

        assertThat(again).isInstanceOfSatisfying(Outcome.Review.class, r ->
                assertThat(r.reason()).contains("unknown outcome").doesNotContain("different email"));
        assertThat(silent.sends.get()).isEqualTo(1);
        assertThat(effect(66).state()).isEqualTo(EffectState.AMBIGUOUS);
    }

    @Test
    void afterATemplateChange_anUnrecordedSendGoesToTheAmbiguityPolicy_inResendMode() throws Exception {
        CountingTransport smtp = new CountingTransport(EmailHandlerTest::sent);
        handler(smtp, AmbiguityPolicy.resend(1), "worker-1", V1).handle(attempt(67, 1), HELD);
        // died before recording; the next attempt runs the new template

        Outcome again = record(handler(smtp, AmbiguityPolicy.resend(1), "worker-2", V2)
                .handle(attempt(67, 2), HELD));

        assertThat(again).isInstanceOf(Outcome.Done.class);
        assertThat(version(V1)).isNotEqualTo(version(V2));
        assertThat(smtp.templates).containsExactly(version(V1), version(V2));
        EffectRecord rec = effect(67);
        assertThat(rec.state()).isEqualTo(EffectState.SUCCEEDED);
        assertThat(rec.repeats()).isEqualTo(1);
    }

    @Test
    void theSameKeyForAnotherRecipient_isStillAMismatch_andNothingIsSent() throws Exception {
        CountingTransport smtp = new CountingTransport(EmailHandlerTest::sent);
        EmailHandler h = handler(smtp, AmbiguityPolicy.review(), "worker-1");
        record(h.handle(attempt(68, 1), HELD));
        ClaimedMessage first = attempt(68, 2);
        ClaimedMessage reused = new ClaimedMessage(first.id(), first.createdAt(), first.topic(), first.aggregateType(),
                first.aggregateId(), first.idempotencyKey(), null,
                DispatchFixture.payload(68, "someone.else@example.com", "Customer 68"), 2, 10, 2,
                first.claimedAt(), first.leaseUntil());

        Outcome outcome = h.handle(reused, HELD);

        assertThat(outcome).isInstanceOfSatisfying(Outcome.Failed.class, f ->
                assertThat(f.reason()).contains("different email").contains("nothing sent"));
        assertThat(smtp.sends.get()).isEqualTo(1);
    }
}
