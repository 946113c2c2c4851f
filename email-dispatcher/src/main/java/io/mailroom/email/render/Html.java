package io.mailroom.email.render;

/** HTML escaping for text placed in element content or in a double- or single-quoted attribute. */
final class Html {

    private Html() {
    }

    static String escape(String s) {
        StringBuilder out = null;
        for (int i = 0; i < s.length(); i++) {
            String replacement = switch (s.charAt(i)) {
                case '&' -> "&amp;";
                case '<' -> "&lt;";
                case '>' -> "&gt;";
                case '"' -> "&quot;";
                case '\'' -> "&#39;";
                default -> null;
            };
            if (replacement != null && out == null) {
                out = new StringBuilder(s.length() + 16).append(s, 0, i);
            }
            if (out != null) {
                if (replacement != null) {
                    out.append(replacement);
                } else {
                    out.append(s.charAt(i));
                }
            }
        }
        return out == null ? s : out.toString();
    }
}
