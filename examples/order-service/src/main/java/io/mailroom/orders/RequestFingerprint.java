package io.mailroom.orders;

import com.fasterxml.jackson.core.JsonProcessingException;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;

/**
 * SHA-256 (hex) of a validated {@link PlaceOrder} in normalized form, stored with its
 * {@code Idempotency-Key}. Normalized means what the order <em>is</em>, not how the JSON was
 * written: field order, whitespace and number spelling ({@code 10}, {@code 10.0}, {@code 1E+1})
 * do not change it; any value that would change the stored order does. Text is compared exactly
 * as stored (the order keeps the address and name as given).
 */
final class RequestFingerprint {

    /** Part of the hashed text, so that a future change of the normal form cannot match an old hash. */
    private static final String VERSION = "place-order/v1";

    private RequestFingerprint() {
    }

    static String of(PlaceOrder order) {
        List<Object> normal = new ArrayList<>();
        normal.add(VERSION);
        normal.add(order.customerEmail());
        normal.add(order.customerName());
        normal.add(order.currency());
        for (PlaceOrder.Line line : order.lines()) {
            normal.add(List.of(line.sku(), line.name(), line.quantity(),
                    line.unitPrice().setScale(PlaceOrder.MONEY_SCALE).toPlainString()));
        }
        // Only a language other than the default adds to the text, so keys stored before orders had
        // a locale still match their repeats (no locale and "en" are the same order).
        if (!order.localeTag().equals(PlaceOrder.DEFAULT_LOCALE)) {
            normal.add(List.of("locale", order.localeTag()));
        }
        try {
            // a JSON array: every string is quoted and escaped, so no two orders share a text
            byte[] text = OrderJson.mapper().writeValueAsBytes(normal);
            return HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256").digest(text));
        } catch (JsonProcessingException | NoSuchAlgorithmException e) {
            // strings and numbers always serialise, and every JDK has SHA-256
            throw new IllegalStateException("Could not fingerprint an order request", e);
        }
    }
}
