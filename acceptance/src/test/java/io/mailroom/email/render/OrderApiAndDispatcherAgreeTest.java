package io.mailroom.email.render;

import com.fasterxml.jackson.databind.json.JsonMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.mailroom.email.Email;
import io.mailroom.email.EmailAddress;
import io.mailroom.email.InvalidEmailException;
import io.mailroom.email.api.OutgoingEmail;
import io.mailroom.email.config.EmailTopics;
import io.mailroom.mailbox.MailboxRules;
import io.mailroom.orders.InvalidOrderException;
import io.mailroom.orders.PlaceOrder;
import io.mailroom.outbox.runtime.ClaimedMessage;
import jakarta.mail.internet.InternetAddress;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

import java.math.BigDecimal;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.stream.Stream;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatCode;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * The order API, the email API and the dispatcher apply one rule to the customer's address and
 * name: whatever the dispatcher refuses in an envelope (a permanent failure, with nothing left for
 * support to decide), the email API refuses at enqueue and the order API refuses first with 400
 * naming the same field, and the other way round. All three quote the problem {@link MailboxRules}
 * states, which shows the verdict comes from the same code, not from copies that agree today. The
 * legacy reader of pre-envelope order documents gives the same verdict too.
 */
class OrderApiAndDispatcherAgreeTest {

    private static final String TOPIC = "email.order_confirmation";
    private final TemplatedComposer composer = composer();
    private final JsonMapper json = JsonMapper.builder().build();

    private static TemplatedComposer composer() {
        // the four-argument composer finds the shop's LegacyOrderPayload on the class path, as a dispatcher does
        return new TemplatedComposer(io.mailroom.acceptance.Shop.templates(), Map.of(TOPIC, new EmailTopics.Route(TOPIC, "order_confirmation", null)),
                EmailAddress.of("shop@example.com", "Example Shop"), Email.DEFAULT_MAX_BODY_BYTES);
    }

    static Stream<String> addresses() {
        String domain195 = "d".repeat(63) + "." + "e".repeat(63) + "." + "f".repeat(63) + ".com";
        return Stream.of(
                "ann@example.com", "Ann.Lee+orders@Example.COM", "o'brien@example.ie", "x@xn--p1ai.xn--p1ai", "a@b.co",
                "l".repeat(58) + "@" + domain195, // 254: the limit
                "l".repeat(59) + "@" + domain195, // 255: one over
                "l".repeat(64) + "@" + ("d".repeat(63) + ".").repeat(3) + "c".repeat(61), // 318: the order API's old limit
                "a".repeat(65) + "@example.com", "ann", "ann@", "@example.com", "ann@@example.com", "ann@localhost",
                "ann@10.0.0.1", "ann@[127.0.0.1]", "\"ann lee\"@example.com", ".ann@example.com", "an..n@example.com",
                "ann@-example.com", "ann@exa_mple.com", "anné@example.com", "ann@example.com\r\nBcc: eve@example.org",
                "ann @example.com", "ann@example.com ", "Ann <ann@example.com>", "ann@example.com, eve@example.org", "");
    }

    static Stream<String> names() {
        return Stream.of(
                "Ann", "  Ann Lee ", "Zoë Ñúñez 李雷 😀", "👩\u200D💻 dev", "\u05D3\u05E0\u05D4", "x".repeat(200),
                "\uD83D\uDCE6".repeat(200), // 200 characters in 400 UTF-16 units
                "x".repeat(201), "\uD83D\uDCE6".repeat(201), " ", "",
                "Ann \u202Emoc.live", "Ann\u202A", "Ann\u2066x", "Ann\u2069", "Ann\u200F", "Ann\u200E", "Ann\u061C",
                "Ann\u2028Lee", "Ann\u2029", "Ann\r\nBcc: eve@example.org", "Ann\n", "Ann\u0000", "Ann\u0007",
                "Ann\u001b[31m", "Ann\u007f", "Ann\u0085", "Ann\uD800", "Ann\uDC00x",
                "=?UTF-8?B?QW5uDQpCY2M6IGV2aWxAZXhhbXBsZS5uZXQ=?=", "=?UTF-8?Q?Support_=E2=80=AEmoc.knab?=", "=?UTF-8?Q?Zo=C3=AB?=");
    }

    @ParameterizedTest
    @MethodSource("addresses")
    void theOrderApiTheEmailApiAndTheDispatcherGiveTheSameVerdictOnAnAddress(String address) {
        Optional<String> rule = MailboxRules.addressProblem(address);
        Optional<String> api = apiProblem(order(address, "Ann"), "customerEmail");
        Optional<String> outbox = outboxProblem(address, "Ann", "to.address");
        Optional<String> render = renderProblem(envelope(address, "Ann"), "payload.to", "address");
        Optional<String> legacy = renderProblem(legacyPayload(address, "Ann"), "customerEmail", "address");

        assertThat(api).as("order API on %s", address).isEqualTo(rule);
        // the email API strips blanks around the address before it applies the rule
        assertThat(outbox).as("email API on %s", address).isEqualTo(MailboxRules.addressProblem(address.strip()));
        assertThat(render).as("dispatcher on %s", address).isEqualTo(rule);
        assertThat(legacy).as("legacy reader on %s", address).isEqualTo(rule);
    }

    @ParameterizedTest
    @MethodSource("names")
    void theOrderApiTheEmailApiAndTheDispatcherGiveTheSameVerdictOnAName(String name) {
        Optional<String> rule = MailboxRules.displayNameProblem(name);
        Optional<String> api = apiProblem(order("ann@example.com", name), "customerName");
        Optional<String> outbox = outboxProblem("ann@example.com", name, "to.name");
        Optional<String> render = renderProblem(envelope("ann@example.com", name), "payload.to", "displayName");
        Optional<String> legacy = renderProblem(legacyPayload("ann@example.com", name), "customerName", null);

        assertThat(api).as("order API on %s", name).isEqualTo(rule);
        assertThat(outbox).as("email API on %s", name).isEqualTo(rule);
        assertThat(render).as("dispatcher on %s", name).isEqualTo(rule);
        assertThat(legacy).as("legacy reader on %s", name).isEqualTo(rule);
    }

    @Test
    void anAddressOf255CharactersIsRefusedByTheEmailTypeAsByTheOrderApi() {
        String address = "l".repeat(59) + "@" + "d".repeat(63) + "." + "e".repeat(63) + "." + "f".repeat(63) + ".com";
        assertThat(address).hasSize(255);
        assertThatThrownBy(() -> EmailAddress.of(address))
                .isInstanceOfSatisfying(InvalidEmailException.class, e -> {
                    assertThat(e.field()).isEqualTo("address");
                    assertThat(e).hasMessageContaining("254");
                });
        assertThatThrownBy(order(address, "Ann")::validate)
                .isInstanceOfSatisfying(InvalidOrderException.class, e -> assertThat(e.field()).isEqualTo("customerEmail"));
        assertThatCode(() -> EmailAddress.of(address.substring(1))).doesNotThrowAnyException();
    }

    @ParameterizedTest
    @MethodSource("addresses")
    void everyAddressTheRuleAcceptsIsAcceptedByJakartaMailsStrictParser(String address) throws Exception {
        // The email type used to ask Jakarta Mail for a second opinion; the rule must never be laxer.
        if (MailboxRules.addressProblem(address).isEmpty()) {
            new InternetAddress(EmailAddress.of(address).address(), true).validate();
        }
    }

    @Test
    void theEmailTypeUsesTheRulesLimits() {
        assertThat(EmailAddress.MAX_ADDRESS_LENGTH).isEqualTo(MailboxRules.MAX_ADDRESS_LENGTH).isEqualTo(254);
        assertThat(EmailAddress.MAX_DISPLAY_NAME_LENGTH).isEqualTo(MailboxRules.MAX_DISPLAY_NAME_LENGTH)
                .isEqualTo(PlaceOrder.MAX_NAME_LENGTH);
    }

    private static PlaceOrder order(String address, String name) {
        return new PlaceOrder(address, name, "EUR", List.of(new PlaceOrder.Line("A1", "Mug", 2, new BigDecimal("21.25"))));
    }

    private String envelope(String address, String name) {
        ObjectNode p = json.createObjectNode();
        p.put("v", 1).put("template", "order_confirmation").put("locale", "en");
        p.putObject("to").put("address", address).put("name", name);
        ObjectNode order = p.putObject("data").putObject("order");
        ((ObjectNode) p.get("data")).putObject("customer").put("name", name);
        order.put("id", "102").put("currency", "EUR").put("total", new BigDecimal("42.50")).put("createdAt", "2026-12-02T10:00:00Z");
        order.putArray("lines").addObject().put("sku", "A1").put("name", "Mug").put("quantity", 2)
                .put("unitPrice", new BigDecimal("21.25")).put("amount", new BigDecimal("42.50"));
        return p.toString();
    }

    private String legacyPayload(String address, String name) {
        ObjectNode p = json.createObjectNode();
        p.put("orderId", 102).put("customerEmail", address).put("customerName", name).put("currency", "EUR")
                .put("total", "42.50").put("createdAt", "2026-12-02T10:00:00Z");
        p.putArray("lines").addObject().put("sku", "A1").put("name", "Mug").put("quantity", 2).put("unitPrice", "21.25");
        return p.toString();
    }

    /** The problem the email API states for {@code field} (its message is "{field} {problem}"), or empty. */
    private static Optional<String> outboxProblem(String address, String name, String field) {
        try {
            OutgoingEmail.template("order_confirmation").to(address, name).idempotencyKey("k").build();
            return Optional.empty();
        } catch (io.mailroom.email.api.InvalidEmailException e) {
            assertThat(e.field()).as(e.getMessage()).isEqualTo(field);
            return Optional.of(e.getMessage().substring(field.length() + 1));
        }
    }

    /** The problem the order API states for {@code field} (its message is "{field} {problem}"), or empty. */
    private static Optional<String> apiProblem(PlaceOrder order, String field) {
        try {
            order.validate();
            return Optional.empty();
        } catch (InvalidOrderException e) {
            assertThat(e.field()).as(e.getMessage()).isEqualTo(field);
            assertThat(e.getMessage()).startsWith(field + " ");
            return Optional.of(e.getMessage().substring(field.length() + 1));
        }
    }

    /**
     * The problem the dispatcher states for {@code field} (its message is "{field}: {problem}", the
     * recipient's wrapped as "{field}: {part}: {problem}" when {@code part} is given), or empty.
     */
    private Optional<String> renderProblem(String payload, String field, String part) {
        Instant now = Instant.now();
        try {
            composer.compose(new ClaimedMessage(102, now, TOPIC, "order", "102", "email-order-102", null, payload,
                    1, 10, 1, now, now.plusSeconds(60)));
            return Optional.empty();
        } catch (RenderException e) {
            assertThat(e.field()).as(e.getMessage()).isEqualTo(field);
            String prefix = field + ": ";
            String message = e.getMessage();
            if (part != null && message.startsWith(prefix + part + ": ")) {
                prefix = prefix + part + ": ";
            } else if (message.startsWith(prefix + "displayName: ")) {
                prefix = prefix + "displayName: ";
            }
            assertThat(message).startsWith(prefix);
            return Optional.of(message.substring(prefix.length()));
        } catch (InvalidEmailException e) {
            throw new AssertionError("a recipient problem must be a RenderException naming the payload field", e);
        }
    }
}
