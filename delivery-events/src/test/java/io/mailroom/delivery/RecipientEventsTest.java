package io.mailroom.delivery;

import io.mailroom.db.sql.Redaction;
import io.mailroom.delivery.webhook.NeutralEventAdapter;
import io.mailroom.delivery.webhook.ResendEventAdapter;
import io.mailroom.testing.PostgresExtension;
import org.jooq.DSLContext;
import org.jooq.JSONB;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import java.nio.charset.StandardCharsets;
import java.time.Clock;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.function.Function;

import static io.mailroom.db.jooq.Tables.DELIVERY_RECIPIENT_STATE;
import static io.mailroom.db.jooq.Tables.DELIVERY_STATE;
import static io.mailroom.db.jooq.Tables.IDEMPOTENCY_RECORD;
import static io.mailroom.db.jooq.Tables.OUTBOX_EFFECT;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * An email with several recipients: each event is matched to its email and kept per recipient, the
 * recipient's own state moves forward beside the email's, an event about a Cc is not a "mismatch",
 * and the tags a provider echoes are read and stored.
 */
class RecipientEventsTest {

    @RegisterExtension
    static final PostgresExtension pg = new PostgresExtension();

    private static final Instant T0 = Instant.parse("2030-01-02T03:04:05Z");
    private static final String KEY = "email-invoice-7";

    private final List<DeliveryEventListener.StoredEvent> heard = new ArrayList<>();
    private final DeliveryEventStore store = new DeliveryEventStore(List.of((tx, stored) -> heard.add(stored)),
            Clock.fixed(T0, ZoneOffset.UTC));

    private static <T> T inTx(Function<DSLContext, T> work) {
        return pg.dsl().transactionResult(c -> work.apply(c.dsl()));
    }

    @BeforeEach
    void sentToThree() {
        pg.dsl().execute("TRUNCATE delivery_event, delivery_state, delivery_recipient_state, idempotency_record, outbox_effect CASCADE");
        inTx(tx -> {
            tx.insertInto(OUTBOX_EFFECT).set(OUTBOX_EFFECT.IDEMPOTENCY_KEY, KEY).set(OUTBOX_EFFECT.TOPIC, "email.invoice")
                    .set(OUTBOX_EFFECT.AGGREGATE_TYPE, "invoice").set(OUTBOX_EFFECT.AGGREGATE_ID, "7")
                    .set(OUTBOX_EFFECT.MESSAGE_ID, 7L).set(OUTBOX_EFFECT.MESSAGE_CREATED_AT, T0)
                    .set(OUTBOX_EFFECT.STATUS, "done").set(OUTBOX_EFFECT.MAX_ATTEMPTS, 10).execute();
            return tx.insertInto(IDEMPOTENCY_RECORD).set(IDEMPOTENCY_RECORD.EFFECT_KEY, KEY)
                    .set(IDEMPOTENCY_RECORD.FINGERPRINT, "0".repeat(64)).set(IDEMPOTENCY_RECORD.STATE, "succeeded")
                    .set(IDEMPOTENCY_RECORD.FIRST_RESERVED_AT, T0).set(IDEMPOTENCY_RECORD.RESERVED_AT, T0)
                    .set(IDEMPOTENCY_RECORD.COMPLETED_AT, T0).set(IDEMPOTENCY_RECORD.RESULT_REF, "re_123")
                    .set(IDEMPOTENCY_RECORD.DESCRIPTOR, JSONB.valueOf("""
                            {"recipient":"ann@example.com","recipients":[{"role":"to","address":"ann@example.com"},
                             {"role":"cc","address":"billing@corp.example"},{"role":"bcc","address":"audit@shop.example"}],
                             "tags":{"category":"invoice"}}"""))
                    .execute();
        });
    }

    private DeliveryEventStore.IngestResult ingest(String deliveryId, List<DeliveryEvent> events) {
        return inTx(tx -> store.ingest(tx, "resend", deliveryId, events));
    }

    private static List<DeliveryEvent> resend(String type, String bounce, String... to) throws Exception {
        String body = """
                {"type":"%s","created_at":"2030-01-02T03:00:00Z","data":{"email_id":"re_123","to":[%s],%s
                 "tags":[{"name":"idempotency_key","value":"%s"},{"name":"category","value":"invoice"}]}}"""
                .formatted(type, String.join(",", java.util.Arrays.stream(to).map(a -> "\"" + a + "\"").toList()),
                        bounce == null ? "" : "\"bounce\":{\"type\":\"" + bounce + "\",\"message\":\"550 5.1.1 unknown\"},", KEY);
        return new ResendEventAdapter().parse(body.getBytes(StandardCharsets.UTF_8));
    }

    private static Map<String, String> recipientStates() {
        return pg.dsl().select(DELIVERY_RECIPIENT_STATE.ADDRESS, DELIVERY_RECIPIENT_STATE.STATE).from(DELIVERY_RECIPIENT_STATE)
                .where(DELIVERY_RECIPIENT_STATE.IDEMPOTENCY_KEY.eq(KEY)).fetchMap(DELIVERY_RECIPIENT_STATE.ADDRESS, DELIVERY_RECIPIENT_STATE.STATE);
    }

    @Test
    void eachRecipientHasItsOwnState_theEmailTheFurthest_andACcsEventIsNoMismatch() throws Exception {
        ingest("d1", resend("email.delivered", null, "ann@example.com", "audit@shop.example"));
        ingest("d2", resend("email.bounced", "Permanent", "Billing@Corp.example"));
        ingest("d3", resend("email.delivered", null, "billing@corp.example")); // late: the bounce stays

        assertThat(recipientStates()).containsExactlyInAnyOrderEntriesOf(Map.of(
                "ann@example.com", "delivered", "audit@shop.example", "delivered", "billing@corp.example", "bounced"));
        assertThat(pg.dsl().select(DELIVERY_STATE.STATE).from(DELIVERY_STATE).where(DELIVERY_STATE.IDEMPOTENCY_KEY.eq(KEY))
                .fetchOne().value1()).isEqualTo("bounced");
        assertThat(heard).hasSize(4).allSatisfy(e -> {
            assertThat(e.idempotencyKey()).isEqualTo(KEY);
            assertThat(e.recipientMismatch()).as("every address is one of the email's").isFalse();
        });
        assertThat(heard.get(1).applied()).as("the bcc's delivery moved its own state").isTrue();
        assertThat(heard.get(3).applied()).as("the late delivery moved nothing").isFalse();
        assertThat(DeliveryRecipientStates.of(pg.dsl(), List.of(KEY)).get(KEY)).extracting(DeliveryRecipientStates.State::address)
                .containsExactly("ann@example.com", "audit@shop.example", "billing@corp.example");
    }

    @Test
    void echoedTagsAreStoredAndReadBack_theKeyTagIsNotAmongThem() throws Exception {
        List<DeliveryEvent> events = resend("email.delivered", null, "ann@example.com");
        assertThat(events.getFirst().idempotencyKey()).isEqualTo(KEY);
        assertThat(events.getFirst().tags()).containsExactly(Map.entry("category", "invoice"));
        ingest("d1", events);

        List<DeliveryEventHistory.Stored> stored = inTx(tx -> DeliveryEventHistory.ofKeys(tx, List.of(KEY)));
        assertThat(stored).singleElement().satisfies(s -> assertThat(s.tags()).containsExactly(Map.entry("category", "invoice")));
    }

    @Test
    void theNeutralFormatTakesTagsToo_andATagMailroomCouldNotHaveSentIsNotKept() throws Exception {
        List<DeliveryEvent> events = new NeutralEventAdapter().parse("""
                {"type":"delivered","idempotency_key":"email-invoice-7","recipient":"ann@example.com",
                 "tags":{"category":"invoice","bad name":"x","plan":"has space"}}""".getBytes(StandardCharsets.UTF_8));
        assertThat(events.getFirst().tags()).containsExactly(Map.entry("category", "invoice"));
    }

    @Test
    void aDsnToTheVerpAddressNamesEachRecipientItReportsOn_oneEnvelopeSenderServesThemAll() throws Exception {
        // one SMTP transaction, so one VERP return path for the To, the Cc and the Bcc: the report
        // comes back to it and its recipient blocks say which of them failed or waits
        String dsn = """
                Content-Type: multipart/report; report-type=delivery-status; boundary=b
                Message-ID: <report-1@mx.corp.example>

                --b
                Content-Type: text/plain

                Delivery to some recipients failed.
                --b
                Content-Type: message/delivery-status

                Reporting-MTA: dns; mx.corp.example

                Final-Recipient: rfc822; billing@corp.example
                Action: failed
                Status: 5.1.1
                Diagnostic-Code: smtp; 550 5.1.1 user unknown

                Final-Recipient: rfc822; audit@shop.example
                Action: delayed
                Status: 4.2.2

                --b--
                """;
        var ingest = new io.mailroom.delivery.dsn.DsnIngest(store, address -> address.startsWith("bounces+") ? KEY : null);
        inTx(tx -> {
            try {
                return ingest.ingest(tx, dsn.replace("\n", "\r\n").getBytes(StandardCharsets.UTF_8), "bounces+xyz@shop.example");
            } catch (io.mailroom.delivery.webhook.MalformedEventException e) {
                throw new IllegalStateException(e);
            }
        });

        assertThat(recipientStates()).containsExactlyInAnyOrderEntriesOf(Map.of(
                "billing@corp.example", "bounced", "audit@shop.example", "deferred"));
        assertThat(heard).hasSize(2).allSatisfy(e -> {
            assertThat(e.idempotencyKey()).isEqualTo(KEY);
            assertThat(e.recipientMismatch()).isFalse();
        });
    }

    @Test
    void theMostTagsAnEventKeepsAtTheirLongestAreStored() throws Exception {
        StringBuilder tags = new StringBuilder();
        for (int i = 0; i < 25; i++) {
            tags.append(i == 0 ? "" : ",").append('"').append(("t" + i + "_").repeat(30), 0, 64).append("\":\"").append("v".repeat(256)).append('"');
        }
        List<DeliveryEvent> events = new NeutralEventAdapter().parse(("{\"type\":\"delivered\",\"idempotency_key\":\"" + KEY
                + "\",\"recipient\":\"ann@example.com\",\"tags\":{" + tags + "}}").getBytes(StandardCharsets.UTF_8));
        assertThat(events.getFirst().tags()).hasSize(DeliveryEvent.MAX_TAGS);
        assertThat(ingest("d-many", events).stored()).isEqualTo(1);
    }

    @Test
    void erasingAnAddressMasksItsRecipientState() throws Exception {
        ingest("d1", resend("email.delivered", null, "ann@example.com", "billing@corp.example"));
        Redaction r = new Redaction("billing@corp.example", List.of(), Redaction.marker("0a1b2c3d4e"));
        inTx(tx -> DeliveryErasure.erase(tx, r, "hash", List.of(KEY)));
        assertThat(recipientStates()).containsOnlyKeys("ann@example.com", r.marker());
    }
}
