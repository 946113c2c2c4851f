package io.mailroom.db.sql;

import org.jooq.Condition;
import org.jooq.Field;
import org.jooq.JSONB;
import org.jooq.impl.DSL;
import org.jooq.impl.SQLDataType;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Objects;
import java.util.Set;
import java.util.regex.Pattern;

/**
 * What an erasure takes out of free text, the same way in every module that owns a column of it: an
 * address (in any case: {@code Ann@Example.com} too) becomes the erasure's {@link #marker()}, and
 * each display name the address was written with becomes {@link #NAME_MARK}. Applied in SQL
 * ({@link #text}, {@link #json}) to a module's own columns, and in Java ({@link #apply}) to a reason a
 * person typed.
 *
 * @param address the normalized address (lower case)
 * @param names   display names to take out wherever the address is taken out (blank ones are ignored)
 * @param marker  what the address becomes, e.g. {@code erased-3f9a1c2b5d@erased.invalid}
 */
public record Redaction(String address, List<String> names, String marker) {

    /** What a display name becomes. */
    public static final String NAME_MARK = "(erased)";
    /** The domain of every marker: reserved (RFC 2606), so nothing can ever be delivered to one. */
    public static final String MARKER_DOMAIN = "erased.invalid";
    private static final Pattern MARKER = Pattern.compile("^erased-[0-9a-f]{6,32}@erased\\.invalid$");

    public Redaction {
        Objects.requireNonNull(address, "address");
        if (address.isBlank() || !address.equals(address.toLowerCase(Locale.ROOT)) || address.indexOf('@') < 1) {
            throw new IllegalArgumentException("address must be a normalized (lower-case) address");
        }
        if (marker == null || !MARKER.matcher(marker).matches()) {
            throw new IllegalArgumentException("marker must look like erased-<hex>@" + MARKER_DOMAIN + ", got " + marker);
        }
        Set<String> kept = new LinkedHashSet<>();
        for (String n : names == null ? List.<String>of() : names) {
            // a name of one letter would take letters out of every word
            if (n != null && n.strip().length() >= 2) {
                kept.add(n.strip());
            }
        }
        // longer names first: "Ann Lee" before "Ann"
        names = kept.stream().sorted(Comparator.comparingInt(String::length).reversed()).toList();
    }

    /** The marker of an erasure named by {@code id} (hex). */
    public static String marker(String id) {
        return "erased-" + id + "@" + MARKER_DOMAIN;
    }

    /** Whether {@code address} is an erasure's marker. */
    public static boolean isMarker(String address) {
        return address != null && MARKER.matcher(address).matches();
    }

    /** A copy that also takes out {@code more} names. */
    public Redaction withNames(Iterable<String> more) {
        List<String> all = new ArrayList<>(names);
        more.forEach(all::add);
        return new Redaction(address, all, marker);
    }

    /** {@code text} with the address and the names taken out, in SQL; null stays null. */
    public Field<String> text(Field<String> text) {
        Field<String> out = replace(text, address, marker);
        for (String name : names) {
            out = replace(out, name, NAME_MARK);
        }
        return out;
    }

    /** As {@link #text(Field)}, cut to {@code maxLength} characters (a column's check): a marker is longer than most addresses. */
    public Field<String> text(Field<String> text, int maxLength) {
        return DSL.left(text(text), maxLength);
    }

    /**
     * A JSON value with the address and the names taken out of its text (keys and values alike), in
     * SQL; a name is matched as JSON writes it (quotes and backslashes escaped).
     */
    public Field<JSONB> json(Field<JSONB> json) {
        Field<String> out = replace(json.cast(SQLDataType.VARCHAR), address, marker);
        for (String name : names) {
            out = replace(out, jsonEscaped(name), jsonEscaped(NAME_MARK));
        }
        return out.cast(SQLDataType.JSONB);
    }

    /** Whether {@code text} holds the address, in any case (for a column that is read anyway, not as an index search). */
    public Condition mentions(Field<String> text) {
        return text.likeIgnoreCase("%" + likeEscaped(address) + "%", '\\');
    }

    /** {@code text} with the address and the names taken out, in Java, as {@link #text} does in SQL. */
    public String apply(String text) {
        if (text == null) {
            return null;
        }
        String out = Pattern.compile(Pattern.quote(address), Pattern.CASE_INSENSITIVE | Pattern.UNICODE_CASE)
                .matcher(text).replaceAll(java.util.regex.Matcher.quoteReplacement(marker));
        for (String name : names) {
            out = Pattern.compile(Pattern.quote(name), Pattern.CASE_INSENSITIVE | Pattern.UNICODE_CASE)
                    .matcher(out).replaceAll(java.util.regex.Matcher.quoteReplacement(NAME_MARK));
        }
        return out;
    }

    private static Field<String> replace(Field<String> text, String literal, String with) {
        return DSL.field("regexp_replace({0}, {1}, {2}, 'gi')", SQLDataType.VARCHAR, text, DSL.val(regexEscaped(literal)),
                DSL.val(with.replace("\\", "\\\\").replace("&", "\\&")));
    }

    /**
     * {@code literal} as a PostgreSQL regular expression matching itself: every ASCII character that
     * is not a letter or a digit is escaped (a backslash before a letter or digit would be an escape
     * of its own, and other characters are never special).
     */
    static String regexEscaped(String literal) {
        StringBuilder b = new StringBuilder(literal.length() * 2);
        literal.codePoints().forEach(c -> {
            if (c < 128 && !Character.isLetterOrDigit(c)) {
                b.append('\\');
            }
            b.appendCodePoint(c);
        });
        return b.toString();
    }

    static String jsonEscaped(String s) {
        StringBuilder b = new StringBuilder(s.length() + 8);
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            switch (c) {
                case '"' -> b.append("\\\"");
                case '\\' -> b.append("\\\\");
                default -> {
                    if (c < 0x20) {
                        b.append(String.format("\\u%04x", (int) c));
                    } else {
                        b.append(c);
                    }
                }
            }
        }
        return b.toString();
    }

    private static String likeEscaped(String s) {
        return s.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_");
    }

    @Override
    public String toString() {
        // the address is what is being erased: it does not go into a log line through this
        return "Redaction[marker=" + marker + ", names=" + names.size() + "]";
    }
}
