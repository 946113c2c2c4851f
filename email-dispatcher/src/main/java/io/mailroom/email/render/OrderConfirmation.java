package io.mailroom.email.render;

import io.mailroom.email.EmailAddress;

import java.math.BigDecimal;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Currency;
import java.util.List;

/**
 * The order confirmation payload after parsing and validation: what the template needs, nothing
 * more. Amounts are already scaled to the currency's minor unit.
 */
public record OrderConfirmation(String orderId, EmailAddress customer, String customerName, Currency currency,
                                BigDecimal total, Instant createdAt, List<Line> lines) {

    /** Names the kind of request in its fingerprint, so a key reused for another kind of email mismatches. */
    static final String FINGERPRINT_KIND = "order_confirmation";

    public OrderConfirmation {
        lines = List.copyOf(lines);
    }

    /**
     * What the idempotency store fingerprints for this email: the request, not its rendering. It
     * covers the kind of email, the recipient and every payload field the template uses (order id,
     * customer name, currency, total, order time, each line's sku, name, quantity and unit price),
     * in canonical form. It does not cover the template version, the wording, the shop name, the
     * From address or the time zone, because those change when we deploy, not when the caller asks
     * for something else.
     *
     * <p>Why: the fingerprint exists to catch one key used for two different requests (a reused
     * or colliding key), which must never be taken for a repeat. Attempts of one key come from the
     * same payload; if a new template version were in the fingerprint, every key already sent, or
     * with an unknown outcome, at the moment of a template deploy would be failed as "a different
     * email, nothing sent", which is false for a sent one and hides the ambiguity of an unknown
     * one. So: a sent key stays sent, an unknown outcome goes to the ambiguity policy, and a key
     * known to have sent nothing is sent with the current template.
     */
    public List<String> fingerprintParts() {
        List<String> parts = new ArrayList<>(7 + 4 * lines.size());
        parts.add(FINGERPRINT_KIND);
        parts.add(orderId);
        parts.add(customer.address());
        parts.add(customerName);
        parts.add(currency.getCurrencyCode());
        parts.add(total.toPlainString());
        parts.add(createdAt.toString());
        parts.add(Integer.toString(lines.size()));
        for (Line line : lines) {
            parts.add(line.sku());
            parts.add(line.name());
            parts.add(Integer.toString(line.quantity()));
            parts.add(line.unitPrice().toPlainString());
        }
        return parts;
    }

    /** One ordered item. */
    public record Line(String sku, String name, int quantity, BigDecimal unitPrice) {

        public BigDecimal amount() {
            return unitPrice.multiply(BigDecimal.valueOf(quantity));
        }
    }
}
