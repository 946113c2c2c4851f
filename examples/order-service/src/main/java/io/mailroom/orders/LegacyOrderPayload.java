package io.mailroom.orders;

import com.fasterxml.jackson.databind.JsonNode;
import io.mailroom.email.EmailAddress;
import io.mailroom.email.InvalidEmailException;
import io.mailroom.email.Text;
import io.mailroom.email.render.PayloadReader;
import io.mailroom.email.render.RenderException;
import io.mailroom.mailbox.MailboxRules;

import java.math.BigDecimal;
import java.time.Instant;
import java.time.OffsetDateTime;
import java.time.format.DateTimeFormatter;
import java.time.format.DateTimeParseException;
import java.util.ArrayList;
import java.util.Currency;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.regex.Pattern;

/**
 * Upgrade safety: reads the payload this shop wrote before the email API, an order document
 * without {@code "v"} on topic {@value #TOPIC} ({@code {"orderId","customerEmail","customerName",
 * "currency","total","createdAt","lines":[{"sku","name","quantity","unitPrice",...}]}}), so that a
 * confirmation still pending at the upgrade is sent, from the {@code order_confirmation} template,
 * in English (those orders had no locale). It checks what the retired Java renderer checked and
 * names the same fields, so a payload that cannot make a safe email still fails for good at once.
 *
 * <p>Its fingerprint is the one the retired renderer reserved under (same parts, same order), so a
 * key reserved before the upgrade is recognised: already sent stays sent, unknown stays unknown.
 * A dispatcher finds it with {@link java.util.ServiceLoader} when the shop's jar is on its class path
 * (the demo; docker-compose.yml's dispatcher): Mailroom itself knows no order. Remove this class once
 * no dispatcher can find such a message (retention has removed them all).
 */
public final class LegacyOrderPayload implements PayloadReader {

    static final String TOPIC = "email.order_confirmation";
    /** The retired renderer's fingerprint kind, kept so reservations made before the upgrade match. */
    static final String FINGERPRINT_KIND = "order_confirmation";

    static final int MAX_TEXT_FIELD = 200;
    static final int MAX_LINES = 500;
    static final int MAX_QUANTITY = 1_000_000;
    private static final Pattern ORDER_ID = Pattern.compile("[A-Za-z0-9_-]{1,64}");

    /** For the ServiceLoader. */
    public LegacyOrderPayload() {
    }

    /** Whether {@code root}, on {@code topic}, is a pre-envelope order document. */
    @Override
    public boolean reads(String topic, JsonNode root) {
        return TOPIC.equals(topic) && root != null && root.isObject() && !root.has("v");
    }

    /** The confirmation in English (those orders had no locale), under the retired renderer's fingerprint. */
    @Override
    public Request read(JsonNode root) throws RenderException {
        String orderId = orderId(root);
        String customerName = customerName(root);
        EmailAddress customer = recipient(root, customerName);
        Currency currency = currency(root);
        BigDecimal total = money(root, "total", "total", currency);
        Instant createdAt = instant(root, "createdAt");

        JsonNode v = root.get("lines");
        if (v == null || v.isNull()) {
            throw new RenderException("lines", "is missing");
        }
        if (!v.isArray()) {
            throw new RenderException("lines", "must be an array");
        }
        if (v.isEmpty()) {
            throw new RenderException("lines", "must contain at least one line");
        }
        if (v.size() > MAX_LINES) {
            throw new RenderException("lines", "more than " + MAX_LINES + " lines");
        }
        List<String> parts = new ArrayList<>(List.of(FINGERPRINT_KIND, orderId, customer.address(), customerName,
                currency.getCurrencyCode(), total.toPlainString(), createdAt.toString(), Integer.toString(v.size())));
        List<Map<String, Object>> lines = new ArrayList<>(v.size());
        for (int i = 0; i < v.size(); i++) {
            String prefix = "lines[" + i + "].";
            JsonNode line = v.get(i);
            if (!line.isObject()) {
                throw new RenderException("lines[" + i + "]", "must be an object");
            }
            String sku = text(line, "sku", prefix + "sku");
            String name = text(line, "name", prefix + "name");
            JsonNode q = line.get("quantity");
            if (q == null || q.isNull()) {
                throw new RenderException(prefix + "quantity", "is missing");
            }
            if (!q.isIntegralNumber() || !q.canConvertToInt() || q.intValue() < 1 || q.intValue() > MAX_QUANTITY) {
                throw new RenderException(prefix + "quantity", "must be an integer 1.." + MAX_QUANTITY);
            }
            int quantity = q.intValue();
            BigDecimal unitPrice = money(line, "unitPrice", prefix + "unitPrice", currency);
            Map<String, Object> l = new LinkedHashMap<>();
            l.put("sku", sku);
            l.put("name", name);
            l.put("quantity", quantity);
            l.put("unitPrice", unitPrice);
            l.put("amount", unitPrice.multiply(BigDecimal.valueOf(quantity)));
            lines.add(l);
            parts.addAll(List.of(sku, name, Integer.toString(quantity), unitPrice.toPlainString()));
        }
        Map<String, Object> order = new LinkedHashMap<>();
        order.put("id", orderId);
        order.put("currency", currency.getCurrencyCode());
        order.put("total", total);
        order.put("createdAt", createdAt.toString());
        order.put("lines", lines);
        Map<String, Object> data = new LinkedHashMap<>();
        data.put("customer", Map.of("name", customerName));
        data.put("order", order);
        return new Request(Locale.ENGLISH, customer, data, parts);
    }

    private static String orderId(JsonNode root) throws RenderException {
        JsonNode v = root.get("orderId");
        if (v == null || v.isNull()) {
            throw new RenderException("orderId", "is missing");
        }
        String id;
        if (v.isIntegralNumber() && v.canConvertToLong() && v.longValue() > 0) {
            id = Long.toString(v.longValue());
        } else if (v.isTextual()) {
            id = v.textValue();
        } else {
            throw new RenderException("orderId", "must be a positive integer or an identifier string");
        }
        if (!ORDER_ID.matcher(id).matches()) {
            throw new RenderException("orderId", "must be 1..64 letters, digits, '-' or '_'");
        }
        return id;
    }

    private static EmailAddress recipient(JsonNode root, String customerName) throws RenderException {
        JsonNode v = root.get("customerEmail");
        if (v == null || v.isNull()) {
            throw new RenderException("customerEmail", "is missing");
        }
        if (!v.isTextual()) {
            throw new RenderException("customerEmail", "must be a string");
        }
        try {
            return EmailAddress.of(v.textValue(), customerName);
        } catch (InvalidEmailException e) {
            String field = e.field().equals("displayName") ? "customerName" : "customerEmail";
            throw new RenderException(field, e.getMessage());
        }
    }

    private static String customerName(JsonNode root) throws RenderException {
        JsonNode v = root.get("customerName");
        if (v == null || v.isNull()) {
            throw new RenderException("customerName", "is missing");
        }
        if (!v.isTextual()) {
            throw new RenderException("customerName", "must be a string");
        }
        String name = v.textValue();
        Optional<String> problem = MailboxRules.displayNameProblem(name);
        if (problem.isPresent()) {
            throw new RenderException("customerName", problem.get());
        }
        return name.strip();
    }

    private static String text(JsonNode node, String name, String field) throws RenderException {
        JsonNode v = node.get(name);
        if (v == null || v.isNull()) {
            throw new RenderException(field, "is missing");
        }
        if (!v.isTextual()) {
            throw new RenderException(field, "must be a string");
        }
        String s = v.textValue();
        if (s.isBlank()) {
            throw new RenderException(field, "is empty");
        }
        int bad = Text.firstForbiddenInHeader(s);
        if (bad >= 0) {
            throw new RenderException(field, "contains " + Text.describe(s, bad));
        }
        if (s.codePointCount(0, s.length()) > MAX_TEXT_FIELD) {
            throw new RenderException(field, "longer than " + MAX_TEXT_FIELD + " characters");
        }
        return s.strip();
    }

    private static Currency currency(JsonNode root) throws RenderException {
        String code = text(root, "currency", "currency");
        if (!code.matches("[A-Z]{3}")) {
            throw new RenderException("currency", "must be an ISO 4217 code like EUR");
        }
        Currency currency;
        try {
            currency = Currency.getInstance(code);
        } catch (IllegalArgumentException e) {
            throw new RenderException("currency", "is not an ISO 4217 currency: " + code);
        }
        if (currency.getDefaultFractionDigits() < 0) {
            throw new RenderException("currency", "has no minor unit and cannot price an order: " + code);
        }
        return currency;
    }

    private static BigDecimal money(JsonNode node, String name, String field, Currency currency) throws RenderException {
        JsonNode v = node.get(name);
        if (v == null || v.isNull()) {
            throw new RenderException(field, "is missing");
        }
        BigDecimal amount;
        if (v.isTextual()) {
            try {
                amount = new BigDecimal(v.textValue().strip());
            } catch (NumberFormatException e) {
                throw new RenderException(field, "is not a decimal amount");
            }
        } else if (v.isNumber()) {
            amount = v.decimalValue();
        } else {
            throw new RenderException(field, "must be a decimal amount like \"42.50\"");
        }
        if (amount.signum() < 0) {
            throw new RenderException(field, "must not be negative");
        }
        int digits = currency.getDefaultFractionDigits();
        if (amount.stripTrailingZeros().scale() > digits) {
            throw new RenderException(field, "has more than " + digits + " decimals for " + currency.getCurrencyCode());
        }
        if (amount.precision() - amount.scale() > 15) {
            throw new RenderException(field, "is implausibly large");
        }
        return amount.setScale(digits);
    }

    private static Instant instant(JsonNode root, String field) throws RenderException {
        String s = text(root, field, field);
        try {
            return OffsetDateTime.parse(s, DateTimeFormatter.ISO_OFFSET_DATE_TIME).toInstant();
        } catch (DateTimeParseException e) {
            throw new RenderException(field, "must be an ISO-8601 timestamp with offset, like 2026-12-02T10:00:00Z");
        }
    }
}
