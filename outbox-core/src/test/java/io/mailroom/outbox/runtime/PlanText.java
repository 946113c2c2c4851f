package io.mailroom.outbox.runtime;

import org.jooq.Query;
import org.jooq.conf.ParamType;

import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

/** Helpers of the tests that PREPARE a statement and read its plan (EXPLAIN ... EXECUTE). */
final class PlanText {

    private PlanText() {
    }

    /**
     * {@code query}'s generic plan as the dispatchers keep it, EXPLAIN (ANALYZE, BUFFERS, FORMAT JSON),
     * executed on {@code c} in a transaction that first runs {@code settings} and is rolled back.
     */
    static String genericPlanJson(Connection c, Query query, List<String> settings) throws SQLException {
        c.setAutoCommit(false);
        try (Statement st = c.createStatement()) {
            st.execute("SET LOCAL plan_cache_mode = force_generic_plan");
            for (String setting : settings) {
                st.execute(setting);
            }
            st.execute("PREPARE explained AS " + numbered(query.getSQL(ParamType.INDEXED)));
            List<String> args = new ArrayList<>();
            for (Object b : query.getBindValues()) {
                args.add(literal(b));
            }
            try (ResultSet rs = st.executeQuery("EXPLAIN (ANALYZE, BUFFERS, FORMAT JSON) EXECUTE explained("
                    + String.join(", ", args) + ")")) {
                rs.next();
                return rs.getString(1);
            }
        } finally {
            c.rollback();
        }
    }

    /** Shared buffers (hit and read) of a claim's picking part: its LIMIT node and what is under it. */
    static long pickBuffers(String planJson) {
        String pick = planJson.substring(planJson.indexOf("\"Node Type\": \"Limit\""));
        return firstNumber(pick, "\"Shared Hit Blocks\": ") + firstNumber(pick, "\"Shared Read Blocks\": ");
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
