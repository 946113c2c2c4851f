package io.mailroom.delivery;

import io.mailroom.testing.PostgresExtension;
import org.jooq.DSLContext;
import org.jooq.Record;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInfo;
import org.junit.jupiter.api.extension.RegisterExtension;

import java.time.Clock;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Callable;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Function;

import static io.mailroom.db.jooq.Tables.DELIVERY_EVENT;
import static io.mailroom.db.jooq.Tables.IDEMPOTENCY_RECORD;
import static io.mailroom.db.jooq.Tables.DELIVERY_STATE;
import static io.mailroom.db.jooq.Tables.OUTBOX_EFFECT;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** One delivery at a time against real PostgreSQL; then two copies of one delivery racing. */
class DeliveryEventStoreTest {

    @RegisterExtension
    static final PostgresExtension pg = new PostgresExtension();

    private static final Instant T0 = Instant.parse("2030-01-02T03:04:05Z");
    private static final AtomicInteger IDS = new AtomicInteger();

    private final List<DeliveryEventListener.StoredEvent> heard = new ArrayList<>();
    private final DeliveryEventStore store = new DeliveryEventStore(
            List.of((tx, stored) -> heard.add(stored)), Clock.fixed(T0, ZoneOffset.UTC));

    private static <T> T inTx(Function<DSLContext, T> work) {
        return pg.dsl().transactionResult(c -> work.apply(c.dsl()));
    }

    /** An email that was sent: its effect and its idempotency record with the provider's id. */
    private static String sentEmail(TestInfo info, String providerId) {
        String key = "email-" + info.getTestMethod().orElseThrow().getName() + "-" + IDS.incrementAndGet();
        inTx(tx -> {
            tx.insertInto(OUTBOX_EFFECT)
                    .set(OUTBOX_EFFECT.IDEMPOTENCY_KEY, key)
                    .set(OUTBOX_EFFECT.TOPIC, "email.order_confirmation")
                    .set(OUTBOX_EFFECT.AGGREGATE_TYPE, "order")
                    .set(OUTBOX_EFFECT.AGGREGATE_ID, "102")
                    .set(OUTBOX_EFFECT.MESSAGE_ID, (long) IDS.get())
                    .set(OUTBOX_EFFECT.MESSAGE_CREATED_AT, T0)
                    .set(OUTBOX_EFFECT.STATUS, "done")
                    .set(OUTBOX_EFFECT.MAX_ATTEMPTS, 10)
                    .execute();
            return tx.insertInto(IDEMPOTENCY_RECORD)
                    .set(IDEMPOTENCY_RECORD.EFFECT_KEY, key)
                    .set(IDEMPOTENCY_RECORD.FINGERPRINT, "0".repeat(64))
                    .set(IDEMPOTENCY_RECORD.STATE, "succeeded")
                    .set(IDEMPOTENCY_RECORD.FIRST_RESERVED_AT, T0)
                    .set(IDEMPOTENCY_RECORD.RESERVED_AT, T0)
                    .set(IDEMPOTENCY_RECORD.COMPLETED_AT, T0)
                    .set(IDEMPOTENCY_RECORD.RESULT_REF, providerId)
                    .execute();
        });
        return key;
    }

    private static DeliveryEvent event(DeliveryKind kind, BounceType bounce, String providerId, String key) {
        return new DeliveryEvent(kind, bounce, "email." + kind.dbValue(), providerId, key, "Ann@Example.com",
                T0.minusSeconds(60), bounce == null ? null : "smtp; 550 5.1.1 user unknown", null);
    }

    private static Record effect(String key) {
        return pg.dsl().selectFrom(OUTBOX_EFFECT).where(OUTBOX_EFFECT.IDEMPOTENCY_KEY.eq(key)).fetchOne();
    }

    private DeliveryEventStore.IngestResult ingest(String deliveryId, DeliveryEvent... events) {
        return inTx(tx -> store.ingest(tx, "neutral", deliveryId, List.of(events)));
    }

    @Test
    void matchesByProviderMessageId_andMovesTheStateForward(TestInfo info) {
        String key = sentEmail(info, "prov-" + IDS.incrementAndGet());
        String providerId = pg.dsl().select(IDEMPOTENCY_RECORD.RESULT_REF).from(IDEMPOTENCY_RECORD)
                .where(IDEMPOTENCY_RECORD.EFFECT_KEY.eq(key)).fetchOne().value1();

        var result = ingest("wh-" + key, event(DeliveryKind.DELIVERED, null, providerId, null));

        assertThat(result).isEqualTo(new DeliveryEventStore.IngestResult(false, 1, 1, 0));
        assertThat(state(key, DELIVERY_STATE.STATE)).isEqualTo("delivered");
        assertThat(state(key, DELIVERY_STATE.UPDATED_AT)).isEqualTo(T0);
        var row = pg.dsl().selectFrom(DELIVERY_EVENT).where(DELIVERY_EVENT.DELIVERY_ID.eq("wh-" + key)).fetchOne();
        assertThat(row.getIdempotencyKey()).isEqualTo(key);
        assertThat(row.getRecipient()).isEqualTo("ann@example.com");
        assertThat(row.getApplied()).isTrue();
        assertThat(heard).singleElement().satisfies(s -> {
            assertThat(s.idempotencyKey()).isEqualTo(key);
            assertThat(s.topic()).isEqualTo("email.order_confirmation");
            assertThat(s.address()).isEqualTo("ann@example.com");
            assertThat(s.applied()).isTrue();
        });
    }

    @Test
    void matchesAnSmtpMessageIdWithOrWithoutItsAngleBrackets(TestInfo info) {
        String key = sentEmail(info, "<email-x.0123456789abcdef@shop.example>");

        ingest("dsn-" + key, event(DeliveryKind.BOUNCED, BounceType.HARD, "email-x.0123456789abcdef@shop.example", null));

        assertThat(state(key, DELIVERY_STATE.STATE)).isEqualTo("bounced");
        assertThat(state(key, DELIVERY_STATE.DETAIL)).isEqualTo("hard bounce: smtp; 550 5.1.1 user unknown");
    }

    @Test
    void anEchoedIdempotencyKeyMatchesWithoutAProviderId(TestInfo info) {
        String key = sentEmail(info, "prov-" + IDS.incrementAndGet());

        var result = ingest("wh-key-" + key, event(DeliveryKind.COMPLAINED, null, null, key));

        assertThat(result.matched()).isEqualTo(1);
        assertThat(state(key, DELIVERY_STATE.STATE)).isEqualTo("complained");
    }

    @Test
    void aReplayedDeliveryChangesNothing(TestInfo info) {
        String key = sentEmail(info, "prov-" + IDS.incrementAndGet());
        ingest("wh-replay-" + key, event(DeliveryKind.DEFERRED, null, null, key));
        heard.clear();

        var again = ingest("wh-replay-" + key, event(DeliveryKind.BOUNCED, BounceType.HARD, null, key));

        assertThat(again.replay()).isTrue();
        assertThat(state(key, DELIVERY_STATE.STATE)).isEqualTo("deferred");
        assertThat(pg.dsl().fetchCount(DELIVERY_EVENT, DELIVERY_EVENT.DELIVERY_ID.eq("wh-replay-" + key))).isEqualTo(1);
        assertThat(heard).isEmpty();
    }

    @Test
    void outOfOrderEventsNeverMoveAnEmailBackwards(TestInfo info) {
        String key = sentEmail(info, "prov-" + IDS.incrementAndGet());

        ingest("wh-1-" + key, event(DeliveryKind.BOUNCED, BounceType.HARD, null, key));
        ingest("wh-2-" + key, event(DeliveryKind.DELIVERED, null, null, key));
        ingest("wh-3-" + key, event(DeliveryKind.DEFERRED, null, null, key));

        assertThat(state(key, DELIVERY_STATE.STATE)).isEqualTo("bounced");
        assertThat(pg.dsl().select(DELIVERY_EVENT.KIND, DELIVERY_EVENT.APPLIED).from(DELIVERY_EVENT)
                .where(DELIVERY_EVENT.IDEMPOTENCY_KEY.eq(key)).orderBy(DELIVERY_EVENT.ID).fetch()
                .map(r -> r.value1() + ":" + r.value2()))
                .containsExactly("bounced:true", "delivered:false", "deferred:false");
    }

    @Test
    void aHardBounceAfterASoftOneIsAStepForward_butNotTheOtherWayRound(TestInfo info) {
        String key = sentEmail(info, "prov-" + IDS.incrementAndGet());

        ingest("wh-s1-" + key, event(DeliveryKind.BOUNCED, BounceType.SOFT, null, key));
        ingest("wh-h-" + key, event(DeliveryKind.BOUNCED, BounceType.HARD, null, key));
        ingest("wh-s2-" + key, event(DeliveryKind.BOUNCED, BounceType.SOFT, null, key));

        assertThat(state(key, DELIVERY_STATE.DETAIL)).startsWith("hard bounce");
        assertThat(pg.dsl().select(DELIVERY_EVENT.BOUNCE_TYPE, DELIVERY_EVENT.APPLIED).from(DELIVERY_EVENT)
                .where(DELIVERY_EVENT.IDEMPOTENCY_KEY.eq(key)).orderBy(DELIVERY_EVENT.ID).fetch()
                .map(r -> r.value1() + ":" + r.value2()))
                .containsExactly("soft:true", "hard:true", "soft:false");
    }

    @Test
    void anEventForNoKnownEmailIsKeptAsAnOrphan_andUnknownTypesAreStoredButNotApplied(TestInfo info) {
        String key = sentEmail(info, "prov-" + IDS.incrementAndGet());
        String delivery = "wh-orphan-" + key;

        var result = ingest(delivery,
                event(DeliveryKind.BOUNCED, BounceType.SOFT, "no-such-provider-id", "no-such-key"),
                new DeliveryEvent(DeliveryKind.UNKNOWN, null, "email.opened", null, key, null, null, null, null));

        assertThat(result).isEqualTo(new DeliveryEventStore.IngestResult(false, 2, 1, 1));
        assertThat(pg.dsl().select(DELIVERY_EVENT.SEQ, DELIVERY_EVENT.IDEMPOTENCY_KEY, DELIVERY_EVENT.APPLIED)
                .from(DELIVERY_EVENT).where(DELIVERY_EVENT.DELIVERY_ID.eq(delivery)).orderBy(DELIVERY_EVENT.SEQ).fetch()
                .map(r -> r.value1() + ":" + r.value2() + ":" + r.value3()))
                .containsExactly("0:null:false", "1:" + key + ":false");
        assertThat(state(key, DELIVERY_STATE.STATE)).isNull();
    }

    @Test
    void providerTextLongerThanItsColumnIsCutNotRefused(TestInfo info) {
        String key = sentEmail(info, "prov-" + IDS.incrementAndGet());
        String longDiagnostic = "smtp; 550 " + "x".repeat(5000);

        ingest("wh-long-" + key, new DeliveryEvent(DeliveryKind.BOUNCED, BounceType.HARD, "bounce", null, key,
                "not an address", null, longDiagnostic, "d".repeat(3000)));

        var row = pg.dsl().selectFrom(DELIVERY_EVENT).where(DELIVERY_EVENT.DELIVERY_ID.eq("wh-long-" + key)).fetchOne();
        assertThat(row.getDiagnosticCode()).hasSize(1000).endsWith("…");
        assertThat(row.getDescription()).hasSize(2000);
        assertThat(row.getRecipient()).isEqualTo("not an address");
        assertThat(heard).singleElement().satisfies(s -> assertThat(s.address()).isNull());
    }

    @Test
    void badArgumentsAreRefusedNamingThem() {
        assertThatThrownBy(() -> ingest(" ", event(DeliveryKind.DELIVERED, null, "x", null)))
                .hasMessageContaining("deliveryId");
        assertThatThrownBy(() -> inTx(tx -> store.ingest(tx, "neutral", "wh-empty", List.of())))
                .hasMessageContaining("at least one event");
        assertThatThrownBy(() -> inTx(tx -> store.ingest(tx, "", "wh-x", List.of(event(DeliveryKind.DELIVERED, null, "x", null)))))
                .hasMessageContaining("source");
    }

    @Test
    void twoCopiesOfOneDeliveryRacing_storeItOnce(TestInfo info) throws Exception {
        String key = sentEmail(info, "prov-" + IDS.incrementAndGet());
        CyclicBarrier start = new CyclicBarrier(2);
        Callable<DeliveryEventStore.IngestResult> copy = () -> {
            start.await();
            return inTx(tx -> store.ingest(tx, "neutral", "wh-race-" + key,
                    List.of(event(DeliveryKind.BOUNCED, BounceType.HARD, null, key))));
        };
        ExecutorService threads = Executors.newFixedThreadPool(2);
        try {
            Future<DeliveryEventStore.IngestResult> a = threads.submit(copy);
            Future<DeliveryEventStore.IngestResult> b = threads.submit(copy);
            assertThat(List.of(a.get().replay(), b.get().replay())).containsExactlyInAnyOrder(true, false);
        } finally {
            threads.shutdownNow();
        }
        assertThat(pg.dsl().fetchCount(DELIVERY_EVENT, DELIVERY_EVENT.DELIVERY_ID.eq("wh-race-" + key))).isEqualTo(1);
    }

    private static <T> T state(String key, org.jooq.Field<T> field) {
        return pg.dsl().select(field).from(DELIVERY_STATE).where(DELIVERY_STATE.IDEMPOTENCY_KEY.eq(key)).fetchOne(field);
    }
}
