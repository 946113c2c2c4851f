package io.mailroom.support.cli;

import com.fasterxml.jackson.databind.JsonNode;
import io.mailroom.outbox.DbTimeouts;
import io.mailroom.outbox.InvalidSettingException;
import io.mailroom.outbox.SessionSettings;
import io.mailroom.outbox.runtime.DispatcherConfig;
import io.mailroom.outbox.EnqueuedMessage;
import io.mailroom.outbox.NewMessage;
import io.mailroom.outbox.OutboxEnqueuer;
import io.mailroom.outbox.runtime.Outcome;
import io.mailroom.support.SupportJson;
import io.mailroom.testing.PostgresExtension;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import picocli.CommandLine;

import java.io.PrintWriter;
import java.io.StringWriter;
import java.sql.Connection;
import java.sql.Statement;
import java.util.Map;
import java.util.function.Supplier;

import static io.mailroom.db.jooq.Tables.AUDIT_LOG;
import static org.assertj.core.api.Assertions.assertThat;

/** Every CLI command against a real test database, its output and exit code checked. */
class SupportCliTest {

    @RegisterExtension
    static final PostgresExtension pg = new PostgresExtension();

    private static final String TOPIC = "email.order_confirmation";

    record Run(int code, String out, String err) {
        JsonNode json() {
            try {
                return SupportJson.mapper().readTree(out);
            } catch (Exception e) {
                throw new IllegalStateException("not JSON: " + out, e);
            }
        }
    }

    private CliDatabase db() {
        return CliDatabase.direct(pg.database().jdbcUrlWithCredentials());
    }

    private Run run(String... args) {
        return run(db(), args);
    }

    private static Run run(CliDatabase db, String... args) {
        StringWriter out = new StringWriter();
        StringWriter err = new StringWriter();
        int code = SupportCli.run(db, new PrintWriter(out), new PrintWriter(err), args);
        return new Run(code, out.toString(), err.toString());
    }

    private static Run run(Supplier<CliDatabase> defaults, String... args) {
        StringWriter out = new StringWriter();
        StringWriter err = new StringWriter();
        CommandLine cmd = SupportCli.commandLine(new SupportCli(defaults));
        cmd.setOut(new PrintWriter(out));
        cmd.setErr(new PrintWriter(err));
        int code = cmd.execute(args);
        return new Run(code, out.toString(), err.toString());
    }

    @BeforeEach
    void clean() {
        pg.dsl().execute("TRUNCATE outbox_message, outbox_effect, outbox_effect_term, outbox_attempt, idempotency_record, audit_log, outbox_control");
    }

    private EnqueuedMessage enqueue(long orderId) {
        OutboxEnqueuer enqueuer = new OutboxEnqueuer(null, false);
        return pg.dsl().transactionResult(cfg -> enqueuer.enqueue(cfg.dsl(), NewMessage.of(TOPIC, "order", Long.toString(orderId),
                "email-order-" + orderId, "{\"customerEmail\":\"cli" + orderId + "@example.com\",\"customerName\":\"Cli User\"}")));
    }

    /** One dispatcher pass: keys listed as failing fail for good, the others are sent. */
    private int dispatch(String... failing) {
        java.util.Set<String> fail = java.util.Set.of(failing);
        DispatcherConfig config = DispatcherConfig.builder().workerId("cli-test-dispatcher").listenForNotifications(false).build();
        return new io.mailroom.outbox.runtime.Dispatcher(pg.dataSource(), config, Map.of(TOPIC, (m, ctx) -> fail.contains(m.idempotencyKey())
                ? new Outcome.Failed("550 5.1.1 mailbox unavailable", "{\"transport\":\"smtp\",\"replyCode\":550}", null)
                : new Outcome.Done("{\"transport\":\"smtp\",\"replyCode\":250,\"messageId\":\"<" + m.idempotencyKey() + "@test>\"}", null)))
                .runOnce();
    }

    @Test
    void emailsOfAnOrderPrintATableAndTheHistory() {
        enqueue(102);
        dispatch();
        Run r = run("emails", "--order", "102");
        assertThat(r.code()).as(r.err()).isZero();
        assertThat(r.out()).contains("Order 102: 1 email")
                .containsPattern("KEY\\s+KIND\\s+STATUS\\s+ATTEMPTS\\s+TO")
                .containsPattern("email-order-102\\s+Order confirmation\\s+sent\\s+1/10\\s+cli102@example.com")
                .contains("<email-order-102@test>")
                .contains("History of email-order-102 (sent):")
                .contains("attempt 1: Sent [provider 250]");
        Run json = run("--json", "emails", "--order", "102");
        assertThat(json.code()).isZero();
        assertThat(json.json().get("emails").get(0).get("status").asText()).isEqualTo("sent");
        Run none = run("emails", "--order", "103");
        assertThat(none.out()).contains("Order 103: no emails");
    }

    @Test
    void emailsByStatusWithTimeFiltersAndPaging() {
        enqueue(1);
        enqueue(2);
        enqueue(3);
        dispatch("email-order-1", "email-order-2");
        Run failed = run("emails", "--status", "failed", "--since", "1h");
        assertThat(failed.code()).isZero();
        assertThat(failed.out()).containsPattern("KEY\\s+ABOUT\\s+STATUS").contains("email-order-1").contains("email-order-2")
                .contains("550 5.1.1 mailbox unavailable").doesNotContain("email-order-3");
        Run page = run("emails", "--status", "failed", "--limit", "1", "--json");
        String cursor = page.json().get("nextCursor").asText();
        Run next = run("emails", "--status", "failed", "--limit", "1", "--cursor", cursor);
        assertThat(next.out()).doesNotContain("More:");
        assertThat(page.json().get("emails").get(0).get("key").asText() + next.out())
                .contains("email-order-1").contains("email-order-2");
        assertThat(run("emails", "--status", "review").out()).contains("No review emails.");
        assertThat(run("emails", "--status", "failed", "--since", "2099-01-01T00:00:00Z").out()).contains("No failed emails.");
    }

    @Test
    void retryResendConfirmAndCancelActAndAreAudited() {
        enqueue(5);
        enqueue(6);
        dispatch("email-order-5");
        Run retry = run("retry", "email-order-5", "--reason", "fixed", "--actor", "tess");
        assertThat(retry.code()).as(retry.err()).isZero();
        assertThat(retry.out()).contains("Retry of email-order-5 requested; it is now pending (waiting to send)");
        assertThat(dispatch()).isEqualTo(1);
        assertThat(run("email", "email-order-5").out()).contains("status:      sent").contains("attempts:    2 of 10")
                .contains("Retry requested by tess (operator): \"fixed\"");

        Run resend = run("resend", "email-order-6", "--reason", "customer asked", "--actor", "tess");
        assertThat(resend.code()).isZero();
        assertThat(resend.out()).contains("Resent email-order-6 as email-order-6-resend-1");
        Run resendJson = run("--json", "resend", "email-order-6", "--reason", "again");
        assertThat(resendJson.json().get("newKey").asText()).isEqualTo("email-order-6-resend-2");

        enqueue(7);
        pg.dsl().execute("UPDATE outbox_message SET status = 'review', finished_at = now() WHERE idempotency_key = 'email-order-7'");
        pg.dsl().execute("UPDATE outbox_effect SET status = 'review' WHERE idempotency_key = 'email-order-7'");
        Run confirm = run("confirm-sent", "email-order-7", "--provider-message-id", "prov-77");
        assertThat(confirm.code()).as(confirm.err()).isZero();
        assertThat(confirm.out()).contains("Confirmed email-order-7 as sent; it is now sent");

        enqueue(8);
        Run cancel = run("cancel", "email-order-8", "--reason", "order cancelled");
        assertThat(cancel.code()).isZero();
        assertThat(cancel.out()).contains("Cancelled email-order-8; it is now cancelled");

        assertThat(pg.dsl().select(AUDIT_LOG.ACTION, AUDIT_LOG.ACTOR, AUDIT_LOG.ROLE).from(AUDIT_LOG).orderBy(AUDIT_LOG.ID)
                .fetch(x -> x.value1() + " " + x.value2() + " " + x.value3()))
                .containsExactly("retry tess operator", "resend tess operator",
                        "resend cli:" + System.getProperty("user.name") + " operator",
                        "confirm_sent cli:" + System.getProperty("user.name") + " operator",
                        "cancel cli:" + System.getProperty("user.name") + " operator");
    }

    @Test
    void closeNeedsAReasonAndLeavesTheEmailClosedAsWontSend() {
        enqueue(31);
        dispatch("email-order-31");
        Run missing = run("close", "email-order-31");
        assertThat(missing.code()).isEqualTo(ExitCodes.INVALID_INPUT);
        assertThat(missing.err()).contains("Missing required option: '--reason=TEXT'");
        assertThat(run("email", "email-order-31").out()).contains("can do:      close, retry");

        Run close = run("close", "email-order-31", "--reason", "renderer refuses the name", "--actor", "tess");
        assertThat(close.code()).as(close.err()).isZero();
        assertThat(close.out()).contains("Closed email-order-31 (won't send); it is now closed (closed: won't send)");
        assertThat(run("email", "email-order-31").out()).contains("status:      closed (Closed: won't send)")
                .doesNotContain("can do:")
                .contains("Closed (won't send) by tess (operator): \"renderer refuses the name\"");
        assertThat(run("emails", "--status", "closed").out()).contains("email-order-31");
        assertThat(run("--json", "close", "email-order-31", "--reason", "again").code()).isEqualTo(ExitCodes.NOT_ALLOWED);
        Run again = run("close", "email-order-31", "--reason", "again");
        assertThat(again.err()).contains("not allowed: only a failed email or one in review can be closed; this one is closed");
        assertThat(pg.dsl().fetchCount(AUDIT_LOG)).isEqualTo(1);
    }

    @Test
    void anEmailShowsTheServersReplyWithItsQueueIdAndASentOneNoEarlierError() {
        enqueue(32);
        DispatcherConfig config = DispatcherConfig.builder().workerId("cli-test-dispatcher").listenForNotifications(false).build();
        var dispatcher = new io.mailroom.outbox.runtime.Dispatcher(pg.dataSource(), config, Map.of(TOPIC, (m, ctx) -> m.attempt() == 1
                ? new Outcome.RetryLater("smtp-451 4.3.0 try again later", java.time.Duration.ZERO, "{\"code\":\"smtp-451\"}", null)
                : new Outcome.Done("{\"transport\":\"smtp\",\"replyCode\":250,\"messageId\":\"<k@test>\","
                        + "\"reply\":\"250 2.0.0 Ok: queued as 7F3A2\"}", null)));
        assertThat(dispatcher.runOnce()).isEqualTo(1);
        pg.dsl().execute("UPDATE outbox_message SET available_at = now()");
        assertThat(dispatcher.runOnce()).isEqualTo(1);
        Run email = run("email", "email-order-32");
        assertThat(email.out()).contains("status:      sent")
                .contains("reply:       250 2.0.0 Ok: queued as 7F3A2")
                .contains("attempt 2: Sent [provider 250] [id <k@test>] [reply 250 2.0.0 Ok: queued as 7F3A2]")
                .contains("attempt 1: Did not go out; will try again [provider smtp-451] - smtp-451 4.3.0 try again later")
                .doesNotContain("last error:");
        assertThat(run("--json", "email", "email-order-32").json().get("lastError").isNull()).isTrue();
    }

    @Test
    void refusedActionsExitNonZeroWithAClearMessage() throws Exception {
        enqueue(9);
        dispatch("email-order-9");
        Run notFound = run("retry", "email-order-404");
        assertThat(notFound.code()).isEqualTo(ExitCodes.NOT_FOUND);
        assertThat(notFound.err()).contains("not found: no email with key email-order-404");
        Run notAllowed = run("cancel", "email-order-9");
        assertThat(notAllowed.code()).isEqualTo(ExitCodes.NOT_ALLOWED);
        assertThat(notAllowed.err()).contains("not allowed: only a waiting email can be cancelled; this one is failed");
        try (Connection worker = pg.newConnection()) {
            worker.setAutoCommit(false);
            try (Statement st = worker.createStatement()) {
                st.executeQuery("SELECT 1 FROM outbox_message WHERE idempotency_key = 'email-order-9' FOR NO KEY UPDATE").close();
            }
            Run busy = run("retry", "email-order-9");
            assertThat(busy.code()).isEqualTo(ExitCodes.BUSY);
            assertThat(busy.err()).contains("busy: email email-order-9 is being worked on right now");
            worker.rollback();
        }
        Run missingReason = run("resend", "email-order-9");
        assertThat(missingReason.code()).isEqualTo(ExitCodes.INVALID_INPUT);
        assertThat(missingReason.err()).contains("Missing required option: '--reason=TEXT'");
        assertThat(pg.dsl().fetchCount(AUDIT_LOG)).isZero();
    }

    @Test
    void invalidInputAndAnUnreachableDatabaseGiveTheirOwnExitCodes() {
        Run badOrder = run("emails", "--order", "abc");
        assertThat(badOrder.code()).isEqualTo(ExitCodes.INVALID_INPUT);
        assertThat(badOrder.err()).contains("error: order must be an order number");
        assertThat(run("emails").err()).contains("give one of --about TYPE:ID, --order ORDER or --status STATUS");
        assertThat(run("emails", "--order", "1", "--status", "failed").code()).isEqualTo(ExitCodes.INVALID_INPUT);
        assertThat(run("emails", "--status", "failed", "--since", "soon").err()).contains("error: since must be a time");
        assertThat(run("emails", "--status", "nope").err()).contains("error: status must be one of");
        assertThat(run("retry", "bad key!").err()).contains("error: key must be an email key");
        assertThat(run("pause", "--scope", "<x>").code()).isEqualTo(ExitCodes.INVALID_INPUT);
        assertThat(run("frobnicate").code()).isEqualTo(ExitCodes.INVALID_INPUT);
        assertThat(run().code()).isEqualTo(ExitCodes.INVALID_INPUT);

        Run noDb = run(CliDatabase.direct(null), "stats");
        assertThat(noDb.code()).isEqualTo(ExitCodes.INVALID_INPUT);
        assertThat(noDb.err()).contains("no database given: pass --db-url");
        Run down = run(CliDatabase.direct(null), "stats", "--db-url", "jdbc:postgresql://127.0.0.1:1/nothing?user=x&password=s3cret");
        assertThat(down.code()).isEqualTo(ExitCodes.UNAVAILABLE);
        assertThat(down.err()).contains("cannot reach the database").doesNotContain("s3cret");
        assertThat(run(CliDatabase.direct(null), "stats", "--db-url", "mysql://x").err()).contains("must be a PostgreSQL JDBC URL");

        // where the embedding program names its setting, the messages name it too
        CliDatabase named = new CliDatabase(null, null, null, null, DbTimeouts.DEFAULTS, false, SessionSettings.SESSION, "DB_URL_VAR");
        assertThat(run(named, "stats").err()).contains("no database given: pass --db-url jdbc:postgresql://host:5432/db or set DB_URL_VAR");
        assertThat(run(named, "stats", "--db-url", "jdbc:postgresql://127.0.0.1:1/nothing").err())
                .contains("check --db-url or DB_URL_VAR");
        // defaults the program could not resolve: invalid input, its message as it is
        Run refused = run(() -> {
            throw new InvalidSettingException("X", "X must be 'none' or 'pgbouncer'");
        }, "stats");
        assertThat(refused.code()).isEqualTo(ExitCodes.INVALID_INPUT);
        assertThat(refused.err()).contains("error: X must be 'none' or 'pgbouncer'");

        // behind a pooler: settings per transaction (the URL here is direct: they work there too)
        CliDatabase pooled = new CliDatabase(pg.database().jdbcUrlWithCredentials(), null, null, null, DbTimeouts.DEFAULTS,
                true, SessionSettings.TRANSACTION, null);
        assertThat(run(pooled, "stats").code()).isZero();
    }

    @Test
    void statsPauseAndResume() {
        enqueue(11);
        enqueue(12);
        dispatch("email-order-12");
        enqueue(13);
        Run stats = run("stats");
        assertThat(stats.code()).isZero();
        assertThat(stats.out()).containsPattern("waiting\\s+1 \\(1 due now\\)").containsPattern("failed\\s+1")
                .containsPattern("last hour\\s+1\\s+1\\s+0\\s+0").contains("Dispatching: running")
                .contains("Breakers: unknown");
        assertThat(run("--json", "stats").json().get("counts").get("pending").asLong()).isEqualTo(1);

        Run pause = run("pause", "--reason", "provider incident", "--actor", "ops");
        assertThat(pause.code()).isZero();
        assertThat(pause.out()).contains("Dispatching: PAUSED for *").contains("*  paused  by ops").contains("\"provider incident\"");
        assertThat(run("stats").out()).contains("Dispatching: PAUSED for *");
        Run resume = run("resume", "--actor", "ops");
        assertThat(resume.out()).contains("Dispatching: running").contains("*  running  by ops");
        assertThat(pg.dsl().fetchCount(AUDIT_LOG)).isEqualTo(2);
    }

    @CommandLine.Command(name = "mailroom", subcommands = CommandLine.HelpCommand.class)
    static final class Root {
    }

    @Test
    void supportCliWorksAsASubcommandOfAnotherMain() {
        enqueue(21);
        StringWriter out = new StringWriter();
        CommandLine root = new CommandLine(new Root());
        root.addSubcommand("support", SupportCli.commandLine(new SupportCli(this::db)));
        root.setOut(new PrintWriter(out));
        int code = root.execute("support", "emails", "--order", "21", "--json");
        assertThat(code).isZero();
        assertThat(out.toString()).contains("\"key\" : \"email-order-21\"").contains("\"status\" : \"pending\"");

        StringWriter help = new StringWriter();
        root.setOut(new PrintWriter(help));
        root.execute("support", "--help");
        assertThat(help.toString()).contains("emails").contains("confirm-sent").contains("--db-url");
    }
}
