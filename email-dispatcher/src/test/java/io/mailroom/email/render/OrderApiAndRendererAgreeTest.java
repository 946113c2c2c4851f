package io.mailroom.email.render;

import com.fasterxml.jackson.databind.json.JsonMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.mailroom.email.EmailAddress;
import io.mailroom.email.InvalidEmailException;
import io.mailroom.mailbox.MailboxRules;
import io.mailroom.orders.InvalidOrderException;
import io.mailroom.orders.PlaceOrder;
import jakarta.mail.internet.InternetAddress;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

import java.math.BigDecimal;
import java.util.List;
import java.util.Optional;
import java.util.stream.Stream;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatCode;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * The order API and the renderer apply one rule to the customer's address and name: whatever the
 * renderer refuses (a permanent failure, with nothing left for support to decide), the order API
 * refuses first with 400 naming the same field, and the other way round. Both quote the problem
 * {@link MailboxRules} states, which shows the verdict comes from the same code, not from two
 * copies that happen to agree today.
 */
class OrderApiAndRendererAgreeTest {

    private final OrderConfirmationRenderer renderer =
            new OrderConfirmationRenderer(RenderConfig.of(EmailAddress.of("shop@example.com", "Example Shop")));
    private final JsonMapper json = JsonMapper.builder().build();

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
                "Ann\u001b[31m", "Ann\u007f", "Ann\u0085", "Ann\uD800", "Ann\uDC00x");
    }

    @ParameterizedTest
    @MethodSource("addresses")
    void theOrderApiAndTheRendererGiveTheSameVerdictOnAnAddress(String address) {
        Optional<String> rule = MailboxRules.addressProblem(address);
        Optional<String> api = apiProblem(order(address, "Ann"), "customerEmail");
        Optional<String> render = renderProblem(payload(address, "Ann"), "customerEmail");

        assertThat(api).as("order API on %s", address).isEqualTo(rule);
        assertThat(render).as("renderer on %s", address).isEqualTo(rule);
    }

    @ParameterizedTest
    @MethodSource("names")
    void theOrderApiAndTheRendererGiveTheSameVerdictOnAName(String name) {
        Optional<String> rule = MailboxRules.displayNameProblem(name);
        Optional<String> api = apiProblem(order("ann@example.com", name), "customerName");
        Optional<String> render = renderProblem(payload("ann@example.com", name), "customerName");

        assertThat(api).as("order API on %s", name).isEqualTo(rule);
        assertThat(render).as("renderer on %s", name).isEqualTo(rule);
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

    private String payload(String address, String name) {
        ObjectNode p = json.createObjectNode();
        p.put("orderId", 102).put("customerEmail", address).put("customerName", name).put("currency", "EUR")
                .put("total", "42.50").put("createdAt", "2026-12-02T10:00:00Z");
        p.putArray("lines").addObject().put("sku", "A1").put("name", "Mug").put("quantity", 2).put("unitPrice", "21.25");
        return p.toString();
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

    /** The problem the renderer states for {@code field} (its message is "{field}: {problem}"), or empty. */
    private Optional<String> renderProblem(String payload, String field) {
        try {
            renderer.render(payload);
            return Optional.empty();
        } catch (RenderException e) {
            assertThat(e.field()).as(e.getMessage()).isEqualTo(field);
            // the recipient's problems arrive wrapped: "customerEmail: address: {problem}"
            String prefix = field.equals("customerEmail") ? field + ": address: " : field + ": ";
            String message = e.getMessage();
            if (field.equals("customerName") && message.startsWith(field + ": displayName: ")) {
                prefix = field + ": displayName: ";
            }
            assertThat(message).startsWith(prefix);
            return Optional.of(message.substring(prefix.length()));
        }
    }
}
