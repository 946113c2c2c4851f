package io.mailroom.support;

import io.mailroom.idempotency.EffectState;
import io.mailroom.idempotency.IdempotencyStore;
import io.mailroom.testing.PostgresExtension;
import org.jooq.Record;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import java.sql.Connection;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;

import static io.mailroom.db.jooq.Tables.AUDIT_LOG;
import static io.mailroom.db.jooq.Tables.OUTBOX_CONTROL;
import static io.mailroom.db.jooq.Tables.OUTBOX_EFFECT;
import static io.mailroom.support.TestMail.Result.FAILED;
import static io.mailroom.support.TestMail.Result.RETRY;
import static io.mailroom.support.TestMail.Result.REVIEW;
import static io.mailroom.support.TestMail.Result.SENT;
import static io.mailroom.support.TestMail.Result.SENT_WITHOUT_RECORD;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** The support queries and actions against real PostgreSQL, with emails finished by a real dispatcher pass. */
class SupportServiceTest {

    @RegisterExtension
    static final PostgresExtension pg = new PostgresExtension();

    private static final Actor ALICE = new Actor("alice", Role.SUPPORT);
    private static final Actor OPS = new Actor("olga", Role.OPERATOR);
    private static final Actor VIEWER = new Actor("vic", Role.VIEWER);

    private SupportService service;

    @BeforeEach
    void setUp() {
        TestMail.truncate(pg.dsl());
        service = new SupportService(pg.dataSource());
    }

    private EmailView email(String key) {
        return service.email(key).orElseThrow();
    }

    @Test
    void emailsOfAnOrderShowStatusRecipientProviderIdAndTimeline() {
        TestMail.confirmation(pg.dsl(), 102);
        TestMail.shipped(pg.dsl(), 102);
        TestMail.confirmation(pg.dsl(), 103);
        TestMail.dispatch(pg.dataSource(), Map.of("email-order-102-shipped", FAILED));

        AboutEmails order = service.emailsOfOrder("102");
        assertThat(order.about().id()).isEqualTo("102");
        assertThat(order.truncated()).isFalse();
        assertThat(order.emails()).extracting(EmailView::key).containsExactly("email-order-102", "email-order-102-shipped");

        EmailView sent = order.emails().get(0);
        assertThat(sent.status()).isEqualTo(EmailStatus.SENT);
        assertThat(sent.kind()).isEqualTo("Order confirmation");
        assertThat(sent.recipient()).isEqualTo("ann102@example.com");
        assertThat(sent.recipientName()).isEqualTo("Ann Lee");
        assertThat(sent.subject()).isEqualTo("Your order 102 is confirmed");
        assertThat(sent.attempts()).isEqualTo(1);
        assertThat(sent.maxAttempts()).isEqualTo(10);
        assertThat(sent.sentAt()).isNotNull();
        assertThat(sent.providerMessageId()).isEqualTo("prov-email-order-102-1");
        assertThat(sent.deliveryRecord()).isEqualTo("succeeded");
        assertThat(sent.actions()).containsExactly(EmailView.RESEND);
        assertThat(sent.timeline()).singleElement().isInstanceOfSatisfying(TimelineEntry.Attempt.class, a -> {
            assertThat(a.outcome()).isEqualTo("done");
            assertThat(a.outcomeText()).isEqualTo("Sent");
            assertThat(a.providerStatus()).isEqualTo("202");
            assertThat(a.providerMessageId()).isEqualTo("prov-email-order-102-1");
            assertThat(a.transport()).isEqualTo("http");
            assertThat(a.worker()).isEqualTo("test-dispatcher");
        });

        EmailView failed = order.emails().get(1);
        assertThat(failed.status()).isEqualTo(EmailStatus.FAILED);
        assertThat(failed.kind()).isEqualTo("Order shipped");
        assertThat(failed.lastError()).contains("550 5.1.1").contains("mailbox unavailable");
        assertThat(failed.sentAt()).isNull();
        // a 550 fails the same way again: closing it (won't send) is the main action, a retry only beside it
        assertThat(failed.actions()).containsExactly(EmailView.CLOSE, EmailView.RETRY);
        assertThat(failed.mainAction()).isEqualTo(EmailView.CLOSE);
        assertThat(failed.timeline()).singleElement().isInstanceOfSatisfying(TimelineEntry.Attempt.class, a -> {
            assertThat(a.outcome()).isEqualTo("failed");
            assertThat(a.providerStatus()).isEqualTo("550");
            assertThat(a.error()).contains("mailbox unavailable");
        });

        assertThat(service.emailsOfOrder("999").emails()).isEmpty();
    }

    @Test
    void statusesInWordsFollowTheQueueRow() {
        TestMail.confirmation(pg.dsl(), 1);
        assertThat(email("email-order-1").status()).isEqualTo(EmailStatus.PENDING);
        assertThat(email("email-order-1").nextAttemptAt()).isNotNull();
        assertThat(email("email-order-1").timeline()).isEmpty();
        assertThat(email("email-order-1").actions()).containsExactly(EmailView.RETRY, EmailView.CANCEL);
        // a claimed row is "sending" although the effect still says pending
        pg.dsl().execute("UPDATE outbox_message SET status = 'running', lease_until = now() + interval '1 minute'");
        assertThat(email("email-order-1").status()).isEqualTo(EmailStatus.SENDING);
        assertThat(email("email-order-1").actions()).isEmpty();
    }

    @Test
    void recipientComesFromThePayloadWhenNoDescriptorWasRecordedAndProviderIdFromTheAttempt() {
        TestMail.confirmation(pg.dsl(), 7);
        TestMail.dispatchAll(pg.dataSource(), SENT_WITHOUT_RECORD);
        EmailView e = email("email-order-7");
        assertThat(e.status()).isEqualTo(EmailStatus.SENT);
        assertThat(e.recipient()).isEqualTo("ann7@example.com");
        assertThat(e.subject()).isNull();
        assertThat(e.deliveryRecord()).isNull();
        assertThat(e.providerMessageId()).isEqualTo("<email-order-7@mailroom>");
        assertThat(e.timeline()).singleElement().isInstanceOfSatisfying(TimelineEntry.Attempt.class,
                a -> assertThat(a.providerStatus()).isEqualTo("250"));
    }

    @Test
    void retryOfAFailedEmailAddsOneAttemptAfterTheNextDispatch() {
        TestMail.confirmation(pg.dsl(), 102);
        TestMail.dispatchAll(pg.dataSource(), FAILED);
        assertThat(email("email-order-102").status()).isEqualTo(EmailStatus.FAILED);

        ActionResult r = service.retry(ALICE, "email-order-102", "customer fixed the mailbox");
        assertThat(r).isInstanceOfSatisfying(ActionResult.Applied.class, a -> {
            assertThat(a.action()).isEqualTo("retry");
            assertThat(a.email().status()).isEqualTo(EmailStatus.PENDING);
            assertThat(a.email().timeline()).hasSize(2).last().isInstanceOfSatisfying(TimelineEntry.Action.class, act -> {
                assertThat(act.actor()).isEqualTo("alice");
                assertThat(act.role()).isEqualTo("support");
                assertThat(act.reason()).isEqualTo("customer fixed the mailbox");
                assertThat(act.actionText()).isEqualTo("Retry requested by alice (support)");
            });
        });
        assertThat(TestMail.dispatchAll(pg.dataSource(), SENT)).isEqualTo(1);

        EmailView after = email("email-order-102");
        assertThat(after.status()).isEqualTo(EmailStatus.SENT);
        assertThat(after.attempts()).isEqualTo(2);
        assertThat(after.providerMessageId()).isEqualTo("prov-email-order-102-2");
        assertThat(after.timeline()).extracting(t -> t instanceof TimelineEntry.Attempt a ? "attempt " + a.attempt() + " " + a.outcome()
                        : ((TimelineEntry.Action) t).action())
                .containsExactly("attempt 1 failed", "retry", "attempt 2 done");

        Record audit = pg.dsl().selectFrom(AUDIT_LOG).fetchSingle();
        assertThat(audit.get(AUDIT_LOG.ACTOR)).isEqualTo("alice");
        assertThat(audit.get(AUDIT_LOG.ROLE)).isEqualTo("support");
        assertThat(audit.get(AUDIT_LOG.ACTION)).isEqualTo("retry");
        assertThat(audit.get(AUDIT_LOG.IDEMPOTENCY_KEY)).isEqualTo("email-order-102");
        assertThat(audit.get(AUDIT_LOG.REASON)).isEqualTo("customer fixed the mailbox");
        assertThat(audit.get(AUDIT_LOG.DETAIL).data()).contains("\"from\"").contains("failed");
        assertThat(audit.get(AUDIT_LOG.AT)).isNotNull();
    }

    @Test
    void resendOfASentEmailQueuesANewKeyThatIsSentAsASecondEmail() {
        TestMail.confirmation(pg.dsl(), 102);
        TestMail.dispatchAll(pg.dataSource(), SENT);

        ActionResult r = service.resend(ALICE, "email-order-102", "customer deleted it by mistake");
        assertThat(r).isInstanceOfSatisfying(ActionResult.Applied.class, a -> {
            assertThat(a.newKey()).isEqualTo("email-order-102-resend-1");
            assertThat(a.email().key()).isEqualTo("email-order-102");
            assertThat(a.email().status()).isEqualTo(EmailStatus.SENT);
            assertThat(a.email().resentAs()).containsExactly("email-order-102-resend-1");
        });
        assertThat(pg.dsl().fetchValue("SELECT resend_of FROM outbox_effect WHERE idempotency_key = 'email-order-102-resend-1'"))
                .isEqualTo("email-order-102");
        assertThat(TestMail.dispatchAll(pg.dataSource(), SENT)).isEqualTo(1);

        assertThat(pg.dsl().fetchCount(OUTBOX_EFFECT, OUTBOX_EFFECT.STATUS.eq("done"))).isEqualTo(2);
        AboutEmails order = service.emailsOfOrder("102");
        assertThat(order.emails()).extracting(EmailView::key).containsExactly("email-order-102", "email-order-102-resend-1");
        EmailView resend = order.emails().get(1);
        assertThat(resend.status()).isEqualTo(EmailStatus.SENT);
        assertThat(resend.resendOf()).isEqualTo("email-order-102");
        assertThat(resend.recipient()).isEqualTo("ann102@example.com");
        assertThat(resend.providerMessageId()).isEqualTo("prov-email-order-102-resend-1-1");
        assertThat(resend.timeline()).first().isInstanceOfSatisfying(TimelineEntry.Action.class, a -> {
            assertThat(a.action()).isEqualTo(AuditActions.RESEND_CREATED);
            assertThat(a.reason()).isEqualTo("customer deleted it by mistake");
        });
        assertThat(order.emails().get(0).timeline()).last().isInstanceOfSatisfying(TimelineEntry.Action.class, a -> {
            assertThat(a.action()).isEqualTo("resend");
            assertThat(a.newKey()).isEqualTo("email-order-102-resend-1");
            assertThat(a.actionText()).isEqualTo("Resent as email-order-102-resend-1 by alice (support)");
        });

        // the next resend of the original, and a resend of the resend, continue the numbering
        assertThat(service.resend(ALICE, "email-order-102", "again")).isInstanceOfSatisfying(ActionResult.Applied.class,
                a -> assertThat(a.newKey()).isEqualTo("email-order-102-resend-2"));
        assertThat(service.resend(ALICE, "email-order-102-resend-1", "and again")).isInstanceOfSatisfying(ActionResult.Applied.class,
                a -> assertThat(a.newKey()).isEqualTo("email-order-102-resend-3"));
        assertThat(pg.dsl().fetchCount(AUDIT_LOG, AUDIT_LOG.ACTION.eq("resend"))).isEqualTo(3);
    }

    @Test
    void resendNeedsAReasonAndASentOrReviewEmail() {
        TestMail.confirmation(pg.dsl(), 5);
        assertThatThrownBy(() -> service.resend(ALICE, "email-order-5", "  "))
                .isInstanceOfSatisfying(InvalidParameterException.class, e -> assertThat(e.parameter()).isEqualTo("reason"));
        assertThat(service.resend(ALICE, "email-order-5", "why not")).isInstanceOfSatisfying(ActionResult.NotAllowed.class,
                n -> {
                    assertThat(n.current()).isEqualTo(EmailStatus.PENDING);
                    assertThat(n.message()).contains("only a sent email or one in review can be resent");
                });
        assertThat(service.resend(ALICE, "email-order-404", "why not")).isInstanceOf(ActionResult.NotFound.class);
        assertThat(pg.dsl().fetchCount(AUDIT_LOG)).isZero();
        assertThat(pg.dsl().fetchCount(OUTBOX_EFFECT)).isEqualTo(1);
    }

    @Test
    void resendOfASentEmailWhoseContentIsGoneIsRefusedAndChangesNothing() {
        TestMail.confirmation(pg.dsl(), 6);
        TestMail.dispatchAll(pg.dataSource(), SENT);
        pg.dsl().execute("DELETE FROM outbox_message"); // retention removed the finished queue row
        EmailView e = email("email-order-6");
        assertThat(e.status()).isEqualTo(EmailStatus.SENT);
        assertThat(e.contentKept()).isFalse();
        assertThat(e.actions()).isEmpty();
        assertThat(e.timeline()).hasSize(1);
        assertThat(service.resend(ALICE, "email-order-6", "lost")).isInstanceOfSatisfying(ActionResult.NotAllowed.class,
                n -> assertThat(n.message()).contains("no longer kept"));
        assertThat(pg.dsl().fetchCount(OUTBOX_EFFECT)).isEqualTo(1);
        assertThat(pg.dsl().fetchCount(AUDIT_LOG)).isZero();
    }

    @Test
    void anEmailInReviewIsConfirmedAsSentAndItsIdempotencyRecordResolved() {
        TestMail.confirmation(pg.dsl(), 8);
        TestMail.dispatchAll(pg.dataSource(), REVIEW);
        EmailView review = email("email-order-8");
        assertThat(review.status()).isEqualTo(EmailStatus.REVIEW);
        assertThat(review.deliveryRecord()).isEqualTo("ambiguous");
        assertThat(review.actions()).containsExactly(EmailView.CONFIRM_SENT, EmailView.RESEND, EmailView.CLOSE);

        ActionResult r = service.confirmSent(ALICE, "email-order-8", "prov-seen-in-dashboard", "customer has it");
        assertThat(r).isInstanceOfSatisfying(ActionResult.Applied.class, a -> {
            assertThat(a.email().status()).isEqualTo(EmailStatus.SENT);
            assertThat(a.email().providerMessageId()).isEqualTo("prov-seen-in-dashboard");
            assertThat(a.email().deliveryRecord()).isEqualTo("succeeded");
            assertThat(a.email().sentAt()).isNotNull();
        });
        var record = new IdempotencyStore().find(pg.dsl(), "email-order-8").orElseThrow();
        assertThat(record.state()).isEqualTo(EffectState.SUCCEEDED);
        assertThat(record.descriptorJson()).contains("\"confirmedBy\": \"alice\"");
        assertThat(pg.dsl().fetchValue("SELECT detail->>'deliveryRecord' FROM audit_log WHERE action = 'confirm_sent'"))
                .isEqualTo("ambiguous");
        // not twice
        assertThat(service.confirmSent(ALICE, "email-order-8", null, null)).isInstanceOf(ActionResult.NotAllowed.class);
    }

    @Test
    void resendOfAnEmailInReviewClosesItAndQueuesTheNewKeyInOneTransaction() {
        TestMail.confirmation(pg.dsl(), 9);
        TestMail.dispatchAll(pg.dataSource(), REVIEW);
        ActionResult r = service.resend(ALICE, "email-order-9", "not received; sending again");
        assertThat(r).isInstanceOfSatisfying(ActionResult.Applied.class, a -> {
            assertThat(a.newKey()).isEqualTo("email-order-9-resend-1");
            assertThat(a.email().status()).isEqualTo(EmailStatus.FAILED);
        });
        assertThat(TestMail.dispatchAll(pg.dataSource(), SENT)).isEqualTo(1);
        assertThat(email("email-order-9-resend-1").status()).isEqualTo(EmailStatus.SENT);
    }

    @Test
    void resendOfAnEmailInReviewAuditsThatItWasInReview() {
        TestMail.confirmation(pg.dsl(), 19);
        TestMail.dispatchAll(pg.dataSource(), REVIEW);
        assertThat(service.resend(ALICE, "email-order-19", "not received")).isInstanceOf(ActionResult.Applied.class);
        // the original is closed as failed in the same transaction; the audit row names the state it was resent from
        assertThat(pg.dsl().fetchValue("SELECT detail->>'from' FROM audit_log WHERE action = 'resend'")).isEqualTo("review");
    }

    @Test
    void aSupersededOriginalOffersNoRetryAndRefusesOne() {
        TestMail.confirmation(pg.dsl(), 29);
        TestMail.dispatchAll(pg.dataSource(), REVIEW);
        assertThat(service.resend(ALICE, "email-order-29", "not received")).isInstanceOf(ActionResult.Applied.class);
        EmailView original = email("email-order-29");
        assertThat(original.status()).isEqualTo(EmailStatus.FAILED);
        assertThat(original.resentAs()).containsExactly("email-order-29-resend-1");
        // a retry would send the original as well as its resend
        assertThat(original.actions()).doesNotContain(EmailView.RETRY);
        assertThat(service.retry(ALICE, "email-order-29", "try it")).isInstanceOfSatisfying(ActionResult.NotAllowed.class,
                n -> assertThat(n.message()).contains("resent as email-order-29-resend-1"));
        assertThat(TestMail.dispatchAll(pg.dataSource(), SENT)).isEqualTo(1); // the resend only
        assertThat(email("email-order-29").status()).isEqualTo(EmailStatus.FAILED);
        assertThat(pg.dsl().fetchCount(AUDIT_LOG, AUDIT_LOG.ACTION.eq("retry"))).isZero();
    }

    @Test
    void aSentEmailDoesNotCarryTheErrorOfAnEarlierAttempt() {
        TestMail.confirmation(pg.dsl(), 31);
        TestMail.dispatchAll(pg.dataSource(), RETRY);
        assertThat(email("email-order-31").lastError()).isEqualTo("HTTP 503: provider busy");
        TestMail.makeDue(pg.dsl());
        TestMail.dispatchAll(pg.dataSource(), SENT);
        EmailView sent = email("email-order-31");
        assertThat(sent.status()).isEqualTo(EmailStatus.SENT);
        assertThat(sent.lastError()).isNull();
        // the history keeps it
        assertThat(sent.timeline()).first().isInstanceOfSatisfying(TimelineEntry.Attempt.class,
                a -> assertThat(a.error()).isEqualTo("HTTP 503: provider busy"));
        assertThat(service.emails(EmailFilter.of(EmailStatus.SENT)).emails()).singleElement()
                .satisfies(e -> assertThat(e.lastError()).isNull());
    }

    @Test
    void anAttemptTheBreakerHeldBackSaysSoAndNotThatTheDispatcherWasStopping() {
        TestMail.confirmation(pg.dsl(), 32);
        TestMail.dispatchAll(pg.dataSource(), TestMail.Result.NOT_ATTEMPTED);
        EmailView e = email("email-order-32");
        assertThat(e.status()).isEqualTo(EmailStatus.PENDING);
        assertThat(e.attempts()).isZero();
        assertThat(e.timeline()).singleElement().isInstanceOfSatisfying(TimelineEntry.Attempt.class, a -> {
            assertThat(a.outcome()).isEqualTo("released");
            assertThat(a.outcomeText()).isEqualTo("Held back without trying; will try again")
                    .doesNotContain("stopping");
            assertThat(a.error()).isEqualTo(TestMail.BREAKER_OPEN);
        });
    }

    @Test
    void anOrphanedClaimHandedBackSaysSo() {
        TestMail.confirmation(pg.dsl(), 33);
        var config = io.mailroom.outbox.runtime.DispatcherConfig.builder().workerId("test-dispatcher").listenForNotifications(false).build();
        var dispatcher = new io.mailroom.outbox.runtime.Dispatcher(pg.dataSource(), config,
                Map.of(TestMail.CONFIRMATION, (m, c) -> io.mailroom.outbox.runtime.Outcome.done()));
        // a claim of this very process whose commit went through while the claimer's session was lost: running, never handled
        pg.dsl().execute("UPDATE outbox_message SET status = 'running', claimed_by = 'test-dispatcher', attempts = 1, "
                + "claimed_incarnation = ?, claim_version = claim_version + 1, claimed_at = now() - interval '1 minute', "
                + "lease_until = now() + interval '1 minute' WHERE idempotency_key = 'email-order-33'", dispatcher.incarnation());
        assertThat(dispatcher.releaseOrphanedClaims()).isEqualTo(1);
        assertThat(email("email-order-33").timeline()).singleElement().isInstanceOfSatisfying(TimelineEntry.Attempt.class, a -> {
            assertThat(a.outcome()).isEqualTo("released");
            assertThat(a.outcomeText()).isEqualTo("Handed back without trying (its claim was orphaned: the dispatcher lost "
                    + "its database session while claiming)");
        });
    }

    @Test
    void aClaimOfAProcessThatStoppedSaysItWasInterrupted() {
        TestMail.confirmation(pg.dsl(), 35);
        // the process before this one, under the same worker id, was killed while holding the claim
        pg.dsl().execute("UPDATE outbox_message SET status = 'running', claimed_by = 'restarted', attempts = 1, "
                + "claimed_incarnation = 'the-one-before', claim_version = claim_version + 1, claimed_at = now(), "
                + "lease_until = now() + interval '1 minute' WHERE idempotency_key = 'email-order-35'");
        var config = io.mailroom.outbox.runtime.DispatcherConfig.builder().workerId("restarted").listenForNotifications(false).build();
        var dispatcher = new io.mailroom.outbox.runtime.Dispatcher(pg.dataSource(), config,
                Map.of(TestMail.CONFIRMATION, (m, c) -> io.mailroom.outbox.runtime.Outcome.done()));
        assertThat(dispatcher.interruptPredecessorsClaims()).isEqualTo(1);
        assertThat(email("email-order-35").timeline()).singleElement().isInstanceOfSatisfying(TimelineEntry.Attempt.class, a -> {
            assertThat(a.outcome()).isEqualTo("interrupted");
            assertThat(a.outcomeText()).isEqualTo("The sender's process stopped during this attempt (it may have sent)");
            assertThat(a.error()).startsWith("interrupted: the process holding the claim stopped 1 time");
        });
    }

    @Test
    void aClaimHandedBackWhenTheDispatcherStopsSaysSo() throws Exception {
        TestMail.confirmation(pg.dsl(), 34);
        var handling = new java.util.concurrent.CountDownLatch(1);
        var never = new java.util.concurrent.CountDownLatch(1);
        var config = io.mailroom.outbox.runtime.DispatcherConfig.builder().workerId("stopping-one").listenForNotifications(false)
                .shutdownDeadline(Duration.ofMillis(300)).build();
        try (var dispatcher = new io.mailroom.outbox.runtime.Dispatcher(pg.dataSource(), config, Map.of(TestMail.CONFIRMATION, (m, c) -> {
            handling.countDown();
            never.await(60, java.util.concurrent.TimeUnit.SECONDS); // until the stop hands it back and interrupts it
            return io.mailroom.outbox.runtime.Outcome.done();
        }))) {
            dispatcher.start();
            assertThat(handling.await(10, java.util.concurrent.TimeUnit.SECONDS)).isTrue();
        }
        assertThat(email("email-order-34").timeline()).singleElement().isInstanceOfSatisfying(TimelineEntry.Attempt.class, a -> {
            assertThat(a.outcome()).isEqualTo("released");
            assertThat(a.outcomeText()).isEqualTo("Handed back without trying (dispatcher stopping)");
        });
    }

    @Test
    void cancelStopsAWaitingEmailAndOnlyAWaitingOne() {
        TestMail.confirmation(pg.dsl(), 11);
        assertThat(service.cancel(ALICE, "email-order-11", "order was cancelled")).isInstanceOfSatisfying(ActionResult.Applied.class,
                a -> assertThat(a.email().status()).isEqualTo(EmailStatus.CANCELLED));
        assertThat(TestMail.dispatchAll(pg.dataSource(), SENT)).isZero();
        assertThat(service.cancel(ALICE, "email-order-11", null)).isInstanceOfSatisfying(ActionResult.NotAllowed.class,
                n -> assertThat(n.current()).isEqualTo(EmailStatus.CANCELLED));
        assertThat(email("email-order-11").timeline()).singleElement().isInstanceOfSatisfying(TimelineEntry.Action.class,
                a -> assertThat(a.actionText()).isEqualTo("Cancelled by alice (support)"));
    }

    @Test
    void closeEndsAFailedEmailAsWontSendWithFromToAndReasonAudited() {
        TestMail.confirmation(pg.dsl(), 40);
        TestMail.dispatchAll(pg.dataSource(), FAILED);
        assertThatThrownBy(() -> service.close(ALICE, "email-order-40", " "))
                .isInstanceOfSatisfying(InvalidParameterException.class, e -> assertThat(e.parameter()).isEqualTo("reason"));
        assertThatThrownBy(() -> service.close(VIEWER, "email-order-40", "no")).isInstanceOf(AccessDeniedException.class);

        ActionResult r = service.close(ALICE, "email-order-40", "the renderer refuses the customer's name");
        assertThat(r).isInstanceOfSatisfying(ActionResult.Applied.class, a -> {
            assertThat(a.action()).isEqualTo(AuditActions.CLOSE);
            assertThat(a.email().status()).isEqualTo(EmailStatus.CLOSED);
            assertThat(a.email().statusText()).isEqualTo("Closed: won't send");
            assertThat(a.email().actions()).isEmpty();
            assertThat(a.email().mainAction()).isNull();
            assertThat(a.email().lastError()).contains("550"); // why it never went out stays visible
            assertThat(a.email().timeline()).last().isInstanceOfSatisfying(TimelineEntry.Action.class, act -> {
                assertThat(act.actionText()).isEqualTo("Closed (won't send) by alice (support)");
                assertThat(act.reason()).isEqualTo("the renderer refuses the customer's name");
            });
        });
        Record audit = pg.dsl().selectFrom(AUDIT_LOG).fetchSingle();
        assertThat(audit.get(AUDIT_LOG.ACTION)).isEqualTo("close");
        assertThat(audit.get(AUDIT_LOG.REASON)).isEqualTo("the renderer refuses the customer's name");
        assertThat(pg.dsl().fetchValue("SELECT (detail->>'from') || '->' || (detail->>'to') || ' ' || (detail->>'deliveryRecord') "
                + "FROM audit_log")).isEqualTo("failed->closed failed");
        assertThat(pg.dsl().fetchValue("SELECT status FROM outbox_message")).isEqualTo("closed");
        assertThat(pg.dsl().fetchValue("SELECT finished_at IS NOT NULL FROM outbox_effect")).isEqualTo(true);

        // final: nothing sends it, nothing reopens it; the lists and counts know it
        assertThat(TestMail.dispatchAll(pg.dataSource(), SENT)).isZero();
        assertThat(service.retry(ALICE, "email-order-40", null)).isInstanceOfSatisfying(ActionResult.NotAllowed.class,
                n -> assertThat(n.current()).isEqualTo(EmailStatus.CLOSED));
        assertThat(service.close(ALICE, "email-order-40", "again")).isInstanceOfSatisfying(ActionResult.NotAllowed.class,
                n -> assertThat(n.message()).isEqualTo("only a failed email or one in review can be closed; this one is closed: won't send"));
        assertThat(service.emails(EmailFilter.of(EmailStatus.CLOSED)).emails()).extracting(EmailView::key).containsExactly("email-order-40");
        assertThat(service.emails(EmailFilter.of(EmailStatus.FAILED)).emails()).isEmpty();
        assertThat(service.stats().counts()).containsEntry("failed", 0L);
        assertThat(pg.dsl().fetchCount(AUDIT_LOG)).isEqualTo(1);
    }

    @Test
    void closeTakesAnEmailInReviewButNotAWaitingOneNorOneTheProviderAccepted() {
        TestMail.confirmation(pg.dsl(), 41);
        TestMail.confirmation(pg.dsl(), 42);
        TestMail.dispatch(pg.dataSource(), Map.of("email-order-41", REVIEW, "email-order-42", REVIEW));
        assertThat(service.close(ALICE, "email-order-41", "customer cancelled the order")).isInstanceOfSatisfying(
                ActionResult.Applied.class, a -> {
                    assertThat(a.email().status()).isEqualTo(EmailStatus.CLOSED);
                    assertThat(a.email().deliveryRecord()).isEqualTo("ambiguous"); // the unknown outcome stays on record
                });
        assertThat(pg.dsl().fetchValue("SELECT detail->>'from' FROM audit_log")).isEqualTo("review");

        // the delivery record says the provider accepted it: it was sent, so it is confirmed, not closed
        pg.dsl().execute("UPDATE idempotency_record SET state = 'succeeded', completed_at = now() WHERE effect_key = 'email-order-42'");
        assertThat(email("email-order-42").actions()).containsExactly(EmailView.CONFIRM_SENT, EmailView.RESEND);
        assertThat(service.close(ALICE, "email-order-42", "x")).isInstanceOfSatisfying(ActionResult.NotAllowed.class,
                n -> assertThat(n.message()).contains("confirm it as sent"));
        assertThat(email("email-order-42").status()).isEqualTo(EmailStatus.REVIEW);

        TestMail.confirmation(pg.dsl(), 43);
        assertThat(service.close(ALICE, "email-order-43", "x")).isInstanceOfSatisfying(ActionResult.NotAllowed.class,
                n -> assertThat(n.current()).isEqualTo(EmailStatus.PENDING));
        assertThat(service.close(ALICE, "email-order-404", "x")).isInstanceOf(ActionResult.NotFound.class);
        assertThat(pg.dsl().fetchCount(AUDIT_LOG)).isEqualTo(1);
    }

    @Test
    void closeOfARowADispatcherHoldsAnswersBusyAtOnce() throws Exception {
        TestMail.confirmation(pg.dsl(), 44);
        TestMail.dispatchAll(pg.dataSource(), FAILED);
        try (Connection worker = TestMail.lockQueueRow(pg.newConnection(), "email-order-44")) {
            long started = System.nanoTime();
            assertThat(service.close(ALICE, "email-order-44", "x")).isEqualTo(new ActionResult.Busy("email-order-44"));
            assertThat(Duration.ofNanos(System.nanoTime() - started)).isLessThan(Duration.ofSeconds(3));
            worker.rollback();
        }
        assertThat(pg.dsl().fetchCount(AUDIT_LOG)).isZero();
        assertThat(email("email-order-44").status()).isEqualTo(EmailStatus.FAILED);
    }

    @Test
    void retryStaysTheMainActionWhenTheTriesRanOutOnTransientErrors() {
        TestMail.confirmation(pg.dsl(), 45);
        pg.dsl().execute("UPDATE outbox_message SET max_attempts = 1");
        TestMail.dispatchAll(pg.dataSource(), RETRY);
        EmailView e = email("email-order-45");
        assertThat(e.status()).isEqualTo(EmailStatus.FAILED);
        assertThat(e.actions()).containsExactly(EmailView.RETRY, EmailView.CLOSE);
        assertThat(e.mainAction()).isEqualTo(EmailView.RETRY);
        // a render failure is permanent too (no provider detail at all)
        TestMail.confirmation(pg.dsl(), 46);
        var config = io.mailroom.outbox.runtime.DispatcherConfig.builder().workerId("test-dispatcher").listenForNotifications(false).build();
        new io.mailroom.outbox.runtime.Dispatcher(pg.dataSource(), config, Map.of(TestMail.CONFIRMATION,
                (m, c) -> io.mailroom.outbox.runtime.Outcome.failed("cannot render the email: customerName has a control character"))).runOnce();
        assertThat(email("email-order-46").mainAction()).isEqualTo(EmailView.CLOSE);
    }

    @Test
    void theSmtpServersReplyIsKeptWithTheAttemptAndTheSentEmail() {
        TestMail.confirmation(pg.dsl(), 47);
        TestMail.dispatchAll(pg.dataSource(), SENT_WITHOUT_RECORD);
        EmailView e = email("email-order-47");
        assertThat(e.providerReply()).isEqualTo("250 2.0.0 Ok: queued as Q1X47");
        assertThat(e.timeline()).singleElement().isInstanceOfSatisfying(TimelineEntry.Attempt.class,
                a -> assertThat(a.providerReply()).isEqualTo("250 2.0.0 Ok: queued as Q1X47"));
    }

    @Test
    void actionsOnARowADispatcherHoldsAnswerBusyAtOnceAndChangeNothing() throws Exception {
        TestMail.confirmation(pg.dsl(), 12);
        TestMail.dispatchAll(pg.dataSource(), FAILED);
        TestMail.confirmation(pg.dsl(), 13);
        TestMail.dispatchAll(pg.dataSource(), SENT);
        try (Connection worker = TestMail.lockQueueRow(pg.newConnection(), "email-order-12");
             Connection completer = TestMail.lockEffectRow(pg.newConnection(), "email-order-13")) {
            long started = System.nanoTime();
            assertThat(service.retry(ALICE, "email-order-12", null)).isEqualTo(new ActionResult.Busy("email-order-12"));
            assertThat(service.resend(ALICE, "email-order-13", "x")).isEqualTo(new ActionResult.Busy("email-order-13"));
            assertThat(Duration.ofNanos(System.nanoTime() - started)).isLessThan(Duration.ofSeconds(3));
            worker.rollback();
            completer.rollback();
        }
        assertThat(pg.dsl().fetchCount(AUDIT_LOG)).isZero();
        assertThat(email("email-order-12").status()).isEqualTo(EmailStatus.FAILED);
        assertThat(pg.dsl().fetchCount(OUTBOX_EFFECT)).isEqualTo(2);
        // once the lock is gone, the same action goes through
        assertThat(service.retry(ALICE, "email-order-12", null)).isInstanceOf(ActionResult.Applied.class);
    }

    @Test
    void rolesAreCheckedByTheServiceToo() {
        TestMail.confirmation(pg.dsl(), 14);
        assertThatThrownBy(() -> service.cancel(VIEWER, "email-order-14", null)).isInstanceOf(AccessDeniedException.class);
        assertThatThrownBy(() -> service.pause(ALICE, "*", null)).isInstanceOf(AccessDeniedException.class)
                .hasMessageContaining("needs the role operator");
        assertThat(pg.dsl().fetchCount(AUDIT_LOG)).isZero();
    }

    @Test
    void pauseAndResumeSetTheSwitchEveryDispatcherReadsAndAreAudited() {
        ControlState paused = service.pause(OPS, null, "provider incident");
        assertThat(paused.allPaused()).isTrue();
        assertThat(paused.switches()).singleElement().satisfies(s -> {
            assertThat(s.scope()).isEqualTo("*");
            assertThat(s.updatedBy()).isEqualTo("olga");
            assertThat(s.reason()).isEqualTo("provider incident");
        });
        assertThat(new io.mailroom.outbox.admin.OutboxControl(pg.dataSource()).pausedScopes()).containsExactly("*");
        // a paused dispatcher claims nothing (it reads the switch at start and every few seconds)
        TestMail.confirmation(pg.dsl(), 15);
        var config = io.mailroom.outbox.runtime.DispatcherConfig.builder().workerId("paused-one").listenForNotifications(false).build();
        try (var dispatcher = new io.mailroom.outbox.runtime.Dispatcher(pg.dataSource(), config,
                Map.of(TestMail.CONFIRMATION, (m, c) -> io.mailroom.outbox.runtime.Outcome.done()))) {
            dispatcher.start();
            org.awaitility.Awaitility.await().during(Duration.ofMillis(1500)).atMost(Duration.ofSeconds(5))
                    .until(() -> email("email-order-15").status() == EmailStatus.PENDING);
            ControlState resumed = service.resume(OPS, "*", "incident over");
            assertThat(resumed.allPaused()).isFalse();
            org.awaitility.Awaitility.await().atMost(Duration.ofSeconds(10))
                    .until(() -> email("email-order-15").status() == EmailStatus.SENT);
        }
        assertThat(service.pause(OPS, "email.order_shipped", null).pausedScopes()).containsExactly("email.order_shipped");
        assertThat(pg.dsl().fetchCount(OUTBOX_CONTROL)).isEqualTo(2);
        assertThat(pg.dsl().select(AUDIT_LOG.ACTION, AUDIT_LOG.ACTOR, AUDIT_LOG.ROLE).from(AUDIT_LOG).orderBy(AUDIT_LOG.ID)
                .fetch(r -> r.value1() + " " + r.value2() + " " + r.value3()))
                .containsExactly("pause olga operator", "resume olga operator", "pause olga operator");
        assertThatThrownBy(() -> service.pause(OPS, "<script>", null))
                .isInstanceOfSatisfying(InvalidParameterException.class, e -> assertThat(e.parameter()).isEqualTo("scope"));
    }

    @Test
    void aPauseWhoseAuditRowCannotBeWrittenDoesNotPause() {
        // the switch and its audit row are one transaction: no audit row, no switch
        pg.dsl().execute("""
                CREATE FUNCTION refuse_audit() RETURNS trigger LANGUAGE plpgsql AS
                $$ BEGIN RAISE EXCEPTION 'audit refused by the test'; END $$""");
        pg.dsl().execute("CREATE TRIGGER refuse_audit BEFORE INSERT ON audit_log FOR EACH ROW EXECUTE FUNCTION refuse_audit()");
        try {
            assertThatThrownBy(() -> service.pause(OPS, "*", "provider incident"))
                    .hasStackTraceContaining("audit refused by the test");
            assertThat(pg.dsl().fetchCount(OUTBOX_CONTROL)).isZero();
            assertThat(new io.mailroom.outbox.admin.OutboxControl(pg.dataSource()).pausedScopes()).isEmpty();
        } finally {
            pg.dsl().execute("DROP TRIGGER refuse_audit ON audit_log");
            pg.dsl().execute("DROP FUNCTION refuse_audit()");
        }
    }

    @Test
    void listsByStatusArePagedWithACursorAndFilteredByTime() {
        for (int i = 1; i <= 5; i++) {
            TestMail.confirmation(pg.dsl(), 200 + i);
        }
        TestMail.confirmation(pg.dsl(), 300);
        TestMail.dispatch(pg.dataSource(), key -> key.equals("email-order-300") ? SENT : FAILED);
        // spread the failures over time so the order is known: 201 oldest ... 205 newest
        for (int i = 1; i <= 5; i++) {
            pg.dsl().execute("UPDATE outbox_effect SET updated_at = now() - make_interval(mins => {0}) WHERE idempotency_key = {1}",
                    60 - i, "email-order-" + (200 + i));
        }
        EmailPage first = service.emails(new EmailFilter(EmailStatus.FAILED, null, null, null, null, 2));
        assertThat(first.emails()).extracting(EmailView::key).containsExactly("email-order-205", "email-order-204");
        assertThat(first.emails()).allSatisfy(e -> assertThat(e.timeline()).isNull());
        assertThat(first.nextCursor()).isNotNull();
        EmailPage second = service.emails(new EmailFilter(EmailStatus.FAILED, null, null, null, Cursor.decode("cursor", first.nextCursor()), 2));
        assertThat(second.emails()).extracting(EmailView::key).containsExactly("email-order-203", "email-order-202");
        EmailPage third = service.emails(new EmailFilter(EmailStatus.FAILED, null, null, null, Cursor.decode("cursor", second.nextCursor()), 2));
        assertThat(third.emails()).extracting(EmailView::key).containsExactly("email-order-201");
        assertThat(third.nextCursor()).isNull();

        Instant now = Instant.now();
        EmailPage recent = service.emails(new EmailFilter(EmailStatus.FAILED, now.minus(Duration.ofMinutes(57)).minusSeconds(30),
                null, null, null, 50));
        assertThat(recent.emails()).extracting(EmailView::key).containsExactly("email-order-205", "email-order-204", "email-order-203");
        EmailPage older = service.emails(new EmailFilter(EmailStatus.FAILED, null, now.minus(Duration.ofMinutes(57)).minusSeconds(30),
                null, null, 50));
        assertThat(older.emails()).extracting(EmailView::key).containsExactly("email-order-202", "email-order-201");
        assertThat(service.emails(EmailFilter.of(EmailStatus.SENT)).emails()).extracting(EmailView::key).containsExactly("email-order-300");
        assertThat(service.emails(EmailFilter.of(EmailStatus.REVIEW)).emails()).isEmpty();
    }

    @Test
    void pendingOlderThanFindsOnlyEmailsWaitingLongerThanThat() {
        TestMail.confirmation(pg.dsl(), 401);
        TestMail.confirmation(pg.dsl(), 402);
        pg.dsl().execute("UPDATE outbox_effect SET created_at = now() - interval '2 hours' WHERE idempotency_key = 'email-order-401'");
        EmailPage stuck = service.emails(new EmailFilter(EmailStatus.PENDING, null, null, Duration.ofMinutes(30), null, 50));
        assertThat(stuck.emails()).extracting(EmailView::key).containsExactly("email-order-401");
        assertThat(service.emails(EmailFilter.of(EmailStatus.PENDING)).emails()).hasSize(2);
    }

    @Test
    void statsCountTheQueueAndReconstructThePendingDepthOfTheLastHour() {
        TestMail.confirmation(pg.dsl(), 501);
        TestMail.confirmation(pg.dsl(), 502);
        TestMail.confirmation(pg.dsl(), 503);
        TestMail.confirmation(pg.dsl(), 504);
        TestMail.dispatch(pg.dataSource(), Map.of("email-order-502", FAILED, "email-order-503", RETRY, "email-order-504", REVIEW));
        TestMail.confirmation(pg.dsl(), 505);
        // an email created two hours ago that is still waiting: the oldest pending one
        TestMail.confirmation(pg.dsl(), 506);
        pg.dsl().transaction(cfg -> { // one transaction: one now() for the queue row and its effect
            cfg.dsl().execute("UPDATE outbox_message SET created_at = now() - interval '2 hours' WHERE idempotency_key = 'email-order-506'");
            cfg.dsl().execute("UPDATE outbox_effect SET created_at = now() - interval '2 hours', "
                    + "message_created_at = now() - interval '2 hours' WHERE idempotency_key = 'email-order-506'");
        });
        // the transient failure waits for its backoff (made long so a slow machine cannot catch it up)
        pg.dsl().execute("UPDATE outbox_message SET available_at = now() + interval '1 hour' WHERE idempotency_key = 'email-order-503'");

        QueueStats s = service.stats();
        assertThat(s.counts()).containsEntry("pending", 3L).containsEntry("sending", 0L)
                .containsEntry("failed", 1L).containsEntry("review", 1L);
        assertThat(s.pendingDue()).isEqualTo(2L); // 503 waits for its backoff
        assertThat(s.oldestPendingAgeSeconds()).isBetween(7190L, 7300L);
        assertThat(s.lastHour()).isEqualTo(new QueueStats.Window(1, 1, 1, 1));
        assertThat(s.lastMinute()).isEqualTo(new QueueStats.Window(1, 1, 1, 1));
        assertThat(s.perMinute()).hasSize(60);
        QueueStats.Minute last = s.perMinute().getLast();
        assertThat(last.pendingDepth()).isEqualTo(3);
        assertThat(last.sent() + s.perMinute().get(58).sent()).isEqualTo(1);
        assertThat(last.failed() + s.perMinute().get(58).failed()).isEqualTo(3); // failed, retry and review tries
        // an hour ago only the email from two hours ago was waiting
        assertThat(s.perMinute().getFirst().pendingDepth()).isEqualTo(1);
        assertThat(s.paused()).isEmpty();
        assertThat(s.transportStateKnown()).isFalse();
        assertThat(s.transports()).isEmpty();

        SupportService withBreakers = new SupportService(pg.dataSource(),
                () -> List.of(new TransportStatus.TransportState("smtp", "open")));
        assertThat(withBreakers.stats().transports()).containsExactly(new TransportStatus.TransportState("smtp", "open"));
        assertThat(withBreakers.stats().transportStateKnown()).isTrue();
    }

    @Test
    void malformedInputIsRefusedWithTheParameterNamed() {
        assertThatThrownBy(() -> service.emailsOfOrder("10 2")).isInstanceOfSatisfying(InvalidParameterException.class,
                e -> assertThat(e.parameter()).isEqualTo("orderId"));
        assertThatThrownBy(() -> service.emailsOfOrder("99999999999999999999")).isInstanceOfSatisfying(InvalidParameterException.class,
                e -> assertThat(e.parameter()).isEqualTo("orderId"));
        assertThatThrownBy(() -> service.email("email-order-1' OR '1'='1")).isInstanceOfSatisfying(InvalidParameterException.class,
                e -> assertThat(e.parameter()).isEqualTo("key"));
        assertThatThrownBy(() -> service.retry(ALICE, "k", "bad\u0000reason")).isInstanceOfSatisfying(InvalidParameterException.class,
                e -> assertThat(e.parameter()).isEqualTo("reason"));
        assertThatThrownBy(() -> service.resend(ALICE, "k", "x".repeat(501))).isInstanceOfSatisfying(InvalidParameterException.class,
                e -> assertThat(e.parameter()).isEqualTo("reason"));
        assertThatThrownBy(() -> service.confirmSent(ALICE, "k", "id\nwith newline", null)).isInstanceOfSatisfying(
                InvalidParameterException.class, e -> assertThat(e.parameter()).isEqualTo("providerMessageId"));
    }

    @Test
    void resendNumbersCountOnlyKeysOfTheSameRoot() {
        assertThat(SupportService.nextResendNumber(List.of("email-order-1", "email-order-1-resend-1", "email-order-1-resend-4",
                "email-order-10-resend-7", "email-order-1-shipped-resend-9"), "email-order-1")).isEqualTo(5);
        assertThat(SupportService.nextResendNumber(List.of("a_b-resend-2"), "a.b")).isEqualTo(1);
        assertThat(SupportService.kind("email.order_confirmation")).isEqualTo("Order confirmation");
        assertThat(SupportService.kind("email.")).isEqualTo("email.");
    }
}
