package io.mailroom.delivery.webhook;

import io.mailroom.delivery.BounceType;
import io.mailroom.delivery.DeliveryEvent;
import io.mailroom.delivery.DeliveryKind;
import org.junit.jupiter.api.Test;

import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class AdaptersTest {

    private static byte[] b(String s) {
        return s.getBytes(StandardCharsets.UTF_8);
    }

    private final NeutralEventAdapter neutral = new NeutralEventAdapter();
    private final ResendEventAdapter resend = new ResendEventAdapter();

    @Test
    void neutralReadsOneEventOrAList() throws Exception {
        List<DeliveryEvent> one = neutral.parse(b("""
                {"type":"bounced","bounce_type":"hard","message_id":"prov-1","idempotency_key":"email-order-102",
                 "recipient":"Ann@Example.com","occurred_at":"2026-12-04T10:02:00Z",
                 "diagnostic_code":"smtp; 550 5.1.1 user unknown","description":"no such mailbox"}"""));
        assertThat(one).containsExactly(new DeliveryEvent(DeliveryKind.BOUNCED, BounceType.HARD, "bounced", "prov-1",
                "email-order-102", "Ann@Example.com", Instant.parse("2026-12-04T10:02:00Z"),
                "smtp; 550 5.1.1 user unknown", "no such mailbox"));

        List<DeliveryEvent> list = neutral.parse(b("""
                {"events":[{"type":"delivered","message_id":"p-1"},{"type":"opened","message_id":"p-1"},
                           {"type":"complained","idempotency_key":"k"}]}"""));
        assertThat(list).extracting(DeliveryEvent::kind)
                .containsExactly(DeliveryKind.DELIVERED, DeliveryKind.UNKNOWN, DeliveryKind.COMPLAINED);
        assertThat(list.get(1).providerEvent()).isEqualTo("opened");
    }

    @Test
    void neutralNamesTheFieldThatIsWrong() {
        assertThatThrownBy(() -> neutral.parse(b("{\"type\":\"bounced\"}")))
                .isInstanceOfSatisfying(MalformedEventException.class, e -> assertThat(e.field()).isEqualTo("bounce_type"));
        assertThatThrownBy(() -> neutral.parse(b("{\"type\":\"bounced\",\"bounce_type\":\"medium\"}")))
                .hasMessage("bounce_type: must be hard or soft");
        assertThatThrownBy(() -> neutral.parse(b("{\"events\":[{\"type\":\"delivered\"},{\"type\":7}]}")))
                .hasMessage("events[1].type: must be a string");
        assertThatThrownBy(() -> neutral.parse(b("{\"type\":\"delivered\",\"occurred_at\":\"soon\"}")))
                .hasMessage("occurred_at: is not an ISO-8601 time");
        assertThatThrownBy(() -> neutral.parse(b("[1,2]"))).hasMessage("body: must be a JSON object");
        assertThatThrownBy(() -> neutral.parse(b("{\"type\":"))).hasMessageStartingWith("body: is not valid JSON");
        assertThatThrownBy(() -> neutral.parse(b("{\"events\":[]}"))).hasMessage("events: must be a non-empty array");
        assertThatThrownBy(() -> neutral.parse(b("{\"type\":\"delivered\",\"type\":\"bounced\"}")))
                .hasMessageStartingWith("body: is not valid JSON");
    }

    @Test
    void resendBounceComplaintDeliveryAndDelay() throws Exception {
        DeliveryEvent bounce = resend.parse(b("""
                {"type":"email.bounced","created_at":"2026-12-04T10:02:03.123Z",
                 "data":{"email_id":"4ef9a417-02e9-4d39-ad75-9611e0fcc33c","from":"Shop <shop@example.com>",
                         "to":["ann@example.com"],"subject":"Your order 102","created_at":"2026-12-04T10:01:00Z",
                         "bounce":{"type":"Permanent","subType":"General","message":"550 5.1.1 The email account does not exist"},
                         "tags":{"idempotency_key":"email-order-102"}}}""")).getFirst();
        assertThat(bounce).isEqualTo(new DeliveryEvent(DeliveryKind.BOUNCED, BounceType.HARD, "email.bounced",
                "4ef9a417-02e9-4d39-ad75-9611e0fcc33c", "email-order-102", "ann@example.com",
                Instant.parse("2026-12-04T10:02:03.123Z"), "550 5.1.1 The email account does not exist", "Permanent/General"));

        DeliveryEvent soft = resend.parse(b("""
                {"type":"email.bounced","created_at":"2026-12-04T10:02:03Z","data":{"email_id":"e-2","to":["a@b.example"],
                 "bounce":{"type":"Transient","subType":"MailboxFull","message":"452 mailbox full"},
                 "tags":[{"name":"category","value":"x"},{"name":"idempotency_key","value":"k-2"}]}}""")).getFirst();
        assertThat(soft.bounceType()).isEqualTo(BounceType.SOFT);
        assertThat(soft.idempotencyKey()).isEqualTo("k-2");

        assertThat(resend.parse(b("{\"type\":\"email.complained\",\"data\":{\"email_id\":\"e\",\"to\":[\"a@b.example\"]}}")).getFirst().kind())
                .isEqualTo(DeliveryKind.COMPLAINED);
        assertThat(resend.parse(b("{\"type\":\"email.delivered\",\"data\":{\"email_id\":\"e\"}}")).getFirst().kind())
                .isEqualTo(DeliveryKind.DELIVERED);
        assertThat(resend.parse(b("{\"type\":\"email.delivery_delayed\",\"data\":{\"email_id\":\"e\"}}")).getFirst().kind())
                .isEqualTo(DeliveryKind.DEFERRED);
        assertThat(resend.parse(b("{\"type\":\"email.clicked\",\"data\":{\"email_id\":\"e\"}}")).getFirst())
                .satisfies(e -> {
                    assertThat(e.kind()).isEqualTo(DeliveryKind.UNKNOWN);
                    assertThat(e.providerEvent()).isEqualTo("email.clicked");
                });
    }

    @Test
    void resendGivesOneEventPerAffectedRecipient() throws Exception {
        List<DeliveryEvent> events = resend.parse(b("""
                {"type":"email.bounced","data":{"email_id":"e-9","to":["a@example.com","B@example.com"],
                 "bounce":{"type":"Permanent","message":"550 gone"}}}"""));
        assertThat(events).extracting(DeliveryEvent::recipient).containsExactly("a@example.com", "B@example.com");
        assertThat(events).allSatisfy(e -> assertThat(e.providerMessageId()).isEqualTo("e-9"));
        assertThat(resend.parse(b("{\"type\":\"email.delivered\",\"data\":{\"email_id\":\"e\"}}"))).singleElement()
                .satisfies(e -> assertThat(e.recipient()).isNull());
    }

    @Test
    void resendNamesTheFieldThatIsWrong() {
        assertThatThrownBy(() -> resend.parse(b("{\"type\":\"email.bounced\",\"data\":{\"email_id\":\"e\"}}")))
                .hasMessage("data.bounce: is required for email.bounced");
        assertThatThrownBy(() -> resend.parse(b("{\"type\":\"email.delivered\"}"))).hasMessage("data: must be an object");
        assertThatThrownBy(() -> resend.parse(b("{\"data\":{}}"))).hasMessage("type: is required");
        assertThatThrownBy(() -> resend.parse(b("{\"type\":\"email.delivered\",\"data\":{\"to\":5}}"))).hasMessage("data.to: must be an array of addresses");
    }

    @Test
    void everyAdapterHasTheNeutralFormatsCapOnEventsPerDelivery() throws Exception {
        String to100 = String.join(",", java.util.stream.IntStream.range(0, DeliveryEventAdapter.MAX_EVENTS)
                .mapToObj(i -> "\"r" + i + "@example.com\"").toList());
        String bounce = "{\"type\":\"email.bounced\",\"data\":{\"email_id\":\"e\",\"bounce\":{\"type\":\"Permanent\"},\"to\":[%s]}}";
        assertThat(resend.parse(b(bounce.formatted(to100)))).hasSize(DeliveryEventAdapter.MAX_EVENTS);
        assertThatThrownBy(() -> resend.parse(b(bounce.formatted(to100 + ",\"one-more@example.com\""))))
                .isInstanceOf(MalformedEventException.class)
                .hasMessage("data.to: has " + (DeliveryEventAdapter.MAX_EVENTS + 1) + " addresses; at most "
                        + DeliveryEventAdapter.MAX_EVENTS + " events are taken from one webhook");
        String events101 = String.join(",", java.util.Collections.nCopies(DeliveryEventAdapter.MAX_EVENTS + 1, "{\"type\":\"delivered\"}"));
        assertThatThrownBy(() -> neutral.parse(b("{\"events\":[" + events101 + "]}")))
                .isInstanceOf(MalformedEventException.class).hasMessageContaining("at most " + DeliveryEventAdapter.MAX_EVENTS);
    }

    @Test
    void bodiesAreReadStrictlyAndBounded() throws Exception {
        assertThat(neutral.parse(b("{\"events\":[{\"type\":\"delivered\"}]}"))).hasSize(1);
        String deep = "{\"a\":".repeat(40) + "1" + "}".repeat(40);
        for (String body : List.of("{\"events\":[],\"events\":[{\"type\":\"delivered\"}]}", "{\"events\":[]} {}", deep)) {
            assertThatThrownBy(() -> neutral.parse(b(body))).as(body).isInstanceOf(MalformedEventException.class)
                    .hasMessageStartingWith("body: is not valid JSON");
        }
    }
}
