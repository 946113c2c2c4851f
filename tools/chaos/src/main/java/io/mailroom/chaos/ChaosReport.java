package io.mailroom.chaos;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The outcome of a chaos run: the summary table (what happened, in numbers) and the violations
 * (each a broken promise: a lost or doubled email, a stuck claim, a claim while the breaker was
 * open...). A run passes when there is no violation.
 */
public final class ChaosReport {

    private final String title;
    private final Map<String, String> rows = new LinkedHashMap<>();
    private final Map<String, Long> counters = new LinkedHashMap<>();
    private final List<String> violations = new ArrayList<>();
    private final List<String> notes = new ArrayList<>();

    ChaosReport(String title) {
        this.title = title;
    }

    void row(String label, Object value) {
        rows.put(label, String.valueOf(value));
    }

    /** A number the table shows and tests can read back by label. */
    void count(String label, long value) {
        counters.put(label, value);
        rows.put(label, Long.toString(value));
    }

    void violation(String text) {
        violations.add(text);
    }

    void note(String text) {
        notes.add(text);
    }

    public boolean passed() {
        return violations.isEmpty();
    }

    public List<String> violations() {
        return List.copyOf(violations);
    }

    /** A counter by its label in the table, e.g. {@code "lost"}; -1 if the table has none. */
    public long count(String label) {
        return counters.getOrDefault(label, -1L);
    }

    public String markdown() {
        StringBuilder b = new StringBuilder();
        b.append("## ").append(title).append("\n\n");
        b.append("| | |\n|---|---|\n");
        rows.forEach((k, v) -> b.append("| ").append(k).append(" | ").append(v.replace("|", "\\|")).append(" |\n"));
        b.append('\n');
        if (violations.isEmpty()) {
            b.append("**PASSED**: nothing lost, nothing doubled, no claim while a breaker was open.\n");
        } else {
            b.append("**FAILED** (").append(violations.size()).append(" violations):\n\n");
            violations.stream().limit(50).forEach(v -> b.append("- ").append(v).append('\n'));
            if (violations.size() > 50) {
                b.append("- ... and ").append(violations.size() - 50).append(" more\n");
            }
        }
        if (!notes.isEmpty()) {
            b.append("\nNotes:\n\n");
            notes.forEach(n -> b.append("- ").append(n).append('\n'));
        }
        return b.toString();
    }

    @Override
    public String toString() {
        return markdown();
    }
}
