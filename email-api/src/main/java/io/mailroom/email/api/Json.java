package io.mailroom.email.api;

import io.mailroom.db.sql.PgValues;

import java.math.BigDecimal;
import java.math.BigInteger;
import java.time.temporal.TemporalAccessor;
import java.util.Collection;
import java.util.Map;

/**
 * Writes template data as JSON: maps with string keys, lists and arrays, strings, numbers,
 * booleans, null, and {@code java.time} values (as their ISO-8601 text). Anything else is refused
 * with its path, so a payload is never written with a value the template could not read. Kept
 * here, small and exact, so the business API needs no JSON library of its own.
 */
final class Json {

    private Json() {
    }

    static String write(Map<?, ?> data) {
        StringBuilder out = new StringBuilder(256);
        value(out, "data", data, 0);
        return out.toString();
    }

    static void string(StringBuilder out, String s) {
        out.append('"');
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            switch (c) {
                case '"' -> out.append("\\\"");
                case '\\' -> out.append("\\\\");
                case '\n' -> out.append("\\n");
                case '\r' -> out.append("\\r");
                case '\t' -> out.append("\\t");
                default -> {
                    if (c < 0x20 || c == 0x2028 || c == 0x2029) {
                        out.append(String.format("\\u%04x", (int) c));
                    } else {
                        out.append(c);
                    }
                }
            }
        }
        out.append('"');
    }

    private static void value(StringBuilder out, String path, Object v, int depth) {
        if (depth > 32) {
            throw new InvalidEmailException(path, "is nested more than 32 levels deep");
        }
        switch (v) {
            case null -> out.append("null");
            case String s -> {
                requireText(path, s);
                string(out, s);
            }
            case Boolean b -> out.append(b);
            case Integer i -> out.append(i);
            case Long l -> out.append(l);
            case Short s -> out.append(s);
            case Byte b -> out.append(b);
            case BigInteger b -> out.append(b);
            case BigDecimal d -> out.append(d.toString());
            case Double d -> finite(out, path, d);
            case Float f -> finite(out, path, f.doubleValue());
            case TemporalAccessor t -> string(out, t.toString());
            case Map<?, ?> m -> {
                out.append('{');
                boolean first = true;
                for (Map.Entry<?, ?> e : m.entrySet()) {
                    if (!(e.getKey() instanceof String key) || key.isEmpty()) {
                        throw new InvalidEmailException(path, "has a key that is not a non-empty string: " + e.getKey());
                    }
                    // a bad key is named by its parent: a field name holding the NUL would carry it into every error
                    String problem = textProblem(key);
                    if (problem != null) {
                        throw new InvalidEmailException(path, "has a key that " + problem);
                    }
                    if (!first) {
                        out.append(',');
                    }
                    first = false;
                    string(out, key);
                    out.append(':');
                    value(out, path + "." + key, e.getValue(), depth + 1);
                }
                out.append('}');
            }
            case Collection<?> c -> {
                out.append('[');
                int i = 0;
                for (Object item : c) {
                    if (i > 0) {
                        out.append(',');
                    }
                    value(out, path + "[" + i + "]", item, depth + 1);
                    i++;
                }
                out.append(']');
            }
            case Object[] a -> value(out, path, java.util.Arrays.asList(a), depth);
            default -> throw new InvalidEmailException(path, "is a " + v.getClass().getName()
                    + "; template data takes maps, lists, strings, numbers, booleans, null and java.time values");
        }
    }

    private static void finite(StringBuilder out, String path, double d) {
        if (!Double.isFinite(d)) {
            throw new InvalidEmailException(path, "is " + d + ", which JSON cannot hold");
        }
        out.append(BigDecimal.valueOf(d).toString());
    }

    private static void requireText(String path, String s) {
        String problem = textProblem(s);
        if (problem != null) {
            throw new InvalidEmailException(path, problem);
        }
    }

    /** PostgreSQL's jsonb cannot hold U+0000 ({@link PgValues}), and a lone surrogate is not Unicode; null if fine. */
    private static String textProblem(String s) {
        int nul = PgValues.nulIndex(s);
        if (nul >= 0) {
            return "contains U+0000 at index " + nul;
        }
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            if (Character.isHighSurrogate(c) && i + 1 < s.length() && Character.isLowSurrogate(s.charAt(i + 1))) {
                i++;
            } else if (Character.isSurrogate(c)) {
                return "contains an unpaired surrogate at index " + i;
            }
        }
        return null;
    }
}
