package io.mailroom.mailbox;

import java.util.Map;
import java.util.Optional;
import java.util.regex.Pattern;

/**
 * The one rule for an email's tags ({@code name=value}), applied by the email API at enqueue and by
 * the dispatcher when it reads an envelope. A tag travels everywhere an email's facts go: the
 * envelope (JSON), an SMTP header ({@code X-Mailroom-Tag: name=value}), the HTTP provider's
 * {@code tags}, a search term ({@code tag:name=value}), a URL's query, and (for allow-listed tags)
 * a metric label. So the charset is small enough for all of them: a name is 1 to
 * {@value #MAX_NAME_LENGTH} of {@code A-Z a-z 0-9 _ -}; a value is 1 to {@value #MAX_VALUE_LENGTH}
 * of those and {@code . : @ /} (no space, no {@code =}, {@code ;}, {@code ,}, quote or {@code +},
 * which a header, a search term or a query would have to escape). At most {@value #MAX_TAGS} per
 * email. The name {@value #RESERVED} is Mailroom's own (the idempotency key it sends to providers).
 */
public final class TagRules {

    public static final int MAX_TAGS = 10;
    public static final int MAX_NAME_LENGTH = 64;
    public static final int MAX_VALUE_LENGTH = 256;
    /** The tag the dispatcher sends the idempotency key under, so a provider's events echo it. */
    public static final String RESERVED = "idempotency_key";

    private static final Pattern NAME = Pattern.compile("[A-Za-z0-9_-]{1," + MAX_NAME_LENGTH + "}");
    private static final Pattern VALUE = Pattern.compile("[A-Za-z0-9_.:@/-]{1," + MAX_VALUE_LENGTH + "}");

    private TagRules() {
    }

    /** What is wrong with a tag's name, phrased to follow the field's name, or empty. */
    public static Optional<String> nameProblem(String name) {
        if (name == null || name.isEmpty()) {
            return Optional.of("has a tag without a name");
        }
        if (!NAME.matcher(name).matches()) {
            return Optional.of("has a tag name that is not 1-" + MAX_NAME_LENGTH + " of A-Z, a-z, 0-9, '_', '-': '"
                    + printable(name) + "'");
        }
        if (name.equals(RESERVED)) {
            return Optional.of("has the tag name '" + RESERVED + "', which Mailroom sets itself (the idempotency key)");
        }
        return Optional.empty();
    }

    /** What is wrong with a tag's value, phrased to follow the field's name ({@code tags.plan}), or empty. */
    public static Optional<String> valueProblem(String value) {
        if (value == null || value.isEmpty()) {
            return Optional.of("has no value");
        }
        if (value.length() > MAX_VALUE_LENGTH) {
            return Optional.of("is longer than " + MAX_VALUE_LENGTH + " characters (" + value.length() + ")");
        }
        if (!VALUE.matcher(value).matches()) {
            return Optional.of("must be 1-" + MAX_VALUE_LENGTH + " of A-Z, a-z, 0-9 and '_', '-', '.', ':', '@', '/'"
                    + " (no space, '=', ';', ',', '+' or quote)");
        }
        return Optional.empty();
    }

    /**
     * The first problem of a set of tags as {field, problem}, or empty: the count, then each name
     * (field {@code tags}), then each value (field {@code tags.<name>}).
     */
    public static Optional<String[]> problem(Map<String, String> tags) {
        if (tags.size() > MAX_TAGS) {
            return Optional.of(new String[]{"tags", "has " + tags.size() + " tags; at most " + MAX_TAGS});
        }
        for (Map.Entry<String, String> t : tags.entrySet()) {
            Optional<String> name = nameProblem(t.getKey());
            if (name.isPresent()) {
                return Optional.of(new String[]{"tags", name.get()});
            }
            Optional<String> value = valueProblem(t.getValue());
            if (value.isPresent()) {
                return Optional.of(new String[]{"tags." + t.getKey(), value.get()});
            }
        }
        return Optional.empty();
    }

    private static String printable(String s) {
        StringBuilder out = new StringBuilder();
        s.codePoints().limit(80).forEach(cp -> {
            if (cp < 0x20 || cp == 0x7f) {
                out.append(String.format("\\u%04x", cp));
            } else {
                out.appendCodePoint(cp);
            }
        });
        return out.toString();
    }
}
