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
        int newline;
        while ((newline = s.indexOf('\n', i)) >= 0) {
            // The leftmost place a run can start: the blanks and \r just before the first \n (not before i).
            // From anywhere after it and up to that \n the run finds no more line ends than from there.
            int start = newline;
            if (start > i && s.charAt(start - 1) == '\r') {
                start--;
            }
            while (start > i && isBlank(s.charAt(start - 1))) {
                start--;
            }
            int end = newline + 1;
            int lines = 1;
            while (true) {
                int p = end;
                while (p < n && isBlank(s.charAt(p))) {
                    p++;
                }
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
                out.append(s, copied, start).append("\n\n");
                copied = end;
            }
            i = end;
        }
        return out == null ? s : out.append(s, copied, n).toString();
    }

    private static boolean isBlank(char c) {
        return c == ' ' || c == '\t';
    }

    /** Java's {@code \s} without UNICODE_CHARACTER_CLASS. */
    private static boolean isSpace(char c) {
        return c == ' ' || c == '\t' || c == '\n' || c == '\u000B' || c == '\f' || c == '\r';
    }
}
