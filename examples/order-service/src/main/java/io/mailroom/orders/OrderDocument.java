package io.mailroom.orders;

import java.math.BigDecimal;
import java.math.RoundingMode;
import java.time.Instant;
import java.util.List;

/**
 * An order as JSON sees it: the body of {@code GET /orders/{id}}. Amounts are decimal strings with
 * two decimals ({@code "12.50"}) so no JSON reader turns them into binary floating point; times are
 * ISO-8601 instants in UTC. (Before the email API, this document was also the confirmation's outbox
 * payload; the dispatcher still reads such messages, see its {@code LegacyOrderPayload}.)
 *
 * @param orderId       the order's id
 * @param customerEmail the recipient
 * @param customerName  the name to greet
 * @param currency      three capital letters, e.g. {@code EUR}
 * @param total         sum of the line totals, e.g. {@code "12.50"}
 * @param createdAt     when the order was written (database time), e.g. {@code 2025-01-31T09:15:00.123456Z}
 * @param lines         the lines in order, numbered from 1
 * @param locale        the customer's language, e.g. {@code vi}
 * @param status        {@value #PLACED}, {@value #SHIPPED} or {@value #CANCELLED}
 */
public record OrderDocument(long orderId, String customerEmail, String customerName, String currency, String total,
                            String createdAt, List<Line> lines, String locale, String status) {

    public static final String PLACED = "placed";
    public static final String SHIPPED = "shipped";
    public static final String CANCELLED = "cancelled";

    public OrderDocument {
        lines = List.copyOf(lines);
    }

    /**
     * @param lineNo    1-based position
     * @param sku       article code
     * @param name      article name
     * @param quantity  how many
     * @param unitPrice price of one, e.g. {@code "4.25"}
     * @param lineTotal quantity × unitPrice, e.g. {@code "8.50"}
     */
    public record Line(int lineNo, String sku, String name, int quantity, String unitPrice, String lineTotal) {
    }

    /** Money as the document writes it: plain notation, exactly two decimals. */
    static String money(BigDecimal amount) {
        return amount.setScale(PlaceOrder.MONEY_SCALE, RoundingMode.UNNECESSARY).toPlainString();
    }

    static String instant(Instant at) {
        return at.toString();
    }
}
