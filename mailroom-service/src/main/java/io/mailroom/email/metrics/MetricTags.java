package io.mailroom.email.metrics;

import io.mailroom.outbox.InvalidSettingException;

import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.Map;
import java.util.Set;
import java.util.regex.Pattern;

/**
 * Which email tags become labels of the delivery metrics ({@code MAILROOM_METRIC_TAGS}), so their
 * cardinality stays bounded whatever tags business code sends: {@code category=invoice|receipt,plan=free|pro}
 * names each tag and the values that become a label; any other value of a listed tag is counted as
 * {@value #OTHER}, an event without the tag as {@value #NONE}, and a tag not listed is no label at all.
 * At most {@value #MAX_NAMES} tags of {@value #MAX_VALUES} values each, so one event kind has at most
 * {@code 5 * (20 + 2)} series per source. Empty (the default): no tag labels.
 */
public record MetricTags(Map<String, Set<String>> allowed) {

    public static final String SETTING = "MAILROOM_METRIC_TAGS";
    public static final String OTHER = "other";
    public static final String NONE = "none";
    public static final int MAX_NAMES = 5;
    public static final int MAX_VALUES = 20;
    public static final MetricTags NO_TAGS = new MetricTags(Map.of());

    private static final Pattern NAME = Pattern.compile("[A-Za-z0-9_-]{1,64}");
    private static final Pattern VALUE = Pattern.compile("[A-Za-z0-9_.:@/-]{1,256}");

    public MetricTags {
        Map<String, Set<String>> copy = new LinkedHashMap<>();
        allowed.forEach((k, v) -> copy.put(k, Collections.unmodifiableSet(new LinkedHashSet<>(v))));
        allowed = Collections.unmodifiableMap(copy);
    }

    /** Parses the setting; a bad or unbounded entry is refused naming {@value #SETTING}. */
    public static MetricTags parse(String value) {
        if (value == null || value.isBlank()) {
            return NO_TAGS;
        }
        Map<String, Set<String>> allowed = new LinkedHashMap<>();
        for (String entry : value.split(",")) {
            String e = entry.strip();
            int eq = e.indexOf('=');
            String name = eq < 0 ? e : e.substring(0, eq).strip();
            if (!NAME.matcher(name).matches()) {
                throw bad("'" + e + "' does not start with a tag name (1-64 of A-Z, a-z, 0-9, '_', '-')");
            }
            if (eq < 0 || e.substring(eq + 1).isBlank()) {
                throw bad("names tag " + name + " without its values (" + name + "=invoice|receipt): only listed values"
                        + " become labels, so the metrics' cardinality stays bounded");
            }
            Set<String> values = new LinkedHashSet<>();
            for (String v : e.substring(eq + 1).split("\\|")) {
                String s = v.strip();
                if (!VALUE.matcher(s).matches() || s.equals(OTHER) || s.equals(NONE)) {
                    throw bad("has the value '" + s + "' for tag " + name + ": a tag value (1-256 of A-Z, a-z, 0-9 and"
                            + " '_', '-', '.', ':', '@', '/'), not '" + OTHER + "' or '" + NONE + "'");
                }
                values.add(s);
            }
            if (values.size() > MAX_VALUES) {
                throw bad("lists " + values.size() + " values for tag " + name + "; at most " + MAX_VALUES);
            }
            if (allowed.put(name, values) != null) {
                throw bad("names tag " + name + " twice");
            }
        }
        if (allowed.size() > MAX_NAMES) {
            throw bad("names " + allowed.size() + " tags; at most " + MAX_NAMES);
        }
        return new MetricTags(allowed);
    }

    /** The label value of tag {@code name} for an event that echoed {@code tags}. */
    public String label(String name, Map<String, String> tags) {
        String v = tags.get(name);
        if (v == null) {
            return NONE;
        }
        return allowed.getOrDefault(name, Set.of()).contains(v) ? v : OTHER;
    }

    private static InvalidSettingException bad(String problem) {
        return new InvalidSettingException(SETTING, SETTING + " " + problem);
    }
}
