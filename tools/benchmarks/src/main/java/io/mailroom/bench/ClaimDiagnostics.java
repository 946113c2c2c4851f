package io.mailroom.bench;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;

import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;

/**
 * Where the database's time per batch goes, for the bottleneck notes: the runtime's claim and
 * completion statements ({@link ReferenceSql}) prepared server-side the way the JDBC driver prepares
 * them, executed a few times so the plan cache settles, then {@code EXPLAIN (ANALYZE)} of further
 * executions: planning time, execution time, and whether PostgreSQL re-plans each execution
 * (custom plans, from {@code pg_prepared_statements}). Runs inside a transaction that is rolled
 * back, on a freshly loaded database.
 */
final class ClaimDiagnostics {

    private static final ObjectMapper JSON = new ObjectMapper();
    private static final int SETTLE = 8;
    private static final int SAMPLES = 7;

    private ClaimDiagnostics() {
    }

    static void run(BenchDb db, int batch, Report.Section section) throws SQLException {
        try (Connection c = db.connect(); Statement st = c.createStatement()) {
            st.execute("PREPARE bench_claim AS " + dollars(ReferenceSql.claim(batch)));
            st.execute("PREPARE bench_finish AS " + dollars(ReferenceSql.FINISH));
            c.setAutoCommit(false);
            try {
                String claimArgs = "('" + QueueLoader.TOPIC + "', 'bench-diagnostics', 'bench-diagnostics-1', 60)";
                for (int i = 0; i < SETTLE; i++) {
                    finish(st, claimRows(st, "EXECUTE bench_claim" + claimArgs), false);
                }
                double[] claimPlan = new double[SAMPLES];
                double[] claimExec = new double[SAMPLES];
                double[] finishPlan = new double[SAMPLES];
                double[] finishExec = new double[SAMPLES];
                for (int i = 0; i < SAMPLES; i++) {
                    JsonNode plan = explain(st, "EXECUTE bench_claim" + claimArgs);
                    claimPlan[i] = plan.path("Planning Time").asDouble();
                    claimExec[i] = plan.path("Execution Time").asDouble();
                    // the EXPLAINed claim claimed rows too; claim the next batch for the finish to use
                    JsonNode fin = finish(st, claimRows(st, "EXECUTE bench_claim" + claimArgs), true);
                    finishPlan[i] = fin.path("Planning Time").asDouble();
                    finishExec[i] = fin.path("Execution Time").asDouble();
                }
                Map<String, long[]> plans = planCounts(st);
                add(section, "claim", batch, claimPlan, claimExec, plans.get("bench_claim"));
                add(section, "finish (message update)", batch, finishPlan, finishExec, plans.get("bench_finish"));
            } finally {
                c.rollback();
                c.setAutoCommit(true);
                st.execute("DEALLOCATE ALL");
            }
        }
    }

    private static void add(Report.Section section, String statement, int batch, double[] plan, double[] exec,
                            long[] genericCustom) {
        Map<String, Object> row = section.row();
        row.put("statement", statement);
        row.put("batch", batch);
        row.put("planning_ms", median(plan));
        row.put("execution_ms", median(exec));
        row.put("planning_share", median(plan) / (median(plan) + median(exec)));
        row.put("generic_plans", genericCustom == null ? null : genericCustom[0]);
        row.put("custom_plans", genericCustom == null ? null : genericCustom[1]);
        row.put("status", Report.OK);
    }

    /** Rows of a claim: id, created_at, claim_version. */
    private record Claimed(List<Long> ids, List<String> createdAts, List<Long> versions) {
    }

    private static Claimed claimRows(Statement st, String sql) throws SQLException {
        Claimed out = new Claimed(new ArrayList<>(), new ArrayList<>(), new ArrayList<>());
        try (ResultSet rs = st.executeQuery(sql)) {
            while (rs.next()) {
                out.ids().add(rs.getLong(1));
                out.createdAts().add(rs.getString(2));
                out.versions().add(rs.getLong(11));
            }
        }
        return out;
    }

    private static JsonNode finish(Statement st, Claimed claimed, boolean explain) throws SQLException {
        int k = claimed.ids().size();
        String args = "(" + array(claimed.ids()) + ", " + textArray(claimed.createdAts()) + ", " + array(claimed.versions())
                + ", " + textArray(java.util.Collections.nCopies(k, "done")) + ", '{" + String.join(",",
                java.util.Collections.nCopies(k, "NULL")) + "}', " + array(java.util.Collections.nCopies(k, 0L)) + ", '{"
                + String.join(",", java.util.Collections.nCopies(k, "NULL")) + "}')";
        if (explain) {
            return explain(st, "EXECUTE bench_finish" + args);
        }
        st.executeQuery("EXECUTE bench_finish" + args).close();
        return null;
    }

    private static JsonNode explain(Statement st, String execute) throws SQLException {
        try (ResultSet rs = st.executeQuery("EXPLAIN (ANALYZE, SUMMARY, FORMAT JSON) " + execute)) {
            rs.next();
            return JSON.readTree(rs.getString(1)).get(0);
        } catch (com.fasterxml.jackson.core.JsonProcessingException e) {
            throw new IllegalStateException("unreadable EXPLAIN output", e);
        }
    }

    private static Map<String, long[]> planCounts(Statement st) throws SQLException {
        Map<String, long[]> out = new java.util.HashMap<>();
        try (ResultSet rs = st.executeQuery("SELECT name, generic_plans, custom_plans FROM pg_prepared_statements")) {
            while (rs.next()) {
                out.put(rs.getString(1), new long[]{rs.getLong(2), rs.getLong(3)});
            }
        }
        return out;
    }

    /** JDBC {@code ?} placeholders to {@code $1..$n} (the texts have no other question marks). */
    static String dollars(String sql) {
        StringBuilder sb = new StringBuilder();
        int n = 0;
        for (char ch : sql.toCharArray()) {
            if (ch == '?') {
                sb.append('$').append(++n);
            } else {
                sb.append(ch);
            }
        }
        return sb.toString();
    }

    private static String array(List<Long> values) {
        return "'{" + String.join(",", values.stream().map(String::valueOf).toList()) + "}'";
    }

    private static String textArray(List<String> values) {
        return "'{" + String.join(",", values.stream().map(v -> '"' + v + '"').toList()) + "}'";
    }

    private static double median(double[] v) {
        double[] s = v.clone();
        Arrays.sort(s);
        return s[s.length / 2];
    }
}
