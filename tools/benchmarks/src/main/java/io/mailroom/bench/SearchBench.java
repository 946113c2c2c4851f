package io.mailroom.bench;

import io.mailroom.db.Schema;
import io.mailroom.outbox.admin.EffectSearch;
import org.jooq.DSLContext;
import org.jooq.Query;
import org.jooq.SQLDialect;
import org.jooq.impl.DSL;
import org.postgresql.ds.PGSimpleDataSource;

import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.Statement;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Support's searches over a history of N emails (issue 26): builds the database once (effects,
 * their search terms, attempts-free; a realistic spread of recipients, domains, topics, statuses
 * and errors over 90 days), then runs each search through outbox-core's own query
 * ({@link EffectSearch#query}) under EXPLAIN (ANALYZE, BUFFERS), five times, and prints the
 * median time, the indexes used and whether any sequential scan of the history was needed.
 *
 * <pre>scripts/bench-search.sh --emails 1000000   # builds mailroom_search_1000000 once, keeps it</pre>
 */
public final class SearchBench {

    private static final Pattern INDEX = Pattern.compile("(Index Only Scan|Index Scan|Bitmap Index Scan)(?: Backward)? (?:using|on) (\\S+)");
    private static final Pattern TIME = Pattern.compile("Execution Time: ([0-9.]+) ms");

    record Case(String name, EffectSearch.Criteria criteria) {
    }

    public static void main(String[] args) throws Exception {
        long emails = 1_000_000;
        String admin = System.getenv().getOrDefault("MAILROOM_TEST_DB_URL", "jdbc:postgresql://127.0.0.1:5432/postgres?user=postgres");
        boolean rebuild = false;
        for (int i = 0; i < args.length; i++) {
            switch (args[i]) {
                case "--emails" -> emails = Long.parseLong(args[++i].replace("_", ""));
                case "--admin-url" -> admin = args[++i];
                case "--rebuild" -> rebuild = true;
                default -> throw new IllegalArgumentException("unknown option " + args[i] + " (--emails N, --admin-url URL, --rebuild)");
            }
        }
        String db = "mailroom_search_" + emails;
        String url = admin.replaceFirst("/[^/?]+(\\?|$)", "/" + db + "$1");
        try (Connection c = DriverManager.getConnection(admin); Statement st = c.createStatement()) {
            ResultSet rs = st.executeQuery("SELECT 1 FROM pg_database WHERE datname = '" + db + "'");
            boolean exists = rs.next();
            if (exists && rebuild) {
                st.execute("DROP DATABASE " + db + " WITH (FORCE)");
                exists = false;
            }
            if (!exists) {
                st.execute("CREATE DATABASE " + db);
            }
        }
        PGSimpleDataSource ds = new PGSimpleDataSource();
        ds.setUrl(url);
        Schema.migrate(ds);
        DSLContext dsl = DSL.using(ds, SQLDialect.POSTGRES);
        long have = dsl.fetchSingle("SELECT count(*) FROM mailroom.outbox_effect").get(0, Long.class);
        if (have != emails) {
            build(url, emails);
        }
        report(dsl, emails);
    }

    /** The history: set-based inserts, then ANALYZE. */
    static void build(String url, long emails) throws Exception {
        Instant start = Instant.now();
        try (Connection c = DriverManager.getConnection(url); Statement st = c.createStatement()) {
            st.execute("SET maintenance_work_mem = '512MB'");
            st.execute("TRUNCATE mailroom.outbox_effect, mailroom.outbox_effect_term");
            // 2 M recipients (one in 20 emails is to a heavy sender's own few addresses), 30 % at gmail.com,
            // 12 % yahoo.com, 8 % outlook.com, the rest over 50,000 domains; ann@example.com has 25 emails
            st.execute("""
                    CREATE TEMP TABLE seed AS
                    SELECT i,
                           CASE WHEN i % 400000 = 7 THEN 'ann@example.com'
                                ELSE 'user' || ((i * 7919) % 2000000) || '@' ||
                                     CASE WHEN (i * 7919) % 100 < 30 THEN 'gmail.com'
                                          WHEN (i * 7919) % 100 < 42 THEN 'yahoo.com'
                                          WHEN (i * 7919) % 100 < 50 THEN 'outlook.com'
                                          ELSE 'd' || ((i * 104729) % 50000) || '.example.org' END END AS address,
                           (ARRAY['order_confirmation','order_shipped','password_reset','welcome','invoice','receipt',
                                  'reminder','newsletter_digest','account_locked','payment_failed','refund','survey'])[1 + i % 12] AS template,
                           CASE WHEN i % 1000 < 970 THEN 'done' WHEN i % 1000 < 990 THEN 'failed' WHEN i % 1000 < 995 THEN 'review'
                                WHEN i % 1000 < 997 THEN 'cancelled' WHEN i % 1000 < 999 THEN 'closed' ELSE 'pending' END AS status,
                           now() - make_interval(secs => ({N} - i) * (90 * 86400.0 / {N})) AS created_at
                    FROM generate_series(1::bigint, {N}) AS i""".replace("{N}", Long.toString(emails)));
            st.execute("""
                    INSERT INTO mailroom.outbox_effect (idempotency_key, topic, aggregate_type, aggregate_id, status, attempts,
                        max_attempts, last_error, message_id, message_created_at, created_at, updated_at, finished_at)
                    SELECT 'email-' || CASE WHEN i % 3 = 0 THEN 'user-' ELSE 'order-' END || i,
                           'email.' || template, CASE WHEN i % 3 = 0 THEN 'user' ELSE 'order' END, (i / 2)::text,
                           status, 1, 10,
                           CASE status WHEN 'failed' THEN (ARRAY['550 5.1.1 <' || address || '>: Recipient address rejected: mailbox unavailable',
                                                                 '554 5.7.1 message refused as spam',
                                                                 'HTTP 422: invalid recipient', 'connection timed out after 30 s'])[1 + i % 4]
                                       WHEN 'review' THEN 'timeout after DATA: the outcome is unknown' END,
                           i, created_at, created_at, created_at + interval '2 seconds',
                           CASE WHEN status = 'pending' THEN NULL ELSE created_at + interval '2 seconds' END
                    FROM seed""");
            st.execute("""
                    INSERT INTO mailroom.outbox_effect_term (idempotency_key, term, created_at)
                    SELECT 'email-' || CASE WHEN i % 3 = 0 THEN 'user-' ELSE 'order-' END || i, t.term, created_at
                    FROM seed CROSS JOIN LATERAL (VALUES ('to:' || address), ('domain:' || split_part(address, '@', 2)),
                                                         ('template:' || template)) AS t(term)""");
            st.execute("ANALYZE mailroom.outbox_effect");
            st.execute("ANALYZE mailroom.outbox_effect_term");
        }
        System.out.printf("built %,d emails in %s%n", emails, Duration.between(start, Instant.now()));
    }

    static void report(DSLContext dsl, long emails) {
        Instant now = Instant.now();
        Instant day = now.minus(Duration.ofDays(1));
        Instant week = now.minus(Duration.ofDays(7));
        String someone = dsl.fetchSingle("SELECT term FROM mailroom.outbox_effect_term WHERE term LIKE 'to:user1234%' LIMIT 1")
                .get(0, String.class);
        List<Case> cases = List.of(
                new Case("recipient (ann@example.com, 25 emails)", c(List.of("to:ann@example.com"), null, null, null, null, null, null)),
                new Case("recipient (" + someone.substring(3) + ")", c(List.of(someone), null, null, null, null, null, null)),
                new Case("recipient + status failed", c(List.of("to:ann@example.com"), "failed", null, null, null, null, null)),
                new Case("domain gmail.com (30 % of all)", c(List.of("domain:gmail.com"), null, null, null, null, null, null)),
                new Case("domain d4242.example.org (rare)", c(List.of("domain:d4242.example.org"), null, null, null, null, null, null)),
                new Case("domain gmail.com + status failed", c(List.of("domain:gmail.com"), "failed", null, null, null, null, null)),
                new Case("domain gmail.com + status review, last 7 days", c(List.of("domain:gmail.com"), "review", null, null, null, week, null)),
                new Case("domain gmail.com + status review (all time)", c(List.of("domain:gmail.com"), "review", null, null, null, null, null)),
                new Case("template password_reset, last 24 h", c(List.of("template:password_reset"), null, null, null, null, day, null)),
                new Case("topic email.invoice + status failed", c(List.of(), "failed", "email.invoice", null, null, null, null)),
                new Case("key exact", c(List.of(), null, null, "email-order-" + (emails / 2 + 1), null, null, null)),
                new Case("key prefix email-order-12345", c(List.of(), null, null, null, "email-order-12345", null, null)),
                new Case("error words 'mailbox unavailable', last 7 days", c(List.of(), null, null, null, null, week, "mailbox unavailable")),
                new Case("status failed (all time)", c(List.of(), "failed", null, null, null, null, null)),
                new Case("about user 4242", new EffectSearch.Criteria(List.of(), null, null, "user", "4242", null, null, null, null,
                        null, null, null, null, 51)),
                new Case("no filter (newest page)", c(List.of(), null, null, null, null, null, null)));
        Map<String, String[]> rows = new LinkedHashMap<>();
        System.out.printf("%n%,d emails · a page of 50 (+1), median of 5 runs%n", emails);
        System.out.printf("%-50s %10s  %-8s %s%n", "search", "ms", "seq scan", "indexes");
        for (Case k : cases) {
            Query q = EffectSearch.query(dsl, k.criteria());
            String sql = dsl.renderInlined(q);
            List<Double> times = new ArrayList<>();
            String plan = null;
            for (int run = 0; run < 5; run++) {
                plan = String.join("\n", dsl.fetch("EXPLAIN (ANALYZE, BUFFERS) " + sql).getValues(0, String.class));
                Matcher m = TIME.matcher(plan);
                if (m.find()) {
                    times.add(Double.parseDouble(m.group(1)));
                }
            }
            times.sort(Double::compare);
            double median = times.get(times.size() / 2);
            boolean seq = plan.contains("Seq Scan on outbox_effect") || plan.contains("Seq Scan on outbox_effect_term");
            List<String> indexes = new ArrayList<>();
            Matcher m = INDEX.matcher(plan);
            while (m.find()) {
                if (!indexes.contains(m.group(2))) {
                    indexes.add(m.group(2));
                }
            }
            System.out.printf("%-50s %10.2f  %-8s %s%n", k.name(), median, seq ? "YES" : "no", String.join(", ", indexes));
            rows.put(k.name(), new String[]{String.format("%.2f", median), seq ? "yes" : "no", String.join(", ", indexes)});
            if (System.getenv("SEARCH_BENCH_PLANS") != null) {
                System.out.println(plan);
            }
        }
        // what a bulk action counts before it asks for confirmation
        Instant t0 = Instant.now();
        long failedGmail = EffectSearch.count(dsl, c(List.of("domain:gmail.com"), "failed", null, null, null, null, null));
        System.out.printf("%-50s %10d  (count: %d ms)%n", "bulk count: domain gmail.com + status failed", failedGmail,
                Duration.between(t0, Instant.now()).toMillis());
        System.out.printf("history size: effects %s, terms %s (tables + indexes)%n",
                dsl.fetchSingle("SELECT pg_size_pretty(pg_total_relation_size('mailroom.outbox_effect'))").get(0),
                dsl.fetchSingle("SELECT pg_size_pretty(pg_total_relation_size('mailroom.outbox_effect_term'))").get(0));
    }

    private static EffectSearch.Criteria c(List<String> terms, String status, String topic, String key, String prefix,
                                           Instant since, String error) {
        return new EffectSearch.Criteria(terms, status, topic, null, null, key, prefix, null, error, since, null, null, null, 51);
    }
}
