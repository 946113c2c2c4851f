package io.mailroom.orders;

import io.mailroom.mailbox.MailboxRules;

import java.math.BigDecimal;
import java.math.RoundingMode;
import java.util.List;
import java.util.Locale;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * A request to place an order, as a client sends it ({@code POST /orders}) or business code builds
 * it. It carries no total: the total is computed from the lines ({@link #total()}), never taken
 * from input, and since quantities are at least 1 and unit prices at least 0 it cannot be negative.
 *
 * <p>The record is a plain carrier so that JSON binding can deliver whatever the client sent;
 * {@link #validate()} decides whether it can be placed and names the first offending field in the
 * request's JSON terms ({@code lines[1].unitPrice}). The limits mirror the {@code orders} and
 * {@code order_line} CHECK constraints, so a valid request never trips one.
 *
 * @param customerEmail where the confirmation goes; see {@link MailboxRules} for what is accepted
 * @param customerName  the name printed in the confirmation and shown in its To header; see {@link MailboxRules}
 * @param currency      ISO-4217-style code of three capital letters, e.g. {@code EUR}
 * @param lines         1 to {@value #MAX_LINES} lines, in the order they are shown
 * @param locale        the customer's language for every email about the order, a BCP 47 tag whose
 *                      language is one of {@link #LOCALES} ({@code "vi"}, {@code "en-GB"}); optional,
 *                      {@value #DEFAULT_LOCALE} when absent
 */
public record PlaceOrder(String customerEmail, String customerName, String currency, List<Line> lines, String locale) {

    /** The languages the shop's emails are written in. */
    public static final List<String> LOCALES = List.of("en", "vi");
    public static final String DEFAULT_LOCALE = "en";

    public static final int MAX_NAME_LENGTH = MailboxRules.MAX_DISPLAY_NAME_LENGTH;
    public static final int MAX_LINES = 100;
    public static final int MAX_SKU_LENGTH = 64;
    public static final int MAX_LINE_NAME_LENGTH = 200;
    public static final int MAX_QUANTITY = 10_000;
    public static final BigDecimal MAX_UNIT_PRICE = new BigDecimal("1000000.00");
    /** Largest value of {@code orders.total numeric(14, 2)}. */
    public static final BigDecimal MAX_TOTAL = new BigDecimal("999999999999.99");
    /** Money has cents at most. */
    public static final int MONEY_SCALE = 2;

    private static final Pattern CURRENCY = Pattern.compile("^[A-Z]{3}$");
    /** A language and an optional region, as BCP 47 writes them: {@code vi}, {@code en-GB}. */
    private static final Pattern LOCALE = Pattern.compile("^([A-Za-z]{2,3})(-[A-Za-z]{2})?$");

    /** An order in the default language. */
    public PlaceOrder(String customerEmail, String customerName, String currency, List<Line> lines) {
        this(customerEmail, customerName, currency, lines, null);
    }

    /** The same order for a customer of another language. */
    public PlaceOrder withLocale(String locale) {
        return new PlaceOrder(customerEmail, customerName, currency, lines, locale);
    }

    /**
     * The locale as stored and sent with every email: the tag in its canonical case ({@code vi},
     * {@code en-GB}), {@value #DEFAULT_LOCALE} when none was given; only meaningful on a validated request.
     */
    public String localeTag() {
        return locale == null ? DEFAULT_LOCALE : Locale.forLanguageTag(locale).toLanguageTag();
    }

    /**
     * One order line.
     *
     * @param sku       the seller's article code, 1 to {@value #MAX_SKU_LENGTH} characters
     * @param name      the article name shown in the email, 1 to {@value #MAX_LINE_NAME_LENGTH} characters
     * @param quantity  1 to {@value #MAX_QUANTITY}
     * @param unitPrice 0 to {@link #MAX_UNIT_PRICE}, at most two decimals
     */
    public record Line(String sku, String name, Integer quantity, BigDecimal unitPrice) {

        /** quantity × unitPrice, to the cent; only meaningful on a validated line. */
        public BigDecimal lineTotal() {
            return unitPrice.multiply(BigDecimal.valueOf(quantity)).setScale(MONEY_SCALE, RoundingMode.UNNECESSARY);
        }
    }

    /**
     * Checks every field and throws for the first one that is wrong.
     *
     * @throws InvalidOrderException naming the offending field
     */
    public void validate() {
        if (customerEmail == null) {
            throw new InvalidOrderException("customerEmail", "customerEmail is required");
        }
        // The dispatcher's EmailAddress and renderer apply the same two rules: what passes here renders.
        MailboxRules.addressProblem(customerEmail).ifPresent(problem -> {
            throw new InvalidOrderException("customerEmail", "customerEmail " + problem);
        });
        if (customerName == null) {
            throw new InvalidOrderException("customerName", "customerName is required");
        }
        MailboxRules.displayNameProblem(customerName).ifPresent(problem -> {
            throw new InvalidOrderException("customerName", "customerName " + problem);
        });
        if (currency == null) {
            throw new InvalidOrderException("currency", "currency is required");
        }
        if (!CURRENCY.matcher(currency).matches()) {
            throw new InvalidOrderException("currency", "currency must be three capital letters, e.g. EUR");
        }
        if (lines == null) {
            throw new InvalidOrderException("lines", "lines is required");
        }
        if (lines.isEmpty()) {
            throw new InvalidOrderException("lines", "lines must contain at least one line");
        }
        if (lines.size() > MAX_LINES) {
            throw new InvalidOrderException("lines", "lines must contain at most " + MAX_LINES + " lines, got " + lines.size());
        }
        for (int i = 0; i < lines.size(); i++) {
            validateLine("lines[" + i + "]", lines.get(i));
        }
        if (total().compareTo(MAX_TOTAL) > 0) {
            throw new InvalidOrderException("lines", "the order total must be at most " + MAX_TOTAL.toPlainString());
        }
        validateLocale(locale);
    }

    private static void validateLocale(String locale) {
        if (locale == null) {
            return;
        }
        Matcher m = LOCALE.matcher(locale);
        if (!m.matches() || !LOCALES.contains(m.group(1).toLowerCase(Locale.ROOT))) {
            throw new InvalidOrderException("locale", "locale must be a language tag of one of the shop's languages "
                    + LOCALES + ", e.g. \"vi\" or \"en-GB\"");
        }
    }

    /** Sum of quantity × unitPrice over the lines, to the cent; only meaningful on a validated request. */
    public BigDecimal total() {
        BigDecimal total = BigDecimal.ZERO.setScale(MONEY_SCALE);
        for (Line line : lines) {
            total = total.add(line.lineTotal());
        }
        return total;
    }

    private static void validateLine(String path, Line line) {
        if (line == null) {
            throw new InvalidOrderException(path, path + " is required");
        }
        requireText(path + ".sku", line.sku(), MAX_SKU_LENGTH);
        requireText(path + ".name", line.name(), MAX_LINE_NAME_LENGTH);

        String quantity = path + ".quantity";
        if (line.quantity() == null) {
            throw new InvalidOrderException(quantity, quantity + " is required");
        }
        if (line.quantity() < 1 || line.quantity() > MAX_QUANTITY) {
            throw new InvalidOrderException(quantity, quantity + " must be between 1 and " + MAX_QUANTITY);
        }

        String unitPrice = path + ".unitPrice";
        BigDecimal price = line.unitPrice();
        if (price == null) {
            throw new InvalidOrderException(unitPrice, unitPrice + " is required");
        }
        if (price.signum() < 0) {
            throw new InvalidOrderException(unitPrice, unitPrice + " must not be negative");
        }
        // compared before the scale so that an absurd exponent (1E+999999999) is refused cheaply
        if (price.compareTo(MAX_UNIT_PRICE) > 0) {
            throw new InvalidOrderException(unitPrice, unitPrice + " must be at most " + MAX_UNIT_PRICE.toPlainString());
        }
        if (price.stripTrailingZeros().scale() > MONEY_SCALE) {
            throw new InvalidOrderException(unitPrice, unitPrice + " must have at most " + MONEY_SCALE + " decimals");
        }
    }

    /**
     * Not null, not blank, at most {@code max} characters (code points, as PostgreSQL counts), and
     * nothing the renderer refuses in a line of text (control, line-separator and bidi characters).
     */
    static void requireText(String field, String value, int max) {
        if (value == null) {
            throw new InvalidOrderException(field, field + " is required");
        }
        if (value.isBlank()) {
            throw new InvalidOrderException(field, field + " must not be blank");
        }
        if (value.codePointCount(0, value.length()) > max) {
            throw new InvalidOrderException(field, field + " must be at most " + max + " characters");
        }
        // CR/LF would end up in a mail header or subject line, NUL is refused by PostgreSQL, a lone
        // surrogate (JSON can escape one) would be stored as '?', a bidi override reorders the email
        int bad = MailboxRules.firstForbiddenInLine(value);
        if (bad >= 0) {
            throw new InvalidOrderException(field, field + " contains " + MailboxRules.describe(value, bad));
        }
    }
}
