package io.mailroom.delivery.suppression;

import io.mailroom.delivery.BounceType;
import io.mailroom.delivery.DeliveryEvent;
import io.mailroom.delivery.DeliveryEventStore;
import io.mailroom.delivery.DeliveryKind;
import io.mailroom.testing.PostgresExtension;
import org.jooq.DSLContext;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import java.time.Clock;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Function;

import static io.mailroom.db.jooq.Tables.AUDIT_LOG;
import static io.mailroom.db.jooq.Tables.SUPPRESSION;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** Events in through the real store, one at a time, against real PostgreSQL. */
class SuppressionListTest {

    @RegisterExtension
    static final PostgresExtension pg = new PostgresExtension();

    private static final Instant T0 = Instant.parse("2026-12-04T10:00:00Z");
    private static final AtomicInteger IDS = new AtomicInteger();

    private final SuppressionList list = new SuppressionList(new SuppressionConfig(3), Clock.fixed(T0, ZoneOffset.UTC));
    private final DeliveryEventStore store = new DeliveryEventStore(List.of(list), Clock.fixed(T0, ZoneOffset.UTC));

    @BeforeEach
    void clean() {
        pg.dsl().execute("TRUNCATE suppression, soft_bounce_run, delivery_event, delivery_state, delivery_recipient_state, audit_log");
    }

    private static <T> T inTx(Function<DSLContext, T> work) {
        return pg.dsl().transactionResult(c -> work.apply(c.dsl()));
    }

    private void event(DeliveryKind kind, BounceType bounce, String recipient, String diagnostic, Instant at) {
        inTx(tx -> store.ingest(tx, "neutral", "wh-" + IDS.incrementAndGet(), List.of(
                new DeliveryEvent(kind, bounce, kind.dbValue(), null, null, recipient, at, diagnostic, null))));
    }

    private List<Suppression> active(String address) {
        return inTx(tx -> list.active(tx, List.of(address))).getOrDefault(address, List.of());
    }

    @Test
    void aHardBounceSuppressesTheNormalizedAddressOnce_evenForAnEmailWeDoNotKnow() {
        event(DeliveryKind.BOUNCED, BounceType.HARD, "Ann@Example.COM", "smtp; 550 5.1.1 user unknown", T0);
        event(DeliveryKind.BOUNCED, BounceType.HARD, "ann@example.com", "smtp; 550 5.1.1 user unknown", T0.plusSeconds(60));

        assertThat(active("ann@example.com")).singleElement().satisfies(s -> {
            assertThat(s.reason()).isEqualTo(SuppressionReason.HARD_BOUNCE);
            assertThat(s.eventId()).isNotNull();
            assertThat(s.createdBy()).isEqualTo("event:neutral");
            assertThat(s.failureReason()).isEqualTo("suppressed (hard bounce on 2026-12-04: smtp; 550 5.1.1 user unknown)");
        });
    }

    @Test
    void aComplaintSuppresses_andOnlyAnAllowComplainedTopicLooksPastIt_neverPastAHardBounce() {
        event(DeliveryKind.COMPLAINED, null, "bo@example.com", null, T0);
        List<Suppression> complained = active("bo@example.com");

        assertThat(SuppressionList.blocking(complained, SuppressionPolicy.STRICT)).isPresent();
        assertThat(SuppressionList.blocking(complained, SuppressionPolicy.ALLOW_COMPLAINED)).isEmpty();

        event(DeliveryKind.BOUNCED, BounceType.HARD, "bo@example.com", "550 gone", T0);
        List<Suppression> both = active("bo@example.com");
        assertThat(both).extracting(Suppression::reason).containsExactly(SuppressionReason.COMPLAINT, SuppressionReason.HARD_BOUNCE);
        assertThat(SuppressionList.blocking(both, SuppressionPolicy.ALLOW_COMPLAINED)).get()
                .extracting(Suppression::reason).isEqualTo(SuppressionReason.HARD_BOUNCE);
        assertThat(SuppressionList.blocking(both, SuppressionPolicy.STRICT)).get()
                .extracting(Suppression::reason).isEqualTo(SuppressionReason.HARD_BOUNCE);
    }

    @Test
    void softBouncesSuppressOnlyAtTheLimitInARow_andADeliveryEndsTheRun() {
        event(DeliveryKind.BOUNCED, BounceType.SOFT, "cy@example.com", "452 mailbox full", T0);
        event(DeliveryKind.BOUNCED, BounceType.SOFT, "cy@example.com", "452 mailbox full", T0.plusSeconds(60));
        event(DeliveryKind.DELIVERED, null, "cy@example.com", null, T0.plusSeconds(120));
        event(DeliveryKind.BOUNCED, BounceType.SOFT, "cy@example.com", "452 mailbox full", T0.plusSeconds(180));
        event(DeliveryKind.BOUNCED, BounceType.SOFT, "cy@example.com", "452 mailbox full", T0.plusSeconds(240));
        assertThat(active("cy@example.com")).isEmpty();

        event(DeliveryKind.BOUNCED, BounceType.SOFT, "cy@example.com", "452 mailbox full", T0.plusSeconds(300));

        assertThat(active("cy@example.com")).singleElement().satisfies(s -> {
            assertThat(s.reason()).isEqualTo(SuppressionReason.SOFT_BOUNCES);
            assertThat(s.detail()).isEqualTo("3 soft bounces since 2026-12-04, the last: 452 mailbox full");
        });
    }

    @Test
    void aDeliveryOlderThanTheRunsLastBounceDoesNotEndIt() {
        event(DeliveryKind.BOUNCED, BounceType.SOFT, "di@example.com", "452", T0.plusSeconds(60));
        event(DeliveryKind.BOUNCED, BounceType.SOFT, "di@example.com", "452", T0.plusSeconds(120));
        event(DeliveryKind.DELIVERED, null, "di@example.com", null, T0); // late news from before the run
        event(DeliveryKind.BOUNCED, BounceType.SOFT, "di@example.com", "452", T0.plusSeconds(180));

        assertThat(active("di@example.com")).extracting(Suppression::reason).containsExactly(SuppressionReason.SOFT_BOUNCES);
    }

    @Test
    void peopleAddAndLiftWithAReason_eachAuditedInTheSameTransaction() {
        Suppression added = inTx(tx -> list.add(tx, " Ed@Example.com ", "asked us to stop by phone", "alice", "support"));
        assertThat(added.address()).isEqualTo("ed@example.com");
        assertThat(added.reason()).isEqualTo(SuppressionReason.MANUAL);
        event(DeliveryKind.COMPLAINED, null, "ed@example.com", null, T0);

        List<Suppression> lifted = inTx(tx -> list.lift(tx, "ed@example.com", "customer called back", "bob", "operator"));

        assertThat(lifted).extracting(Suppression::reason).containsExactlyInAnyOrder(SuppressionReason.MANUAL, SuppressionReason.COMPLAINT);
        assertThat(active("ed@example.com")).isEmpty();
        List<Suppression> history = inTx(tx -> list.list(tx, "ed@example.com", true, null, 10));
        assertThat(history).hasSize(2)
                .allSatisfy(s -> {
                    assertThat(s.liftedBy()).isEqualTo("bob");
                    assertThat(s.liftReason()).isEqualTo("customer called back");
                });
        assertThat(pg.dsl().select(AUDIT_LOG.ACTION, AUDIT_LOG.ACTOR, AUDIT_LOG.ROLE, AUDIT_LOG.REASON).from(AUDIT_LOG).orderBy(AUDIT_LOG.ID)
                .fetch(r -> r.value1() + " " + r.value2() + " " + r.value3() + " " + r.value4()))
                .containsExactly("suppression_add alice support asked us to stop by phone",
                        "suppression_lift bob operator customer called back");
        assertThat(pg.dsl().fetchValue("SELECT detail->>'address' FROM audit_log ORDER BY id LIMIT 1")).isEqualTo("ed@example.com");
    }

    @Test
    void aFailedActionLeavesNoAuditRow_andBadInputIsNamed() {
        assertThatThrownBy(() -> inTx(tx -> list.lift(tx, "nobody@example.com", "why not", "alice", "support")))
                .isInstanceOfSatisfying(SuppressionException.class, e -> {
                    assertThat(e.conflict()).isTrue();
                    assertThat(e.getMessage()).isEqualTo("nobody@example.com is not suppressed");
                });
        assertThatThrownBy(() -> inTx(tx -> list.add(tx, "not-an-address", "x", "alice", "support")))
                .isInstanceOfSatisfying(SuppressionException.class, e -> assertThat(e.field()).isEqualTo("address"));
        assertThatThrownBy(() -> inTx(tx -> list.add(tx, "fi@example.com", "  ", "alice", "support")))
                .isInstanceOfSatisfying(SuppressionException.class, e -> assertThat(e.field()).isEqualTo("reason"));
        inTx(tx -> list.add(tx, "fi@example.com", "first", "alice", "support"));
        assertThatThrownBy(() -> inTx(tx -> list.add(tx, "fi@example.com", "second", "alice", "support")))
                .isInstanceOfSatisfying(SuppressionException.class, e -> assertThat(e.conflict()).isTrue());

        assertThat(pg.dsl().fetchCount(AUDIT_LOG)).isEqualTo(1);
        assertThat(pg.dsl().fetchCount(SUPPRESSION)).isEqualTo(1);
    }

    @Test
    void theSoftBounceLimitIsCheckedNamingTheSetting() {
        assertThatThrownBy(() -> new SuppressionConfig(0)).hasMessageContaining("MAILROOM_SOFT_BOUNCE_LIMIT");
    }

    @Test
    void theLiftsLogLineMasksTheAddress_asTheDispatchersSendLinesDo() {
        inTx(tx -> list.add(tx, "frida.long@example.com", "asked by phone", "alice", "support"));
        ch.qos.logback.classic.Logger logger = (ch.qos.logback.classic.Logger) org.slf4j.LoggerFactory.getLogger(SuppressionList.class);
        ch.qos.logback.core.read.ListAppender<ch.qos.logback.classic.spi.ILoggingEvent> logged = new ch.qos.logback.core.read.ListAppender<>();
        logged.start();
        logger.addAppender(logged);
        try {
            inTx(tx -> list.lift(tx, "frida.long@example.com", "mailbox works again", "alice", "support"));
        } finally {
            logger.detachAppender(logged);
        }
        assertThat(logged.list).extracting(ch.qos.logback.classic.spi.ILoggingEvent::getFormattedMessage)
                .anySatisfy(line -> assertThat(line).contains("lifted").contains("f***@example.com"))
                .allSatisfy(line -> assertThat(line).doesNotContain("frida.long"));
        // the audit row keeps the address itself: the log is not where support looks it up
        String audited = pg.dsl().select(AUDIT_LOG.DETAIL).from(AUDIT_LOG).where(AUDIT_LOG.ACTION.eq(SuppressionList.ACTION_LIFT))
                .fetchOne().value1().data();
        assertThat(audited).contains("frida.long@example.com");
    }

    /** Erases ann@example.com as support does (delivery-events' part), with this list's key. */
    private io.mailroom.delivery.DeliveryErasure.Erased erase(String address) {
        io.mailroom.db.sql.Redaction r = new io.mailroom.db.sql.Redaction(address, List.of("Ann Lee"),
                io.mailroom.db.sql.Redaction.marker("0a1b2c3d4e"));
        return inTx(tx -> io.mailroom.delivery.DeliveryErasure.erase(tx, r, list.hash(tx, address), List.of()));
    }

    @Test
    void anErasedAddressStaysSuppressedUnderItsKeyedHash_listedAndLiftedByTheAddress() {
        event(DeliveryKind.BOUNCED, BounceType.HARD, "Ann@Example.COM", "smtp; 550 5.1.1 <ann@example.com>: user unknown", T0);
        event(DeliveryKind.BOUNCED, BounceType.SOFT, "bo@example.com", "452 mailbox full", T0);

        var erased = erase("ann@example.com");

        assertThat(erased.suppressions()).isEqualTo(1);
        assertThat(erased.keptByHash()).isTrue();
        assertThat(erased.events()).isEqualTo(1);
        assertThat(pg.dsl().fetchCount(SUPPRESSION, SUPPRESSION.ADDRESS.eq("ann@example.com"))).isZero();
        assertThat(pg.dsl().fetchValue("SELECT count(*)::int FROM suppression s WHERE s::text ILIKE '%ann@example.com%'")).isEqualTo(0);
        assertThat(active("ann@example.com")).singleElement().satisfies(s -> {
            assertThat(s.reason()).isEqualTo(SuppressionReason.HARD_BOUNCE);
            assertThat(s.address()).isEqualTo("erased-0a1b2c3d4e@erased.invalid");
            assertThat(s.detail()).isEqualTo("smtp; 550 5.1.1 <erased-0a1b2c3d4e@erased.invalid>: user unknown");
        });
        assertThat(inTx(tx -> list.active(tx, List.of("ann@example.com", "bo@example.com"))).keySet())
                .containsExactly("ann@example.com");
        List<Suppression> listed = inTx(tx -> list.list(tx, "Ann@Example.com", false, null, 10));
        assertThat(listed).hasSize(1);
        // a list keyed otherwise (another MAILROOM_ERASURE_KEY) does not see it: the key must not change
        SuppressionList otherKey = new SuppressionList(new SuppressionConfig(3,
                ErasureKey.configured("MAILROOM_ERASURE_KEY", "a-configured-key-of-at-least-32-characters")), null);
        java.util.Map<String, List<Suppression>> seenOtherwise = inTx(tx -> otherKey.active(tx, List.of("ann@example.com")));
        assertThat(seenOtherwise).isEmpty();

        List<Suppression> lifted = inTx(tx -> list.lift(tx, "ann@example.com", "asked to receive mail again", "alice", "support"));
        assertThat(lifted).hasSize(1);
        assertThat(active("ann@example.com")).isEmpty();
    }

    @Test
    void aLiftedEntryKeepsNoHash_andTheSoftBounceRunGoes() {
        event(DeliveryKind.BOUNCED, BounceType.SOFT, "ann@example.com", "452 mailbox full", T0);
        inTx(tx -> list.add(tx, "ann@example.com", "asked", "alice", "support"));
        inTx(tx -> list.lift(tx, "ann@example.com", "by mistake", "alice", "support"));
        event(DeliveryKind.BOUNCED, BounceType.SOFT, "ann@example.com", "452 mailbox full", T0.plusSeconds(60));

        var erased = erase("ann@example.com");

        assertThat(erased.keptByHash()).isFalse();
        assertThat(erased.softBounceRuns()).isEqualTo(1);
        assertThat(pg.dsl().fetchValue("SELECT count(*)::int FROM suppression WHERE address_hash IS NOT NULL")).isEqualTo(0);
        assertThat(active("ann@example.com")).isEmpty();
    }

    @Test
    void aConfiguredErasureKeyIsAtLeast32CharactersAndNeverPrinted() {
        assertThatThrownBy(() -> ErasureKey.configured("MAILROOM_ERASURE_KEY", "short"))
                .hasMessageStartingWith("MAILROOM_ERASURE_KEY must be at least 32 characters");
        ErasureKey key = ErasureKey.configured("MAILROOM_ERASURE_KEY", "0123456789abcdef0123456789abcdef");
        assertThat(key.toString()).doesNotContain("0123456789");
        String configured = inTx(tx -> key.hash(tx, "ann@example.com"));
        String same = inTx(tx -> ErasureKey.configured("x", "0123456789abcdef0123456789abcdef").hash(tx, "ann@example.com"));
        String stored = inTx(tx -> ErasureKey.stored().hash(tx, "ann@example.com"));
        String listed = inTx(tx -> list.hash(tx, "ann@example.com"));
        assertThat(configured).matches("[0-9a-f]{64}").isEqualTo(same);
        assertThat(stored).as("the stored key is V20's random one: the same for every process").isEqualTo(listed)
                .isNotEqualTo(configured);
    }
}
