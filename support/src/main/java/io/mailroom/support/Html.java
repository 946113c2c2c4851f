package io.mailroom.support;

import java.net.URLEncoder;
import java.nio.charset.StandardCharsets;

/** Escaping for the console's server-rendered HTML. Every value that is not a literal goes through here. */
final class Html {

    private Html() {
    }

    /** For element content and double- or single-quoted attribute values; null becomes empty. */
    static String esc(Object value) {
        if (value == null) {
            return "";
        }
        String s = value.toString();
        StringBuilder out = null;
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            String replacement = switch (c) {
                case '&' -> "&amp;";
                case '<' -> "&lt;";
                case '>' -> "&gt;";
                case '"' -> "&quot;";
                case '\'' -> "&#39;";
                case '`' -> "&#96;";
                default -> null;
            };
            if (replacement != null && out == null) {
                out = new StringBuilder(s.length() + 16).append(s, 0, i);
            }
            if (out != null) {
                if (replacement != null) {
                    out.append(replacement);
                } else {
                    out.append(c);
                }
            }
        }
        return out == null ? s : out.toString();
    }

    /** A query-string or path-segment value, percent-encoded (then still HTML-escaped where it is placed). */
    static String url(String value) {
        return URLEncoder.encode(value == null ? "" : value, StandardCharsets.UTF_8).replace("+", "%20");
    }
}
