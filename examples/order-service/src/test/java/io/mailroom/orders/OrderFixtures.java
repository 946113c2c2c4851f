package io.mailroom.orders;

import java.math.BigDecimal;
import java.util.List;

/** Valid orders to start from; tests change one field to make them invalid. */
final class OrderFixtures {

    private OrderFixtures() {
    }

    /** Two lines: 2 × 4.25 + 1 × 10.00 = 18.50 EUR. */
    static PlaceOrder sample() {
        return new PlaceOrder("ada@example.com", "Ada Lovelace", "EUR", List.of(
                new PlaceOrder.Line("SKU-1", "Notebook", 2, new BigDecimal("4.25")),
                new PlaceOrder.Line("SKU-2", "Pen set", 1, new BigDecimal("10"))));
    }

    static PlaceOrder withEmail(String email) {
        PlaceOrder o = sample();
        return new PlaceOrder(email, o.customerName(), o.currency(), o.lines());
    }

    static PlaceOrder withName(String name) {
        PlaceOrder o = sample();
        return new PlaceOrder(o.customerEmail(), name, o.currency(), o.lines());
    }

    static PlaceOrder withCurrency(String currency) {
        PlaceOrder o = sample();
        return new PlaceOrder(o.customerEmail(), o.customerName(), currency, o.lines());
    }

    static PlaceOrder withLines(List<PlaceOrder.Line> lines) {
        PlaceOrder o = sample();
        return new PlaceOrder(o.customerEmail(), o.customerName(), o.currency(), lines);
    }

    static PlaceOrder withLine(PlaceOrder.Line line) {
        return withLines(List.of(line));
    }

    static PlaceOrder.Line line(String sku, String name, Integer quantity, String unitPrice) {
        return new PlaceOrder.Line(sku, name, quantity, unitPrice == null ? null : new BigDecimal(unitPrice));
    }

    /** A syntactically fine address of exactly {@code length} characters (197 to 259). */
    static String address(int length) {
        String domain = "d".repeat(63) + "." + "e".repeat(63) + "." + "f".repeat(63) + ".com"; // 195 characters
        int local = length - 1 - domain.length();
        if (local < 1 || local > 64) {
            throw new IllegalArgumentException("no such address of " + length + " characters");
        }
        return "l".repeat(local) + "@" + domain;
    }

    /** {@link #sample()} as a request body. */
    static final String SAMPLE_JSON = """
            {
              "customerEmail": "ada@example.com",
              "customerName": "Ada Lovelace",
              "currency": "EUR",
              "lines": [
                {"sku": "SKU-1", "name": "Notebook", "quantity": 2, "unitPrice": 4.25},
                {"sku": "SKU-2", "name": "Pen set", "quantity": 1, "unitPrice": 10}
              ]
            }
            """;
}
