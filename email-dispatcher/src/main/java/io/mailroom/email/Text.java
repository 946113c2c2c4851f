package io.mailroom.email;

import io.mailroom.mailbox.MailboxRules;

/**
 * Character-level checks shared by the email value types and the renderer. A header value (display
 * name, subject, custom header) must not contain anything that could end the header line or
 * reorder text; a body may contain line breaks and tabs but no other control characters. Lone
 * UTF-16 surrogates are rejected everywhere because they cannot be encoded as UTF-8. The
 * characters themselves are {@link MailboxRules}'s, the rule the order API applies too.
 */
public final class Text {

    private Text() {
    }

    /** Index of the first character not allowed in a single header line, or -1. */
    public static int firstForbiddenInHeader(String s) {
        return MailboxRules.firstForbiddenInLine(s);
    }

    /**
     * What is wrong with {@code s} as one header line's text, counting what its RFC 2047 encoded
     * words decode to ({@link MailboxRules#headerTextProblem}), or empty.
     */
    public static java.util.Optional<String> headerProblem(String s) {
        return MailboxRules.headerTextProblem(s);
    }

    /** Index of the first character not allowed in a message body, or -1. */
    public static int firstForbiddenInBody(String s) {
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            if (c >= 0x20 && c < 0x7F) {
                continue; // printable ASCII, most of any body: one test instead of the rules below
            }
            if (Character.isHighSurrogate(c) && i + 1 < s.length() && Character.isLowSurrogate(s.charAt(i + 1))) {
                i++;
                continue;
            }
            if (c == '\n' || c == '\r' || c == '\t') {
                continue;
            }
            if (Character.isSurrogate(c) || MailboxRules.isForbiddenInLine(c)) {
                return i;
            }
        }
        return -1;
    }

    /** "a lone surrogate U+D800 at index 3" or "a control character U+000A at index 0" for error messages. */
    public static String describe(String s, int index) {
        return MailboxRules.describe(s, index);
    }

    /** Cuts to at most {@code max} chars, marking the cut, and replaces control characters by spaces. */
    public static String bounded(String s, int max) {
        if (s == null) {
            return null;
        }
        StringBuilder out = new StringBuilder(Math.min(s.length(), max + 16));
        for (int i = 0; i < s.length() && out.length() < max; i++) {
            char c = s.charAt(i);
            out.append(Character.isISOControl(c) || Character.isSurrogate(c) ? ' ' : c);
        }
        if (s.length() > max) {
            out.append("...(").append(s.length() - max).append(" more chars)");
        }
        return out.toString().strip();
    }
}
