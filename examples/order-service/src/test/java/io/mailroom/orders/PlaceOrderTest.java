package io.mailroom.orders;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;
import org.junit.jupiter.params.provider.ValueSource;

import java.math.BigDecimal;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.List;
import java.util.stream.Stream;

import static io.mailroom.orders.OrderFixtures.line;
import static io.mailroom.orders.OrderFixtures.sample;
import static io.mailroom.orders.OrderFixtures.withCurrency;
import static io.mailroom.orders.OrderFixtures.withEmail;
import static io.mailroom.orders.OrderFixtures.withLine;
import static io.mailroom.orders.OrderFixtures.withLines;
import static io.mailroom.orders.OrderFixtures.withName;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatCode;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** Validation of {@link PlaceOrder} and its computed total; no database. */
class PlaceOrderTest {

    @Test
    void sampleIsValidAndItsTotalIsComputedFromTheLines() {
        PlaceOrder order = sample();
        assertThatCode(order::validate).doesNotThrowAnyException();
        assertThat(order.total()).isEqualByComparingTo("18.50");
        assertThat(order.total().scale()).isEqualTo(2);
        assertThat(order.lines().get(0).lineTotal()).isEqualTo(new BigDecimal("8.50"));
    }

    @Test
    void freeLinesGiveAZeroTotalNeverANegativeOne() {
        PlaceOrder order = withLines(List.of(line("GIFT", "Gift wrap", 3, "0"), line("FREE", "Sticker", 1, "0.00")));
        order.validate();
        assertThat(order.total()).isEqualTo(new BigDecimal("0.00"));
    }

    @Test
    void limitsAreInclusive() {
        List<PlaceOrder.Line> many = new ArrayList<>();
        for (int i = 0; i < PlaceOrder.MAX_LINES; i++) {
            many.add(line("S".repeat(PlaceOrder.MAX_SKU_LENGTH), "N".repeat(PlaceOrder.MAX_LINE_NAME_LENGTH),
                    PlaceOrder.MAX_QUANTITY, "0.01"));
        }
        PlaceOrder order = new PlaceOrder("a@b.co", "x".repeat(PlaceOrder.MAX_NAME_LENGTH), "USD", many);
        assertThatCode(order::validate).doesNotThrowAnyException();
        assertThat(order.total()).isEqualByComparingTo("10000.00");
        assertThatCode(withLine(line("S", "N", 1, "1000000.00"))::validate).doesNotThrowAnyException();
    }

    @Test
    void namesCountCharactersNotUtf16Units() {
        // 200 emoji are 400 UTF-16 units but 200 characters, as PostgreSQL's length() counts them
        String emoji = "\uD83D\uDCE6".repeat(PlaceOrder.MAX_NAME_LENGTH);
        assertThatCode(withName(emoji)::validate).doesNotThrowAnyException();
        assertThatThrownBy(withName(emoji + "x")::validate).isInstanceOf(InvalidOrderException.class);
    }

    static Stream<Arguments> invalidOrders() {
        return Stream.of(
                Arguments.of("missing email", withEmail(null), "customerEmail"),
                Arguments.of("empty email", withEmail(""), "customerEmail"),
                Arguments.of("email without @", withEmail("ada.example.com"), "customerEmail"),
                Arguments.of("email with CR/LF", withEmail("ada@example.com\r\nBcc: all@example.com"), "customerEmail"),
                Arguments.of("email too long", withEmail("a".repeat(64) + "@" + ("d".repeat(60) + ".").repeat(5) + "com"), "customerEmail"),
                Arguments.of("missing name", withName(null), "customerName"),
                Arguments.of("blank name", withName("  \t "), "customerName"),
                Arguments.of("name too long", withName("x".repeat(PlaceOrder.MAX_NAME_LENGTH + 1)), "customerName"),
                Arguments.of("name with LF", withName("Ada\nSubject: spam"), "customerName"),
                Arguments.of("name with NUL", withName("Ada\u0000"), "customerName"),
                Arguments.of("name with lone surrogate", withName("Ada \uD800"), "customerName"),
                Arguments.of("missing currency", withCurrency(null), "currency"),
                Arguments.of("lower-case currency", withCurrency("eur"), "currency"),
                Arguments.of("currency too long", withCurrency("EURO"), "currency"),
                Arguments.of("currency with newline", withCurrency("EUR\n"), "currency"),
                Arguments.of("missing lines", withLines(null), "lines"),
                Arguments.of("empty lines", withLines(List.of()), "lines"),
                Arguments.of("too many lines", withLines(Collections.nCopies(PlaceOrder.MAX_LINES + 1,
                        line("S", "N", 1, "1.00"))), "lines"),
                Arguments.of("null line", withLines(Arrays.asList(line("S", "N", 1, "1.00"), null)), "lines[1]"),
                Arguments.of("missing sku", withLine(line(null, "N", 1, "1.00")), "lines[0].sku"),
                Arguments.of("blank sku", withLine(line(" ", "N", 1, "1.00")), "lines[0].sku"),
                Arguments.of("sku too long", withLine(line("S".repeat(PlaceOrder.MAX_SKU_LENGTH + 1), "N", 1, "1.00")), "lines[0].sku"),
                Arguments.of("missing line name", withLine(line("S", null, 1, "1.00")), "lines[0].name"),
                Arguments.of("line name too long", withLine(line("S", "N".repeat(PlaceOrder.MAX_LINE_NAME_LENGTH + 1), 1, "1.00")), "lines[0].name"),
                Arguments.of("missing quantity", withLine(line("S", "N", null, "1.00")), "lines[0].quantity"),
                Arguments.of("zero quantity", withLine(line("S", "N", 0, "1.00")), "lines[0].quantity"),
                Arguments.of("negative quantity", withLine(line("S", "N", -2, "1.00")), "lines[0].quantity"),
                Arguments.of("quantity too large", withLine(line("S", "N", PlaceOrder.MAX_QUANTITY + 1, "1.00")), "lines[0].quantity"),
                Arguments.of("missing unit price", withLine(line("S", "N", 1, null)), "lines[0].unitPrice"),
                Arguments.of("negative unit price", withLine(line("S", "N", 1, "-0.01")), "lines[0].unitPrice"),
                Arguments.of("three decimals", withLine(line("S", "N", 1, "1.005")), "lines[0].unitPrice"),
                Arguments.of("unit price too large", withLine(line("S", "N", 1, "1000000.01")), "lines[0].unitPrice"),
                Arguments.of("absurd exponent", withLine(line("S", "N", 1, "1E+999999999")), "lines[0].unitPrice"),
                Arguments.of("second line wrong", withLines(List.of(line("S", "N", 1, "1.00"), line("S", "N", 1, "-5"))),
                        "lines[1].unitPrice"));
    }

    @ParameterizedTest(name = "[{index}] {0}")
    @MethodSource("invalidOrders")
    void invalidOrderNamesTheField(String description, PlaceOrder order, String field) {
        assertThatThrownBy(order::validate)
                .isInstanceOfSatisfying(InvalidOrderException.class, e -> {
                    assertThat(e.field()).isEqualTo(field);
                    assertThat(e.getMessage()).startsWith(field + " ");
                });
    }

    @Test
    void totalAboveTheColumnsRangeIsRefusedOnTheLines() {
        // 100 × 10 000 × 1 000 000.00 = 10^12 > numeric(14, 2)
        PlaceOrder order = withLines(Collections.nCopies(PlaceOrder.MAX_LINES,
                line("S", "N", PlaceOrder.MAX_QUANTITY, "1000000.00")));
        assertThatThrownBy(order::validate)
                .isInstanceOfSatisfying(InvalidOrderException.class, e -> assertThat(e.field()).isEqualTo("lines"));
    }

    @ParameterizedTest
    @ValueSource(strings = {
            "ada@example.com", "Ada.Lovelace+orders@mail.example.co.uk", "o'brien@example.ie", "x@xn--p1ai.xn--p1ai",
            "first_last-1@sub-domain.example.org", "a@b.co"})
    void plausibleAddressesAreAccepted(String email) {
        assertThatCode(withEmail(email)::validate).doesNotThrowAnyException();
    }

    @ParameterizedTest
    @ValueSource(strings = {
            "ada", "@example.com", "ada@", "ada@@example.com", "a@b@example.com", "ada@example", "ada@localhost",
            ".ada@example.com", "ada.@example.com", "a..da@example.com", "ada@-example.com", "ada@example-.com",
            "ada@exa_mple.com", "ada@example..com", "ada@.example.com", "ada@example.com.", "ada@127.0.0.1",
            "ada@[127.0.0.1]", "\"ada\"@example.com", "ada lovelace@example.com", "ada@example.com ", " ada@example.com",
            "ada\t@example.com", "ad\u00e4@example.com", "ada@ex\u00e4mple.com", "ada@example.com\n", "ada\r@example.com",
            "ada(comment)@example.com"})
    void implausibleAddressesAreRefused(String email) {
        assertThatThrownBy(withEmail(email)::validate)
                .isInstanceOfSatisfying(InvalidOrderException.class, e -> assertThat(e.field()).isEqualTo("customerEmail"));
    }

    @Test
    void addressLengthLimitIs254AsInTheSmtpPath() {
        // RFC 5321 path limit: 256 octets including the angle brackets, so 254 for the address itself
        String max = OrderFixtures.address(254);
        assertThatCode(withEmail(max)::validate).doesNotThrowAnyException();
        assertThatThrownBy(withEmail(OrderFixtures.address(255))::validate)
                .isInstanceOfSatisfying(InvalidOrderException.class, e -> {
                    assertThat(e.field()).isEqualTo("customerEmail");
                    assertThat(e).hasMessageContaining("254");
                });
        // the 320 the order service used to allow (64 + 1 + 255) is far over it
        String old = "l".repeat(64) + "@" + ("d".repeat(63) + ".").repeat(3) + "c".repeat(61);
        assertThatThrownBy(withEmail(old)::validate).isInstanceOf(InvalidOrderException.class);
    }

    @ParameterizedTest
    @ValueSource(strings = {"Ann \u202Emoc.live", "Ann\u202A", "Ann\u2066x", "Ann\u2069", "Ann\u200Fx", "Ann\u061C",
            "Ann\u2028Lee", "Ann\u2029", "Ann\u0085", "Ann\u001b[31m", "Ann\u007f"})
    void namesTheRendererRefusesAreRefusedHere(String name) {
        assertThatThrownBy(withName(name)::validate)
                .isInstanceOfSatisfying(InvalidOrderException.class, e -> assertThat(e.field()).isEqualTo("customerName"));
        assertThatThrownBy(withLine(line("S", name, 1, "1.00"))::validate)
                .isInstanceOfSatisfying(InvalidOrderException.class, e -> assertThat(e.field()).isEqualTo("lines[0].name"));
    }

    @Test
    void unicodeNamesWithJoinersAndAccentsAreFine() {
        assertThatCode(withName("Zoë Ñúñez 李雷 👩\u200D💻")::validate).doesNotThrowAnyException();
        assertThatCode(withName("\u05D3\u05E0\u05D4 \u05DB\u05D4\u05DF")::validate).doesNotThrowAnyException(); // Hebrew, no controls
    }
}
