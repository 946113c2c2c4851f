package io.mailroom.email.render;

import io.mailroom.email.EmailAddress;

import java.math.BigDecimal;
import java.time.Instant;
import java.util.Currency;
import java.util.List;

/**
 * The order confirmation payload after parsing and validation: what the template needs, nothing
 * more. Amounts are already scaled to the currency's minor unit.
 */
public record OrderConfirmation(String orderId, EmailAddress customer, String customerName, Currency currency,
                                BigDecimal total, Instant createdAt, List<Line> lines) {

    public OrderConfirmation {
        lines = List.copyOf(lines);
    }

    /** One ordered item. */
    public record Line(String sku, String name, int quantity, BigDecimal unitPrice) {

        public BigDecimal amount() {
            return unitPrice.multiply(BigDecimal.valueOf(quantity));
        }
    }
}
