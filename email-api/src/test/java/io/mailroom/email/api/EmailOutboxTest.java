package io.mailroom.email.api;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.mailroom.outbox.DuplicateIdempotencyKeyException;
import io.mailroom.outbox.OutboxEnqueuer;
import io.mailroom.testing.PostgresExtension;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import java.math.BigDecimal;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.function.Consumer;

import static io.mailroom.db.jooq.Tables.OUTBOX_EFFECT;
import static io.mailroom.db.jooq.Tables.OUTBOX_MESSAGE;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class EmailOutboxTest {

    @RegisterExtension
    static final PostgresExtension pg = new PostgresExtension();

    private final EmailOutbox outbox = new EmailOutbox(new OutboxEnqueuer(), () -> Set.of("order_shipped", "order_confirmation"), 4096);

    private static OutgoingEmail.Builder shipped(String key) {
        return withoutRecipient(key).to("an@example.com", "Nguyễn Văn An");
    }

    /** {@link #shipped} before its recipient is added ({@code to} adds one: a test of a bad sole recipient starts here). */
    private static OutgoingEmail.Builder withoutRecipient(String key) {
        return OutgoingEmail.template("order_shipped")
                .locale("vi")
                .about("order", "102")
                .idempotencyKey(key)
                .header("X-Campaign", "autumn")
                .data(Map.of("order", Map.of("id", "102", "total", new BigDecimal("535000.00"),
                        "shippedAt", Instant.parse("2026-12-03T09:15:00Z"), "lines", List.of(Map.of("name", "Bánh mì \"đặc biệt\"\n")))));
    }

    private long messages(String key) {
        return pg.dsl().fetchCount(OUTBOX_MESSAGE, OUTBOX_MESSAGE.IDEMPOTENCY_KEY.eq(key));
    }

    @Test
    void anEmailIsWrittenInTheCallersTransactionAsAnEnvelopeTheDispatcherReads() throws Exception {
        pg.dsl().transaction(cfg -> outbox.enqueue(cfg.dsl(), shipped("email-order-102-shipped").build()));

        var row = pg.dsl().selectFrom(OUTBOX_MESSAGE).where(OUTBOX_MESSAGE.IDEMPOTENCY_KEY.eq("email-order-102-shipped")).fetchSingle();
        assertThat(row.getTopic()).isEqualTo("email.order_shipped");
        JsonNode payload = new ObjectMapper().readTree(row.getPayload().data());
        assertThat(payload.get("v").asInt()).isEqualTo(1);
        assertThat(payload.get("template").asText()).isEqualTo("order_shipped");
        assertThat(payload.get("locale").asText()).isEqualTo("vi");
        assertThat(payload.at("/to/address").asText()).isEqualTo("an@example.com");
        assertThat(payload.at("/to/name").asText()).isEqualTo("Nguyễn Văn An");
        assertThat(payload.at("/headers/X-Campaign").asText()).isEqualTo("autumn");
        assertThat(payload.at("/data/order/total").decimalValue()).isEqualByComparingTo("535000.00");
        assertThat(payload.at("/data/order/shippedAt").asText()).isEqualTo("2026-12-03T09:15:00Z");
        assertThat(payload.at("/data/order/lines/0/name").asText()).isEqualTo("Bánh mì \"đặc biệt\"\n");

        var effect = pg.dsl().selectFrom(OUTBOX_EFFECT).where(OUTBOX_EFFECT.IDEMPOTENCY_KEY.eq("email-order-102-shipped")).fetchSingle();
        assertThat(effect.getAggregateType()).isEqualTo("order");
        assertThat(effect.getAggregateId()).isEqualTo("102");
    }

    @Test
    void anOrderingKeyIsWrittenWithTheMessage_noneWhenNotGiven() {
        pg.dsl().transaction(cfg -> outbox.enqueue(cfg.dsl(), shipped("email-ordered").orderingKey("order-102").build()));
        pg.dsl().transaction(cfg -> outbox.enqueue(cfg.dsl(), shipped("email-unordered").build()));
        assertThat(pg.dsl().select(OUTBOX_MESSAGE.ORDERING_KEY).from(OUTBOX_MESSAGE)
                .where(OUTBOX_MESSAGE.IDEMPOTENCY_KEY.eq("email-ordered")).fetchSingle().value1()).isEqualTo("order-102");
        assertThat(pg.dsl().select(OUTBOX_MESSAGE.ORDERING_KEY).from(OUTBOX_MESSAGE)
                .where(OUTBOX_MESSAGE.IDEMPOTENCY_KEY.eq("email-unordered")).fetchSingle().value1()).isNull();
    }

    @Test
    void aRolledBackTransactionLeavesNoEmail() {
        assertThatThrownBy(() -> pg.dsl().transaction(cfg -> {
            outbox.enqueue(cfg.dsl(), shipped("email-rollback").build());
            throw new IllegalStateException("the business change failed");
        })).hasMessage("the business change failed");
        assertThat(messages("email-rollback")).isZero();
    }

    @Test
    void theSameEffectTwiceIsADuplicateKey() {
        pg.dsl().transaction(cfg -> outbox.enqueue(cfg.dsl(), shipped("email-dup").build()));
        assertThatThrownBy(() -> pg.dsl().transaction(cfg -> outbox.enqueue(cfg.dsl(), shipped("email-dup").build())))
                .isInstanceOf(DuplicateIdempotencyKeyException.class);
        assertThat(messages("email-dup")).isEqualTo(1);
    }

    private void refused(String field, Consumer<OutgoingEmail.Builder> change) {
        String key = "email-refused-" + field.replaceAll("[^a-zA-Z0-9]", "-");
        assertThatThrownBy(() -> pg.dsl().transaction(cfg -> {
            OutgoingEmail.Builder b = field.startsWith("to.") ? withoutRecipient(key) : shipped(key);
            change.accept(b);
            outbox.enqueue(cfg.dsl(), b.build());
        })).satisfies(e -> {
            Throwable t = e instanceof InvalidEmailException ? e : e.getCause();
            assertThat(t).isInstanceOf(InvalidEmailException.class);
            assertThat(((InvalidEmailException) t).field()).isEqualTo(field);
        });
        assertThat(messages(key)).as("nothing written").isZero();
    }

    @Test
    void everyBadFieldIsRefusedByNameInsideTheTransaction() {
        refused("to.address", b -> b.to("an@exa mple.com", "An"));
        refused("to.address", b -> b.to("a".repeat(250) + "@x.io", "An"));
        refused("to.name", b -> b.to("an@example.com", "An\u202Egnp.exe"));
        // RFC 2047 encoded words: "Ann\r\nBcc: evil@example.net" and "Support \u202Emoc.knab" once decoded
        refused("to.name", b -> b.to("an@example.com", "=?UTF-8?B?QW5uDQpCY2M6IGV2aWxAZXhhbXBsZS5uZXQ=?="));
        refused("to.name", b -> b.to("an@example.com", "=?UTF-8?Q?Support_=E2=80=AEmoc.knab?="));
        refused("replyTo.name", b -> b.replyTo("help@example.com", "=?UTF-8?B?QW5uDQpCY2M6IGV2aWxAZXhhbXBsZS5uZXQ=?="));
        refused("headers.X-Campaign", b -> b.header("X-Campaign", "=?UTF-8?B?QW5uDQpCY2M6IGV2aWxAZXhhbXBsZS5uZXQ=?="));
        refused("replyTo.address", b -> b.replyTo("nobody", null));
        refused("headers.X-Campaign", b -> b.header("X-Campaign", "x\r\nBcc: all@example.com"));
        refused("headers.Bcc", b -> b.header("Bcc", "all@example.com"));
        refused("locale", b -> b.locale("not a tag"));
        refused("data.order.when", b -> b.data(Map.of("order", Map.of("when", new Object()))));
        refused("data.bad", b -> b.data(Map.of("bad", "nul\u0000")));
        refused("data", b -> b.data(Map.of("notes", "x".repeat(5000))));
        refused("idempotencyKey", b -> b.idempotencyKey(" "));
        refused("orderingKey", b -> b.orderingKey(" "));
        refused("orderingKey", b -> b.orderingKey("o".repeat(201)));
        refused("aggregateType", b -> b.about(null, "102"));
    }

    @Test
    void aNulInAnyStringIsRefusedByName_beforeSqlCouldReportItAsADataException() {
        refused("to.address", b -> b.to("an\u0000@example.com", "An"));
        refused("to.name", b -> b.to("an@example.com", "An\u0000"));
        refused("replyTo.name", b -> b.replyTo("help@example.com", "Help\u0000"));
        refused("headers.X-Campaign", b -> b.header("X-Campaign", "x\u0000"));
        refused("locale", b -> b.locale("vi\u0000"));
        refused("topic", b -> b.topic("email.x\u0000"));
        refused("data.order", b -> b.data(Map.of("order", Map.of("id\u0000", "1"))));
        refused("data.lines[1]", b -> b.data(Map.of("lines", java.util.List.of("ok", "n\u0000"))));
        refused("aggregateType", b -> b.about("order\u0000", "102"));
        refused("aggregateId", b -> b.about("order", "102\u0000"));
        refused("idempotencyKey", b -> b.idempotencyKey("email-order-\u0000"));
    }

    @Test
    void anUnknownTemplateIsRefusedWithTheKnownOnesWhenTheCatalogueIsReachable() {
        OutgoingEmail email = OutgoingEmail.template("password_reset").to("an@example.com", null)
                .about("user", "7").idempotencyKey("email-user-7-reset").build();
        assertThatThrownBy(() -> outbox.message(email))
                .isInstanceOfSatisfying(InvalidEmailException.class, e -> {
                    assertThat(e.field()).isEqualTo("template");
                    assertThat(e.getMessage()).contains("password_reset").contains("order_confirmation, order_shipped");
                });
        assertThat(new EmailOutbox(new OutboxEnqueuer()).message(email).topic()).as("no catalogue: the dispatcher decides")
                .isEqualTo("email.password_reset");
    }

    @Test
    void aTemplateNameOrTopicThatIsNotANameIsRefused() {
        assertThatThrownBy(() -> OutgoingEmail.template("../etc/passwd").to("an@example.com", null).build())
                .isInstanceOfSatisfying(InvalidEmailException.class, e -> assertThat(e.field()).isEqualTo("template"));
        assertThatThrownBy(() -> OutgoingEmail.template("x").topic("Email Orders").to("an@example.com", null).build())
                .isInstanceOfSatisfying(InvalidEmailException.class, e -> assertThat(e.field()).isEqualTo("topic"));
        assertThatThrownBy(() -> OutgoingEmail.template("x").build())
                .isInstanceOfSatisfying(InvalidEmailException.class, e -> assertThat(e.field()).isEqualTo("to"));
    }
}
