package io.mailroom.templates;

/**
 * The two clean-ups of a rendered subject and text part, as single passes over the text.
 *
 * <p>They were {@code \s+ -> " "} and {@code (?:[ \t]*\r?\n){3,} -> "\n\n"} through
 * {@link java.util.regex.Matcher#replaceAll}: the second tried its group at every character of the
 * text part and was a fifth of composing an email (BENCHMARKS.md, issue 28, "the text part's blank
 * lines"). These give the same text for every input; {@code TextLayoutTest} holds them to the
 * expressions on random texts built from the characters that matter.
 */
final class TextLayout {
    private TextLayout() {
    }

    /**
     * The subject on one line: every run of {@code \s} ({@code [ \t\n\x0B\f\r]}) becomes one space,
     * then {@link String#strip()}.
     */
    static String oneLine(String s) {
        StringBuilder out = null;
        int n = s.length();
        int i = 0;
        while (i < n) {
            char c = s.charAt(i);
            if (!isSpace(c)) {
                if (out != null) {
                    out.append(c);
                }
                i++;
                continue;
            }
            int end = i + 1;
            while (end < n && isSpace(s.charAt(end))) {
                end++;
            }
            if (out == null && (c != ' ' || end - i > 1)) {
                out = new StringBuilder(n);
                out.append(s, 0, i);
            }
            if (out != null) {
                out.append(' ');
            }
            i = end;
        }
        return (out == null ? s : out.toString()).strip();
    }

    /**
     * Three or more line ends in a row, each after nothing but spaces and tabs, become one blank
     * line ({@code "\n\n"}); a line end is {@code \n} or {@code \r\n}.
     */
    static String blankLinesCollapsed(String s) {
        StringBuilder out = null;
        int n = s.length();
        int copied = 0; // s[copied, i) is still to be copied to out
        int i = 0;
        while (i < n) {
            // the line ends that follow from i, each [ \t]* \r? \n
            int end = i;
            int lines = 0;
            while (true) {
                int p = skipBlanks(s, end);
                if (p < n && s.charAt(p) == '\r') {
                    p++;
                }
                if (p < n && s.charAt(p) == '\n') {
                    end = p + 1;
                    lines++;
                } else {
                    break;
                }
            }
            if (lines >= 3) {
                if (out == null) {
                    out = new StringBuilder(n);
                }
                out.append(s, copied, i).append("\n\n");
                i = end;
                copied = end;
            } else if (lines > 0) {
                // a start anywhere inside these line ends finds no more of them than i did
                i = end;
            } else {
                // nor does a start inside the blanks before the character that stopped them
                int p = skipBlanks(s, i);
                i = p > i ? p : i + 1;
            }
        }
        return out == null ? s : out.append(s, copied, n).toString();
    }

    private static int skipBlanks(String s, int from) {
        int p = from;
        while (p < s.length() && (s.charAt(p) == ' ' || s.charAt(p) == '\t')) {
            p++;
        }
        return p;
    }

    /** Java's {@code \s} without UNICODE_CHARACTER_CLASS. */
    private static boolean isSpace(char c) {
        return c == ' ' || c == '\t' || c == '\n' || c == '\u000B' || c == '\f' || c == '\r';
    }
}
