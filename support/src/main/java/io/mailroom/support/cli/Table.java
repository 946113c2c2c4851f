package io.mailroom.support.cli;

import java.io.PrintWriter;
import java.util.ArrayList;
import java.util.List;

/** A plain-text table with aligned columns; cells are made single-line and cut to a width. */
final class Table {

    private final List<String> headers;
    private final int[] maxWidths;
    private final List<String[]> rows = new ArrayList<>();

    /** @param maxWidths the widest each column may get (longer cells end in "…") */
    Table(List<String> headers, int... maxWidths) {
        this.headers = List.copyOf(headers);
        this.maxWidths = maxWidths;
    }

    Table row(Object... cells) {
        String[] r = new String[headers.size()];
        for (int i = 0; i < r.length; i++) {
            r[i] = cell(i < cells.length ? cells[i] : null, i < maxWidths.length ? maxWidths[i] : 40);
        }
        rows.add(r);
        return this;
    }

    boolean isEmpty() {
        return rows.isEmpty();
    }

    void print(PrintWriter out) {
        int[] w = new int[headers.size()];
        for (int i = 0; i < w.length; i++) {
            w[i] = headers.get(i).length();
            for (String[] r : rows) {
                w[i] = Math.max(w[i], r[i].length());
            }
        }
        line(out, headers.toArray(String[]::new), w);
        for (String[] r : rows) {
            line(out, r, w);
        }
    }

    private static void line(PrintWriter out, String[] cells, int[] w) {
        StringBuilder b = new StringBuilder();
        for (int i = 0; i < cells.length; i++) {
            if (i > 0) {
                b.append("  ");
            }
            b.append(cells[i]);
            if (i < cells.length - 1) {
                b.append(" ".repeat(w[i] - cells[i].length()));
            }
        }
        out.println(b.toString().stripTrailing());
    }

    /** One line of text: control characters (a newline in an error) become spaces. */
    static String cell(Object value, int max) {
        if (value == null) {
            return "-";
        }
        String s = value.toString();
        StringBuilder b = new StringBuilder(s.length());
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            b.append(Character.isISOControl(c) ? ' ' : c);
        }
        String t = b.toString().strip();
        if (t.isEmpty()) {
            return "-";
        }
        return t.length() <= max ? t : t.substring(0, Math.max(1, max - 1)) + "…";
    }
}
