package io.mailroom.bench;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.SerializationFeature;

import java.io.IOException;
import java.io.PrintStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * The results of one run: sections (one per scenario) of rows, each row an ordered map from column
 * key to value, plus the machine and settings they were measured on. Printed as a text table and
 * written as JSON with the same content. Every value is computed from the run; a scenario that
 * cannot run yet appears as a row with status {@link #NOT_AVAILABLE} and the reason, never a number.
 */
final class Report {

    static final String OK = "ok";
    static final String FAILED = "FAILED";
    static final String NOT_AVAILABLE = "not yet available";
    static final String SKIPPED = "skipped";

    /** A column: key in the row map, header in the table. */
    record Column(String key, String header) {
    }

    static final class Section {
        final String id;
        final String title;
        final List<Column> columns;
        final List<Map<String, Object>> rows = new ArrayList<>();
        final List<String> notes = new ArrayList<>();

        Section(String id, String title, List<Column> columns) {
            this.id = id;
            this.title = title;
            this.columns = columns;
        }

        Map<String, Object> row() {
            Map<String, Object> row = new LinkedHashMap<>();
            rows.add(row);
            return row;
        }

        /** A row saying this part cannot run yet, and why. */
        void notAvailable(String what, String why) {
            Map<String, Object> row = row();
            row.put(columns.getFirst().key(), what);
            row.put("status", NOT_AVAILABLE);
            row.put("note", why);
        }

        void note(String text) {
            notes.add(text);
        }
    }

    final Map<String, Object> machine = new LinkedHashMap<>();
    final Map<String, Object> settings = new LinkedHashMap<>();
    final List<Section> sections = new ArrayList<>();

    Section section(String id, String title, List<Column> columns) {
        Section s = new Section(id, title, columns);
        sections.add(s);
        return s;
    }

    Section find(String id) {
        return sections.stream().filter(s -> s.id.equals(id)).findFirst().orElse(null);
    }

    // ------------------------------------------------------------------------------------- output

    void printTables(PrintStream out) {
        for (Section s : sections) {
            printSection(out, s);
        }
    }

    static void printSection(PrintStream out, Section s) {
        out.println();
        out.println("== " + s.title);
        List<String[]> lines = new ArrayList<>();
        String[] header = s.columns.stream().map(Column::header).toArray(String[]::new);
        lines.add(header);
        for (Map<String, Object> row : s.rows) {
            String[] cells = new String[s.columns.size()];
            for (int i = 0; i < cells.length; i++) {
                cells[i] = format(row.get(s.columns.get(i).key()));
            }
            lines.add(cells);
        }
        int[] widths = new int[header.length];
        for (String[] line : lines) {
            for (int i = 0; i < line.length; i++) {
                widths[i] = Math.max(widths[i], line[i].length());
            }
        }
        for (int l = 0; l < lines.size(); l++) {
            StringBuilder sb = new StringBuilder();
            for (int i = 0; i < widths.length; i++) {
                String cell = lines.get(l)[i];
                boolean numeric = l > 0 && !cell.isEmpty() && (Character.isDigit(cell.charAt(0)) || cell.charAt(0) == '-')
                        && i > 0;
                sb.append(numeric ? pad(cell, widths[i], true) : pad(cell, widths[i], false));
                if (i < widths.length - 1) {
                    sb.append("  ");
                }
            }
            out.println(sb.toString().stripTrailing());
            if (l == 0) {
                out.println("-".repeat(sb.toString().stripTrailing().length()));
            }
        }
        for (Map<String, Object> row : s.rows) {
            Object note = row.get("note");
            Object status = row.get("status");
            if (note != null && !OK.equals(status)) {
                out.println("  " + row.get(s.columns.getFirst().key()) + ": " + status + " - " + note);
            }
        }
        for (String note : s.notes) {
            out.println("  note: " + note);
        }
    }

    static String format(Object v) {
        if (v == null) {
            return "";
        }
        if (v instanceof Double d) {
            if (d.isNaN() || d.isInfinite()) {
                return "n/a";
            }
            double a = Math.abs(d);
            if (a >= 1000) {
                return String.format(Locale.ROOT, "%,.0f", d);
            }
            if (a >= 100) {
                return String.format(Locale.ROOT, "%.0f", d);
            }
            if (a >= 10) {
                return String.format(Locale.ROOT, "%.1f", d);
            }
            return String.format(Locale.ROOT, "%.2f", d);
        }
        if (v instanceof Long || v instanceof Integer) {
            return String.format(Locale.ROOT, "%,d", ((Number) v).longValue());
        }
        if (v instanceof Boolean b) {
            return b ? "on" : "off";
        }
        return v.toString();
    }

    private static String pad(String s, int width, boolean right) {
        if (s.length() >= width) {
            return s;
        }
        String spaces = " ".repeat(width - s.length());
        return right ? spaces + s : s + spaces;
    }

    void writeJson(Path path) throws IOException {
        Map<String, Object> doc = new LinkedHashMap<>();
        doc.put("machine", machine);
        doc.put("settings", settings);
        List<Map<String, Object>> out = new ArrayList<>();
        for (Section s : sections) {
            Map<String, Object> m = new LinkedHashMap<>();
            m.put("id", s.id);
            m.put("title", s.title);
            m.put("rows", s.rows);
            if (!s.notes.isEmpty()) {
                m.put("notes", s.notes);
            }
            out.add(m);
        }
        doc.put("sections", out);
        if (path.getParent() != null) {
            Files.createDirectories(path.getParent());
        }
        new ObjectMapper().enable(SerializationFeature.INDENT_OUTPUT).writeValue(path.toFile(), sanitize(doc));
    }

    /** NaN and infinities are not JSON: write them as null. */
    private static Object sanitize(Object v) {
        if (v instanceof Double d && (d.isNaN() || d.isInfinite())) {
            return null;
        }
        if (v instanceof Map<?, ?> m) {
            Map<String, Object> out = new LinkedHashMap<>();
            m.forEach((k, x) -> out.put(String.valueOf(k), sanitize(x)));
            return out;
        }
        if (v instanceof List<?> l) {
            return l.stream().map(Report::sanitize).toList();
        }
        return v;
    }
}
