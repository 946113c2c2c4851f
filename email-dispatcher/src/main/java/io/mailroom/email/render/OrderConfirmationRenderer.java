package io.mailroom.email.render;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.core.StreamReadFeature;
import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.json.JsonMapper;
import io.mailroom.email.Email;
import io.mailroom.email.EmailAddress;
import io.mailroom.email.InvalidEmailException;
import io.mailroom.email.Text;
import io.mailroom.mailbox.MailboxRules;

import java.math.BigDecimal;
import java.nio.ByteBuffer;
import java.nio.CharBuffer;
import java.nio.charset.CharsetDecoder;
import java.nio.charset.CoderResult;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;
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
import java.util.Objects;
import java.util.Optional;
import java.util.regex.Pattern;

/**
 * Turns the payload of an {@code email.order_confirmation} outbox message into an {@link Email}.
 *
 * <p>The template is plain Java: every value taken from the payload is HTML-escaped in the HTML
 * body, and must be free of control characters (so the customer name cannot inject a header
 * through the To display name). Anything wrong with the payload is a {@link RenderException}
 * naming the field; the renderer never guesses a missing value.
 *
 * <p>Changing the wording or layout of either body means bumping {@link #TEMPLATE_VERSION}: it is
 * shown in the {@code X-Mailroom-Template} header and the support views. It is deliberately
 * <em>not</em> part of the idempotency fingerprint (see {@link OrderConfirmation#fingerprintParts()}),
 * so a template deploy never turns an email already sent, or one whose outcome is unknown, into a
 * "different email".
 */
public final class OrderConfirmationRenderer {

    public static final String TOPIC = "email.order_confirmation";
    public static final String TEMPLATE_VERSION = "order_confirmation/v1";

    static final int MAX_TEXT_FIELD = 200;
    static final int MAX_LINES = 500;
    static final int MAX_QUANTITY = 1_000_000;

    private static final Pattern ORDER_ID = Pattern.compile("[A-Za-z0-9_-]{1,64}");
    private static final DateTimeFormatter DATE = DateTimeFormatter.ofPattern("d MMMM yyyy 'at' HH:mm z", Locale.ENGLISH);

    private final RenderConfig config;
    private final String templateVersion;
    private final JsonMapper json = JsonMapper.builder()
            .enable(StreamReadFeature.STRICT_DUPLICATE_DETECTION)
            .enable(DeserializationFeature.FAIL_ON_TRAILING_TOKENS)
            .enable(DeserializationFeature.USE_BIG_DECIMAL_FOR_FLOATS)
            .build();

    public OrderConfirmationRenderer(RenderConfig config) {
        this(config, TEMPLATE_VERSION);
    }

    /** A renderer that labels its emails with another template version (a staged template, a test). */
    public OrderConfirmationRenderer(RenderConfig config, String templateVersion) {
        this.config = Objects.requireNonNull(config, "config");
        this.templateVersion = Objects.requireNonNull(templateVersion, "templateVersion");
    }

    /** Renders from raw payload bytes, which must be valid UTF-8. */
    public Email render(byte[] payloadUtf8) throws RenderException {
        return render(decodeUtf8(payloadUtf8));
    }

    public Email render(String payloadJson) throws RenderException {
        return render(parse(payloadJson));
    }

    /** Parses and validates the payload without rendering. */
    public OrderConfirmation parse(String payloadJson) throws RenderException {
        if (payloadJson == null || payloadJson.isBlank()) {
            throw new RenderException("payload", "is empty");
        }
        JsonNode root;
        try {
            root = json.readTree(payloadJson);
        } catch (JsonProcessingException e) {
            // The original message only: Jackson's location suffix could quote the payload.
            throw new RenderException("payload", "is not valid JSON (" + Text.bounded(e.getOriginalMessage(), 200)
                    + " at line " + e.getLocation().getLineNr() + ", column " + e.getLocation().getColumnNr() + ")");
        }
        if (root == null || !root.isObject()) {
            throw new RenderException("payload", "must be a JSON object");
        }
        String orderId = orderId(root);
        String customerName = customerName(root);
        EmailAddress customer = recipient(root, customerName);
        Currency currency = currency(root);
        BigDecimal total = money(root, "total", "total", currency);
        Instant createdAt = instant(root, "createdAt");
        List<OrderConfirmation.Line> lines = lines(root, currency);
        return new OrderConfirmation(orderId, customer, customerName, currency, total, createdAt, lines);
    }

    public Email render(OrderConfirmation order) throws RenderException {
        String subject = "Your order #" + order.orderId() + " is confirmed";
        String placed = DATE.format(order.createdAt().atZone(config.zone()));
        try {
            Map<String, String> headers = new LinkedHashMap<>();
            // RFC 3834: tells auto-responders (vacation replies) not to answer.
            headers.put("Auto-Submitted", "auto-generated");
            headers.put("X-Mailroom-Template", templateVersion);
            Email email = new Email(config.from(), order.customer(), subject, textBody(order, placed), htmlBody(order, subject, placed),
                    headers, templateVersion);
            return email.requireBodyWithin(config.maxBodyBytes());
        } catch (InvalidEmailException e) {
            throw new RenderException(e.field(), e.getMessage());
        }
    }

    private String textBody(OrderConfirmation order, String placed) {
        StringBuilder b = new StringBuilder(512);
        b.append("Hello ").append(order.customerName()).append(",\n\n");
        b.append("thank you for your order #").append(order.orderId()).append(", placed on ").append(placed).append(".\n\n");
        for (OrderConfirmation.Line line : order.lines()) {
            b.append(line.quantity()).append(" x ").append(line.name()).append(" (SKU ").append(line.sku()).append("), ")
                    .append(money(line.unitPrice(), order.currency())).append(" each: ")
                    .append(money(line.amount(), order.currency())).append('\n');
        }
        b.append("\nTotal: ").append(money(order.total(), order.currency())).append("\n\n");
        b.append("We will let you know when your order ships.\n\n");
        b.append(config.shopName()).append('\n');
        return b.toString();
    }

    private String htmlBody(OrderConfirmation order, String subject, String placed) {
        StringBuilder b = new StringBuilder(2048);
        b.append("<!DOCTYPE html>\n<html lang=\"en\">\n<head><meta charset=\"utf-8\"><title>").append(Html.escape(subject))
                .append("</title></head>\n<body>\n");
        b.append("<p>Hello ").append(Html.escape(order.customerName())).append(",</p>\n");
        b.append("<p>thank you for your order #").append(Html.escape(order.orderId())).append(", placed on ")
                .append(Html.escape(placed)).append(".</p>\n");
        b.append("<table>\n<thead><tr><th>Item</th><th>SKU</th><th>Quantity</th><th>Unit price</th><th>Amount</th></tr></thead>\n<tbody>\n");
        for (OrderConfirmation.Line line : order.lines()) {
            b.append("<tr><td>").append(Html.escape(line.name()))
                    .append("</td><td>").append(Html.escape(line.sku()))
                    .append("</td><td>").append(line.quantity())
                    .append("</td><td>").append(Html.escape(money(line.unitPrice(), order.currency())))
                    .append("</td><td>").append(Html.escape(money(line.amount(), order.currency())))
                    .append("</td></tr>\n");
        }
        b.append("</tbody>\n<tfoot><tr><th colspan=\"4\">Total</th><td>").append(Html.escape(money(order.total(), order.currency())))
                .append("</td></tr></tfoot>\n</table>\n");
        b.append("<p>We will let you know when your order ships.</p>\n");
        b.append("<p>").append(Html.escape(config.shopName())).append("</p>\n</body>\n</html>\n");
        return b.toString();
    }

    private static String money(BigDecimal amount, Currency currency) {
        return amount.setScale(currency.getDefaultFractionDigits()).toPlainString() + " " + currency.getCurrencyCode();
    }

    // ---- payload fields ----

    static String decodeUtf8(byte[] bytes) throws RenderException {
        if (bytes == null) {
            throw new RenderException("payload", "is empty");
        }
        CharsetDecoder decoder = StandardCharsets.UTF_8.newDecoder()
                .onMalformedInput(CodingErrorAction.REPORT)
                .onUnmappableCharacter(CodingErrorAction.REPORT);
        ByteBuffer in = ByteBuffer.wrap(bytes);
        CharBuffer out = CharBuffer.allocate(bytes.length);
        CoderResult result = decoder.decode(in, out, true);
        if (result.isError()) {
            // Java's decoder also rejects UTF-8-encoded surrogates (CESU-8), so no lone surrogate gets through here.
            throw new RenderException("payload", "is not valid UTF-8 (bad byte sequence at byte offset " + in.position() + ")");
        }
        decoder.flush(out);
        return out.flip().toString();
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

    /** The To display name: {@link MailboxRules}' rule, the one the order API placed the order under. */
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
        // code points, as the order API and PostgreSQL count them: 200 emoji are 200 characters
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

    private static List<OrderConfirmation.Line> lines(JsonNode root, Currency currency) throws RenderException {
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
        List<OrderConfirmation.Line> lines = new ArrayList<>(v.size());
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
            BigDecimal unitPrice = money(line, "unitPrice", prefix + "unitPrice", currency);
            lines.add(new OrderConfirmation.Line(sku, name, q.intValue(), unitPrice));
        }
        return lines;
    }
}
