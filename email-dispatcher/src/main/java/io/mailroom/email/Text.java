package io.mailroom.email;

/**
 * Character-level checks shared by the email value types and the renderer. A header value (display
 * name, subject, custom header) must not contain anything that could end the header line or
 * reorder text; a body may contain line breaks and tabs but no other control characters. Lone
 * UTF-16 surrogates are rejected everywhere because they cannot be encoded as UTF-8.
 */
public final class Text {

    private Text() {
    }

    /** Index of the first character not allowed in a single header line, or -1. */
    public static int firstForbiddenInHeader(String s) {
        return firstForbidden(s, false);
    }

    /** Index of the first character not allowed in a message body, or -1. */
    public static int firstForbiddenInBody(String s) {
        return firstForbidden(s, true);
    }

    private static int firstForbidden(String s, boolean body) {
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            if (Character.isHighSurrogate(c)) {
                if (i + 1 < s.length() && Character.isLowSurrogate(s.charAt(i + 1))) {
                    i++;
                    continue;
                }
                return i;
            }
            if (Character.isLowSurrogate(c)) {
                return i;
            }
            if (body && (c == '\n' || c == '\r' || c == '\t')) {
                continue;
            }
            if (Character.isISOControl(c) || c == '\u2028' || c == '\u2029' || isBidiControl(c)) {
                return i;
            }
        }
        return -1;
    }

    // Bidi overrides in a name or subject can make "evil.com" read as "moc.live": not worth allowing.
    private static boolean isBidiControl(char c) {
        return (c >= '\u202A' && c <= '\u202E') || (c >= '\u2066' && c <= '\u2069');
    }

    /** "a lone surrogate U+D800" or "a control character U+000A" for error messages. */
    public static String describe(String s, int index) {
        char c = s.charAt(index);
        String kind = Character.isSurrogate(c) ? "a lone surrogate" : "a control character";
        return String.format("%s U+%04X at index %d", kind, (int) c, index);
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
