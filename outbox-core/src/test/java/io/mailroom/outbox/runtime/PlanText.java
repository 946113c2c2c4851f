package io.mailroom.outbox.runtime;

import java.time.Instant;
import java.util.Arrays;

import static org.assertj.core.api.Assertions.assertThat;

/** Helpers of the tests that PREPARE a statement and read its plan (EXPLAIN ... EXECUTE). */
final class PlanText {

    private PlanText() {
    }

    /** {@code ?} placeholders as {@code $1, $2, ...}, for PREPARE. */
    static String numbered(String sql) {
        StringBuilder numbered = new StringBuilder();
        int n = 0;
        for (char ch : sql.toCharArray()) {
            if (ch == '?') {
                numbered.append('$').append(++n);
            } else {
                numbered.append(ch);
            }
        }
        return numbered.toString();
    }

    /** A bind value as an SQL literal, for EXECUTE's arguments. */
    static String literal(Object value) {
        return switch (value) {
            case null -> "NULL";
            case String s -> "'" + s.replace("'", "''") + "'";
            case String[] a -> "ARRAY[" + String.join(", ", Arrays.stream(a).map(PlanText::literal).toList())
                    + "]::varchar[]";
            case Instant t -> "'" + t + "'::timestamptz";
            default -> value.toString();
        };
    }

    /** The first value of {@code key} in an EXPLAIN's JSON: that node's, whose buffers include its children's. */
    static long firstNumber(String json, String key) {
        int at = json.indexOf(key);
        assertThat(at).as("%s in %s", key, json).isNotNegative();
        int from = at + key.length();
        int to = from;
        while (Character.isDigit(json.charAt(to))) {
            to++;
        }
        return Long.parseLong(json.substring(from, to));
    }
}
