package io.mailroom.email.dispatch;

import io.mailroom.delivery.suppression.SuppressionConfig;
import io.mailroom.delivery.suppression.SuppressionList;
import io.mailroom.delivery.suppression.SuppressionPolicy;
import io.mailroom.email.Email;
import io.mailroom.email.EmailAddress;
import io.mailroom.email.api.EmailOutbox;
import io.mailroom.email.api.OutgoingEmail;
import io.mailroom.email.resilience.TransportPolicyConfig;
import io.mailroom.email.transport.MailTransport;
import io.mailroom.email.transport.SendResult;
import io.mailroom.idempotency.IdempotencyStore;
import io.mailroom.outbox.OutboxEnqueuer;
import io.mailroom.outbox.runtime.ClaimedMessage;
import io.mailroom.outbox.runtime.Dispatcher;
import io.mailroom.outbox.runtime.DispatcherConfig;
import io.mailroom.testing.PostgresExtension;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.UnaryOperator;

import static io.mailroom.db.jooq.Tables.AUDIT_LOG;
import static io.mailroom.db.jooq.Tables.IDEMPOTENCY_RECORD;
import static io.mailroom.db.jooq.Tables.OUTBOX_MESSAGE;
import static io.mailroom.email.dispatch.DispatchFixture.TOPIC;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * Emails with several recipients through the handler: the envelope v2 the email API writes is read
 * whole, the suppression list is applied per recipient, and the fingerprint holds every recipient
 * and tag.
 */
class SeveralRecipientsDispatchTest {

    @RegisterExtension
    static final PostgresExtension pg = new PostgresExtension();

    private final SuppressionList list = new SuppressionList(SuppressionConfig.defaults(), null);
    private final Map<String, Email> sent = new ConcurrentHashMap<>();

    @BeforeEach
    void clean() {
        pg.dsl().execute("TRUNCATE outbox_message, outbox_effect, outbox_effect_term, outbox_attempt, idempotency_record, email_rendering, suppression, audit_log");
    }

    private static OutgoingEmail.Builder receipt(String key) {
        return OutgoingEmail.template("receipt").to("ann@example.com", "Ann").about("order", "102").idempotencyKey(key)
                .data(Map.of("customer", Map.of("name", "Ann"), "order", Map.of("id", "102", "currency", "EUR",
                        "total", new java.math.BigDecimal("25.00"), "createdAt", "2026-12-02T10:00:00Z",
                        "lines", List.of(Map.of("sku", "MUG-1", "name", "Mug", "quantity", 2,
                                "unitPrice", new java.math.BigDecimal("12.50"), "amount", new java.math.BigDecimal("25.00"))))));
    }

    private static void enqueue(OutgoingEmail email) {
        pg.dsl().transaction(c -> new EmailOutbox(new OutboxEnqueuer()).enqueue(c.dsl(), email));
    }

    private void suppress(String address) {
        pg.dsl().transaction(c -> list.add(c.dsl(), address, "asked by phone", "alice", "support"));
    }

    private void runOnce() {
        MailTransport transport = new MailTransport() {
            @Override
            public String name() {
                return "smtp";
            }

            @Override
            public SendResult send(Email email, String key) {
                sent.put(key, email);
                return new SendResult.Sent("<" + key + "@shop.example.com>", "{\"replyCode\":250}");
            }
        };
        EmailHandler handler = new EmailHandler(pg.dataSource(), new IdempotencyStore(), DispatchFixture.composer(),
                DispatchFixture.resilient(transport, TransportPolicyConfig.defaults()), AmbiguityPolicy.review(), "w", null,
                new SuppressionCheck(list, topic -> SuppressionPolicy.STRICT));
        new Dispatcher(pg.dataSource(), DispatcherConfig.builder().workerId("w").batchSize(10).concurrency(4).build(),
                Map.of(TOPIC, handler)).runOnce();
    }

    private static String status(String key) {
        return pg.dsl().select(OUTBOX_MESSAGE.STATUS, OUTBOX_MESSAGE.LAST_ERROR).from(OUTBOX_MESSAGE)
                .where(OUTBOX_MESSAGE.IDEMPOTENCY_KEY.eq(key)).fetchOne(r -> r.value1() + " " + r.value2());
    }

    private static List<String> addresses(List<EmailAddress> list) {
        return list.stream().map(EmailAddress::address).toList();
    }

    @Test
    void aSuppressedCcIsLeftOutWithAHistoryLine_theToGetsTheEmail() throws Exception {
        enqueue(receipt("email-cc").cc("billing@corp.example", "Billing").bcc("audit@shop.example", null)
                .tag("category", "receipt").build());
        suppress("billing@corp.example");

        runOnce();

        Email email = sent.get("email-cc");
        assertThat(addresses(email.toList())).containsExactly("ann@example.com");
        assertThat(email.cc()).isEmpty();
        assertThat(addresses(email.bcc())).containsExactly("audit@shop.example");
        assertThat(email.tags()).containsExactly(Map.entry("category", "receipt"));
        assertThat(status("email-cc")).isEqualTo("done null");
        var line = pg.dsl().selectFrom(AUDIT_LOG).where(AUDIT_LOG.IDEMPOTENCY_KEY.eq("email-cc")).fetchSingle();
        assertThat(line.getAction()).isEqualTo(RecipientSuppression.ACTION);
        assertThat(line.getReason()).startsWith("left out of the send: cc b***@corp.example suppressed (added by hand on ")
                .endsWith("; the other recipients get the email");
        var json = new com.fasterxml.jackson.databind.ObjectMapper();
        assertThat(json.readTree(line.getDetail().data()).at("/dropped/0/address").asText()).isEqualTo("billing@corp.example");
        // the descriptor lists every recipient asked for, and the tags
        String descriptor = pg.dsl().select(IDEMPOTENCY_RECORD.DESCRIPTOR).from(IDEMPOTENCY_RECORD)
                .where(IDEMPOTENCY_RECORD.EFFECT_KEY.eq("email-cc")).fetchSingle().value1().data();
        assertThat(json.readTree(descriptor).get("recipients")).isEqualTo(json.readTree("""
                [{"role":"to","address":"ann@example.com","name":"Ann"},{"role":"cc","address":"billing@corp.example","name":"Billing"},
                 {"role":"bcc","address":"audit@shop.example"}]"""));
        assertThat(json.readTree(descriptor).at("/tags/category").asText()).isEqualTo("receipt");
    }

    @Test
    void oneOfSeveralToSuppressedIsLeftOut_allToSuppressedFailsAsASoleToDoes_evenWithCcLeft() {
        enqueue(receipt("email-two").to("bo@example.com", null).build());
        enqueue(receipt("email-none").to("bo@example.com", null).cc("carl@corp.example", null).build());
        suppress("ann@example.com");
        runOnce();
        assertThat(addresses(sent.get("email-two").toList())).containsExactly("bo@example.com");
        assertThat(sent.get("email-two").to().address()).isEqualTo("bo@example.com");

        suppress("bo@example.com");
        enqueue(receipt("email-all").to("bo@example.com", null).cc("carl@corp.example", null).build());
        runOnce();
        assertThat(sent).doesNotContainKey("email-all");
        assertThat(status("email-all")).startsWith("failed suppressed (added by hand on ");
        assertThat(pg.dsl().fetchCount(IDEMPOTENCY_RECORD, IDEMPOTENCY_RECORD.EFFECT_KEY.eq("email-all"))).isZero();
    }

    @Test
    void theFingerprintHoldsEveryRecipientAndTag_v1KeepsItsParts() throws Exception {
        UnaryOperator<OutgoingEmail.Builder> none = b -> b;
        List<String> plain = parts(none);
        assertThat(plain.getFirst()).isEqualTo("email-envelope-v1");
        List<String> withCc = parts(b -> b.cc("carl@corp.example", null));
        assertThat(withCc.getFirst()).isEqualTo("email-envelope-v2");
        assertThat(parts(b -> b.cc("dora@corp.example", null))).isNotEqualTo(withCc);
        assertThat(parts(b -> b.bcc("carl@corp.example", null))).isNotEqualTo(withCc);
        assertThat(parts(b -> b.tag("plan", "pro"))).isNotEqualTo(parts(b -> b.tag("plan", "free")));
        assertThat(parts(b -> b.tag("a", "1").tag("b", "2"))).as("tags in name order").isEqualTo(parts(b -> b.tag("b", "2").tag("a", "1")));
    }

    private static List<String> parts(UnaryOperator<OutgoingEmail.Builder> edit) throws Exception {
        String payload = new EmailOutbox(new OutboxEnqueuer()).message(edit.apply(receipt("k")).build()).payloadJson();
        Instant now = Instant.now();
        return DispatchFixture.composer().compose(new ClaimedMessage(1, now, TOPIC, "order", "102", "k", null, payload,
                1, 10, 1, now, now.plusSeconds(60))).fingerprintParts();
    }
}
