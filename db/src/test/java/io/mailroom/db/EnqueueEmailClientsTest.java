package io.mailroom.db;

import io.mailroom.testing.PostgresExtension;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import java.io.IOException;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * {@code enqueue_email} called as a business in another language calls it: the committed examples
 * {@code examples/sql-enqueue/psql/enqueue.sql} and {@code invoice.sql} (several recipients, tags, a PDF
 * and an inline logo; run by {@code psql}) and
 * {@code examples/sql-enqueue/node/enqueue.js} (Node with the {@code pg} package, installed by
 * {@code npm ci} into {@code target/}), each in a transaction that commits (a pending message a
 * dispatcher claims) and one that rolls back (nothing), and a refusal the client reads by SQLSTATE
 * and column. Skipped, saying why, only where {@code psql} or {@code node}/{@code npm} is not installed.
 */
class EnqueueEmailClientsTest {

    @RegisterExtension
    static final PostgresExtension pg = new PostgresExtension();

    private static final Path EXAMPLES = Path.of("..", "examples", "sql-enqueue").toAbsolutePath().normalize();
    private static Path nodeDir;

    record Run(int exit, String output) {
    }

    @Test
    void psql_aCommittedTransactionLeavesAPendingEmailADispatcherClaims() throws Exception {
        requireTool("psql", "--version");
        Run run = psql("-v", "user_id=101", "-v", "finish=COMMIT");
        assertThat(run.exit()).as(run.output()).isZero();
        assertPending("email-user-101-welcome", "101");
    }

    @Test
    void psql_aRolledBackTransactionLeavesNothing() throws Exception {
        requireTool("psql", "--version");
        Run run = psql("-v", "user_id=102", "-v", "finish=ROLLBACK");
        assertThat(run.exit()).as(run.output()).isZero();
        assertThat(run.output()).as("the call returned an id before the rollback").contains("message_id");
        assertNothing("email-user-102-welcome");
    }

    @Test
    void psql_aRefusalCarriesTheSqlStateAndTheField() throws Exception {
        requireTool("psql", "--version");
        Run run = psql("-v", "user_id=103", "-v", "finish=COMMIT", "-v", "to_address=an@example");
        assertThat(run.exit()).as(run.output()).isEqualTo(3); // psql: ON_ERROR_STOP in a script
        assertThat(run.output()).contains("ERROR:  22023: to.address must have a domain with at least two labels")
                .contains("COLUMN NAME:  to.address");
        assertNothing("email-user-103-welcome");
    }

    @Test
    void psql_anInvoiceToSeveralRecipientsWithTagsAPdfAndAnInlineLogo() throws Exception {
        requireTool("psql", "--version");
        Run run = psqlScript("invoice.sql", "-v", "invoice_id=301", "-v", "finish=COMMIT");
        assertThat(run.exit()).as(run.output()).isZero();
        var row = pg.dsl().fetchOne("""
                SELECT m.status, m.payload->>'v' AS v, m.payload#>>'{to,1,address}' AS to2, m.payload#>>'{cc,0,address}' AS cc,
                       m.payload#>>'{bcc,0,address}' AS bcc, m.payload#>>'{tags,invoice}' AS tag,
                       m.payload#>>'{attachments,0,filename}' AS pdf, m.payload#>>'{attachments,1,contentId}' AS cid,
                       m.payload#>>'{attachments,0,sha256}' AS pdf_sha256
                FROM outbox_message m WHERE m.idempotency_key = 'email-invoice-301'""");
        assertThat(row).as(run.output()).isNotNull();
        byte[] pdf = "%PDF-1.4\n% invoice 301\n%%EOF".getBytes(StandardCharsets.UTF_8);
        assertThat(row.intoMap()).containsAllEntriesOf(Map.of("status", "pending", "v", "2", "to2", "binh@example.com",
                "cc", "billing@corp.example", "bcc", "audit@shop.example", "tag", "301", "pdf", "Hóa đơn 301.pdf", "cid", "logo",
                "pdf_sha256", java.util.HexFormat.of().formatHex(java.security.MessageDigest.getInstance("SHA-256").digest(pdf))));
        var files = pg.dsl().fetch("""
                SELECT r.position, r.filename, r.content_type, r.content_id, c.content
                FROM email_attachment_ref r JOIN email_attachment_content c ON c.sha256 = r.sha256
                WHERE r.idempotency_key = 'email-invoice-301' ORDER BY r.position""");
        assertThat(files).hasSize(2);
        assertThat(files.get(0).get("content", byte[].class)).isEqualTo(pdf);
        assertThat(files.get(1).get("content", byte[].class)).isEqualTo(java.util.HexFormat.of().parseHex("89504e470d0a1a0a"));
        assertThat(files.get(1).get("content_id")).isEqualTo("logo");
        assertThat(pg.dsl().fetch("SELECT term FROM outbox_effect_term WHERE idempotency_key = 'email-invoice-301' ORDER BY term")
                .getValues(0, String.class)).contains("to:an@example.com", "to:binh@example.com", "to:billing@corp.example",
                "to:audit@shop.example", "tag:category=invoice", "tag:invoice=301");
    }

    @Test
    void psql_anInvoiceRolledBackOrRefusedLeavesNoEmailAndNoAttachment() throws Exception {
        requireTool("psql", "--version");
        Run rolledBack = psqlScript("invoice.sql", "-v", "invoice_id=302", "-v", "finish=ROLLBACK");
        assertThat(rolledBack.exit()).as(rolledBack.output()).isZero();
        assertNothing("email-invoice-302");
        Run refused = psqlScript("invoice.sql", "-v", "invoice_id=303", "-v", "finish=COMMIT", "-v", "cc_address=billing@corp");
        assertThat(refused.exit()).as(refused.output()).isEqualTo(3);
        assertThat(refused.output()).contains("ERROR:  22023: cc[0].address must have a domain with at least two labels")
                .contains("COLUMN NAME:  cc[0].address");
        assertNothing("email-invoice-303");
        assertThat(pg.dsl().fetchCount(pg.dsl().selectOne().from("email_attachment_ref")
                .where("idempotency_key IN ('email-invoice-302', 'email-invoice-303')"))).isZero();
    }

    @Test
    void node_aCommittedTransactionLeavesAPendingEmailADispatcherClaims() throws Exception {
        Run run = node("commit", "201", "an@example.com");
        assertThat(run.exit()).as(run.output()).isZero();
        assertThat(run.output()).contains("\"committed\":true");
        assertPending("email-user-201-welcome", "201");
    }

    @Test
    void node_aRolledBackTransactionLeavesNothing() throws Exception {
        Run run = node("rollback", "202", "an@example.com");
        assertThat(run.exit()).as(run.output()).isZero();
        assertThat(run.output()).contains("\"committed\":false");
        assertNothing("email-user-202-welcome");
    }

    @Test
    void node_readsTheRefusedFieldFromTheErrorAndADuplicateFromItsConstraint() throws Exception {
        Run refused = node("commit", "203", "an@exa_mple.com");
        assertThat(refused.exit()).as(refused.output()).isEqualTo(2);
        assertThat(refused.output()).contains("\"refused\":\"to.address\"");
        assertNothing("email-user-203-welcome");

        assertThat(node("commit", "204", "an@example.com").exit()).isZero();
        Run again = node("commit", "204", "an@example.com");
        assertThat(again.exit()).as(again.output()).isEqualTo(3);
        assertThat(again.output()).contains("\"duplicate\":\"email-user-204-welcome\"");
        assertThat(count("email-user-204-welcome")).isEqualTo(1);
    }

    /** The row a dispatcher's claim picks up (pending, due, nothing to wait for) and its effect. */
    private static void assertPending(String key, String userId) {
        var row = pg.dsl().fetchOne("""
                SELECT m.topic, m.aggregate_type, m.aggregate_id, m.ordering_key, m.status, m.available_at <= now() AS due,
                       m.waiting_for, m.payload->>'template' AS template, m.payload->>'locale' AS locale,
                       m.payload#>>'{to,address}' AS address, m.payload#>>'{data,user,id}' AS data_id, e.status AS effect
                FROM outbox_message m JOIN outbox_effect e ON e.message_id = m.id
                WHERE m.idempotency_key = ?""", key);
        assertThat(row).as("the message of %s", key).isNotNull();
        assertThat(row.intoMap()).containsAllEntriesOf(Map.of("topic", "email.welcome", "aggregate_type", "user",
                "aggregate_id", userId, "ordering_key", "user-" + userId, "status", "pending", "due", true,
                "template", "welcome", "locale", "vi", "address", "an@example.com", "effect", "pending"));
        assertThat(row.get("data_id")).isEqualTo(userId);
        assertThat(row.get("waiting_for")).isNull();
    }

    private static void assertNothing(String key) {
        assertThat(count(key)).as("messages of %s", key).isZero();
        assertThat(pg.dsl().fetchCount(pg.dsl().selectOne().from("outbox_effect").where("idempotency_key = ?", key)))
                .as("effects of %s", key).isZero();
    }

    private static int count(String key) {
        return pg.dsl().fetchCount(pg.dsl().selectOne().from("outbox_message").where("idempotency_key = ?", key));
    }

    private static Run psql(String... variables) throws Exception {
        return psqlScript("enqueue.sql", variables);
    }

    private static Run psqlScript(String script, String... variables) throws Exception {
        List<String> command = new ArrayList<>(List.of("psql", "-X", "-q"));
        command.addAll(List.of(variables));
        command.addAll(List.of("-f", EXAMPLES.resolve("psql").resolve(script).toString()));
        return run(command, EXAMPLES);
    }

    private static Run node(String... args) throws Exception {
        Path dir = installedNodeExample();
        List<String> command = new ArrayList<>(List.of("node", "enqueue.js"));
        command.addAll(List.of(args));
        return run(command, dir);
    }

    /** The Node example copied into target/ with its locked dependencies installed there, once per run. */
    private static synchronized Path installedNodeExample() throws Exception {
        requireTool("node", "--version");
        requireTool("npm", "--version");
        if (nodeDir == null) {
            Path dir = Path.of("target", "sql-enqueue-node").toAbsolutePath();
            Files.createDirectories(dir);
            for (String file : List.of("package.json", "package-lock.json", "enqueue.js")) {
                Files.copy(EXAMPLES.resolve("node").resolve(file), dir.resolve(file), StandardCopyOption.REPLACE_EXISTING);
            }
            Run install = run(List.of("npm", "ci", "--no-audit", "--no-fund"), dir);
            assertThat(install.exit()).as("npm ci in %s: %s", dir, install.output()).isZero();
            nodeDir = dir;
        }
        return nodeDir;
    }

    private static void requireTool(String tool, String versionFlag) {
        String why;
        try {
            Process p = new ProcessBuilder(tool, versionFlag).redirectErrorStream(true).start();
            p.getInputStream().readAllBytes();
            why = p.waitFor(30, TimeUnit.SECONDS) && p.exitValue() == 0 ? null : tool + " " + versionFlag + " failed";
        } catch (IOException e) {
            why = tool + " is not installed (" + e.getMessage() + ")";
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            why = "interrupted";
        }
        String reason = "skipped: this test runs " + tool + " as a client of enqueue_email, and " + why;
        Assumptions.assumeTrue(why == null, reason);
    }

    /** Runs a client against the test database, connected by libpq's (and node-postgres') PG* variables. */
    private static Run run(List<String> command, Path dir) throws Exception {
        URI uri = URI.create(pg.database().jdbcUrlWithCredentials().substring("jdbc:".length()));
        Map<String, String> query = new java.util.HashMap<>();
        if (uri.getRawQuery() != null) {
            for (String pair : uri.getRawQuery().split("&")) {
                int eq = pair.indexOf('=');
                if (eq > 0) {
                    query.put(pair.substring(0, eq), java.net.URLDecoder.decode(pair.substring(eq + 1), StandardCharsets.UTF_8));
                }
            }
        }
        String schema = pg.dsl().resultQuery(
                "SELECT n.nspname FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace WHERE p.proname = 'enqueue_email'")
                .fetchSingle(0, String.class);
        ProcessBuilder builder = new ProcessBuilder(command).directory(dir.toFile()).redirectErrorStream(true);
        Map<String, String> env = builder.environment();
        env.keySet().removeIf(k -> k.startsWith("PG") || k.equals("DATABASE_URL"));
        env.put("PGHOST", uri.getHost());
        env.put("PGPORT", String.valueOf(uri.getPort() < 0 ? 5432 : uri.getPort()));
        env.put("PGDATABASE", uri.getPath().substring(1));
        if (query.containsKey("user")) {
            env.put("PGUSER", query.get("user"));
        }
        if (query.containsKey("password")) {
            env.put("PGPASSWORD", query.get("password"));
        }
        env.put("MAILROOM_SCHEMA", schema);
        Process p = builder.start();
        p.getOutputStream().close();
        byte[] out = p.getInputStream().readAllBytes();
        assertThat(p.waitFor(300, TimeUnit.SECONDS)).as("%s finished", command).isTrue();
        return new Run(p.exitValue(), new String(out, StandardCharsets.UTF_8));
    }
}
