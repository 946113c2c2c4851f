package io.mailroom.templates;

/**
 * What jsoup's parse and serialization turn a Pebble-escaped value into, without parsing: the
 * value's characters as jsoup writes them in text, in an attribute value, or in a title.
 */
final class JsoupEscaping {
    private JsoupEscaping() {
    }

    static String text(String s) {
        return escape(s, false, false);
    }

    static String attribute(String s) {
        return escape(s, true, true);
    }

    static String rcdata(String s) {
        return escape(s, false, true);
    }

    private static String escape(String s, boolean attribute, boolean nulAsReplacement) {
        StringBuilder out = null;
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            String r;
            if (c == '&') {
                r = "&amp;";
            } else if (c == '<') {
                r = "&lt;";
            } else if (c == '>') {
                r = "&gt;";
            } else if (c == '\u00a0') {
                r = "&nbsp;";
            } else if (c == '"' && attribute) {
                r = "&quot;";
            } else if (c == '\0') {
                r = nulAsReplacement ? "\uFFFD" : "";
            } else if (c < ' ' && c != '\t' && c != '\n' && c != '\r') {
                r = "&#x" + Integer.toHexString(c) + ";";
            } else if (Character.isHighSurrogate(c) && i + 1 < s.length() && Character.isLowSurrogate(s.charAt(i + 1))) {
                if (out != null) {
                    out.append(c).append(s.charAt(i + 1));
                }
                i++;
                continue;
            } else if (Character.isSurrogate(c)) {
                r = "&#x" + Integer.toHexString(c) + ";";
            } else {
                if (out != null) {
                    out.append(c);
                }
                continue;
            }
            if (out == null) {
                out = new StringBuilder(s.length() + 16);
                out.append(s, 0, i);
            }
            out.append(r);
        }
        return out == null ? s : out.toString();
    }
}
