package io.mailroom.email.dispatch;

import io.mailroom.delivery.suppression.SuppressionConfig;
import io.mailroom.delivery.suppression.SuppressionList;
import io.mailroom.delivery.suppression.SuppressionPolicy;
import io.mailroom.email.resilience.TransportPolicyConfig;
import io.mailroom.idempotency.IdempotencyStore;
import io.mailroom.outbox.runtime.Dispatcher;
import io.mailroom.outbox.runtime.DispatcherConfig;
import io.mailroom.testing.PostgresExtension;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import java.time.Instant;
import java.util.Map;

import static io.mailroom.db.jooq.Tables.IDEMPOTENCY_RECORD;
import static io.mailroom.db.jooq.Tables.OUTBOX_MESSAGE;
import static io.mailroom.db.jooq.Tables.SUPPRESSION;
import static io.mailroom.email.dispatch.DispatchFixture.TOPIC;
import static io.mailroom.email.dispatch.DispatchFixture.enqueueOrder;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * A claimed batch with suppressed recipients: those emails end failed with the reason, before any
 * reservation or provider request; the rest of the batch is reserved in its one commit and sent.
 */
class SuppressedRecipientTest {

    @RegisterExtension
    static final PostgresExtension pg = new PostgresExtension();

    private final SuppressionList list = new SuppressionList(SuppressionConfig.defaults(), null);

    @BeforeEach
    void clean() {
        pg.dsl().execute("TRUNCATE outbox_message, outbox_effect, outbox_effect_term, outbox_attempt, idempotency_record, email_rendering, suppression, audit_log");
        for (long id = 1; id <= 5; id++) {
            enqueueOrder(pg.dsl(), id);
        }
        pg.dsl().transaction(c -> list.add(c.dsl(), "customer2@example.com", "asked by phone", "alice", "support"));
        suppress("customer3@example.com", "complaint", "abuse report");
        suppress("Customer4@Example.com".toLowerCase(), "hard_bounce", "smtp; 550 5.1.1 user unknown");
    }

    private static void suppress(String address, String reason, String detail) {
        pg.dsl().insertInto(SUPPRESSION).set(SUPPRESSION.ADDRESS, address).set(SUPPRESSION.REASON, reason)
                .set(SUPPRESSION.DETAIL, detail).set(SUPPRESSION.CREATED_BY, "event:neutral")
                .set(SUPPRESSION.CREATED_AT, Instant.parse("2026-12-01T08:00:00Z")).execute();
    }

    private Dispatcher dispatcher(BatchReservationTest.Census handlerDb, BatchReservationTest.AcceptingTransport transport,
                                  SuppressionPolicy policy) {
        EmailHandler handler = new EmailHandler(handlerDb, new IdempotencyStore(), DispatchFixture.composer(),
                DispatchFixture.resilient(transport, TransportPolicyConfig.defaults()), AmbiguityPolicy.review(), "w", null,
                new SuppressionCheck(list, topic -> topic.equals(TOPIC) ? policy : SuppressionPolicy.STRICT));
        return new Dispatcher(pg.dataSource(), DispatcherConfig.builder().workerId("w").batchSize(10).concurrency(10).build(),
                Map.of(TOPIC, handler));
    }

    private static String lastError(long orderId) {
        return pg.dsl().select(OUTBOX_MESSAGE.LAST_ERROR).from(OUTBOX_MESSAGE)
                .where(OUTBOX_MESSAGE.IDEMPOTENCY_KEY.eq(DispatchFixture.key(orderId))).fetchOne().value1();
    }

    @Test
    void suppressedRecipientsFailWithTheReason_withoutAReservationOrAProviderRequest() {
        var handlerDb = new BatchReservationTest.Census(pg.dataSource());
        var transport = new BatchReservationTest.AcceptingTransport();

        assertThat(dispatcher(handlerDb, transport, SuppressionPolicy.STRICT).runOnce()).isEqualTo(5);

        assertThat(transport.keys).containsExactlyInAnyOrder(DispatchFixture.key(1), DispatchFixture.key(5));
        assertThat(handlerDb.commits.get()).as("the check rides in the batch's one reservation commit").isEqualTo(1);
        assertThat(pg.dsl().fetch(IDEMPOTENCY_RECORD).getValues(IDEMPOTENCY_RECORD.EFFECT_KEY))
                .containsExactlyInAnyOrder(DispatchFixture.key(1), DispatchFixture.key(5));
        assertThat(pg.dsl().fetchCount(OUTBOX_MESSAGE, OUTBOX_MESSAGE.STATUS.eq("failed"))).isEqualTo(3);
        assertThat(lastError(2)).startsWith("suppressed (added by hand on ").endsWith(": asked by phone)");
        assertThat(lastError(3)).isEqualTo("suppressed (complaint on 2026-12-01: abuse report)");
        assertThat(lastError(4)).isEqualTo("suppressed (hard bounce on 2026-12-01: smtp; 550 5.1.1 user unknown)");
    }

    @Test
    void aTopicAllowedPastComplaintsSendsToTheComplainer_butNeverToAHardBounce() {
        var transport = new BatchReservationTest.AcceptingTransport();

        dispatcher(new BatchReservationTest.Census(pg.dataSource()), transport, SuppressionPolicy.ALLOW_COMPLAINED).runOnce();

        assertThat(transport.keys).containsExactlyInAnyOrder(DispatchFixture.key(1), DispatchFixture.key(3), DispatchFixture.key(5));
        assertThat(lastError(4)).startsWith("suppressed (hard bounce");
        assertThat(lastError(2)).startsWith("suppressed (added by hand");
    }

    @Test
    void anEmailSentBeforeItsAddressWasSuppressedEndsDone_notFailed() {
        // order 4's email goes out before its address bounces
        pg.dsl().deleteFrom(SUPPRESSION).where(SUPPRESSION.ADDRESS.eq("customer4@example.com")).execute();
        var first = new BatchReservationTest.AcceptingTransport();
        dispatcher(new BatchReservationTest.Census(pg.dataSource()), first, SuppressionPolicy.STRICT).runOnce();
        assertThat(first.keys).contains(DispatchFixture.key(4));
        // the bounce suppresses the address; the message comes round again (as after a lease that
        // expired before its completion was written)
        suppress("customer4@example.com", "hard_bounce", "smtp; 550 5.1.1 user unknown");
        pg.dsl().update(OUTBOX_MESSAGE).set(OUTBOX_MESSAGE.STATUS, "pending").set(OUTBOX_MESSAGE.AVAILABLE_AT, Instant.now().minusSeconds(1))
                .where(OUTBOX_MESSAGE.IDEMPOTENCY_KEY.eq(DispatchFixture.key(4))).execute();
        var second = new BatchReservationTest.AcceptingTransport();

        dispatcher(new BatchReservationTest.Census(pg.dataSource()), second, SuppressionPolicy.STRICT).runOnce();

        assertThat(second.keys).isEmpty();
        assertThat(pg.dsl().select(OUTBOX_MESSAGE.STATUS).from(OUTBOX_MESSAGE)
                .where(OUTBOX_MESSAGE.IDEMPOTENCY_KEY.eq(DispatchFixture.key(4))).fetchOne().value1())
                .as("it was sent: done (deduplicated), not failed as suppressed").isEqualTo("done");
    }

    @Test
    void aLiftedSuppressionLetsTheNextEmailGo() {
        pg.dsl().transaction(c -> list.lift(c.dsl(), "customer4@example.com", "mailbox exists again", "bob", "support"));
        var transport = new BatchReservationTest.AcceptingTransport();

        dispatcher(new BatchReservationTest.Census(pg.dataSource()), transport, SuppressionPolicy.STRICT).runOnce();

        assertThat(transport.keys).contains(DispatchFixture.key(4)).doesNotContain(DispatchFixture.key(2), DispatchFixture.key(3));
    }
}
