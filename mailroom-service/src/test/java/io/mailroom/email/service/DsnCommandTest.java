package io.mailroom.email.service;

import io.mailroom.testing.PostgresExtension;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;
import picocli.CommandLine;

import java.io.ByteArrayInputStream;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;

import static io.mailroom.db.jooq.Tables.DELIVERY_EVENT;
import static io.mailroom.db.jooq.Tables.SUPPRESSION;
import static org.assertj.core.api.Assertions.assertThat;

/** {@code mailroom dsn ingest} as a mail server's pipe runs it: bytes in, a sysexits code out. */
class DsnCommandTest {

    @RegisterExtension
    static final PostgresExtension pg = new PostgresExtension();

    static final String BOUNCE = "MIME-Version: 1.0\r\nMessage-ID: <dsn-cli-1@mx.example>\r\n"
            + "Content-Type: multipart/report; report-type=delivery-status; boundary=b\r\n\r\n"
            + "--b\r\nContent-Type: message/delivery-status\r\n\r\nReporting-MTA: dns; mx.example\r\n\r\n"
            + "Final-Recipient: rfc822; gone@example.com\r\nAction: failed\r\nStatus: 5.1.1\r\n"
            + "Diagnostic-Code: smtp; 550 5.1.1 no such user\r\n\r\n"
            + "--b\r\nContent-Type: text/rfc822-headers\r\n\r\nMessage-ID: <never-sent-by-us@shop.example>\r\n\r\n--b--\r\n";

    record Run(int code, String out, String err) {
    }

    static Run run(Map<String, String> env, String stdin, String... args) {
        DsnCommand.Ingest ingest = new DsnCommand.Ingest();
        ingest.env = env;
        ingest.stdin = new ByteArrayInputStream(stdin.getBytes(StandardCharsets.UTF_8));
        CommandLine cli = new CommandLine(ingest);
        StringWriter out = new StringWriter();
        StringWriter err = new StringWriter();
        cli.setOut(new PrintWriter(out));
        cli.setErr(new PrintWriter(err));
        int code = cli.execute(args);
        return new Run(code, out.toString(), err.toString());
    }

    @Test
    void aBouncePipedInIsStoredOnce_andSuppressesTheAddressEvenAsAnOrphan() {
        Map<String, String> env = Map.of("MAILROOM_DB_URL", pg.database().jdbcUrlWithCredentials());

        Run first = run(env, BOUNCE, "-");
        Run again = run(env, BOUNCE, "-");

        assertThat(first.code()).as(first.err()).isZero();
        assertThat(first.out()).contains("<dsn-cli-1@mx.example> stored, 1 event(s), 0 matched, 1 orphan(s)");
        assertThat(again.code()).isZero();
        assertThat(again.out()).contains("stored before");
        assertThat(pg.dsl().fetchCount(DELIVERY_EVENT, DELIVERY_EVENT.DELIVERY_ID.eq("<dsn-cli-1@mx.example>"))).isEqualTo(1);
        assertThat(pg.dsl().fetchCount(SUPPRESSION, SUPPRESSION.ADDRESS.eq("gone@example.com"))).isEqualTo(1);
    }

    @Test
    void notAReportIs65_anUnreadableFile66_andAnUnavailableDatabase75(@TempDir Path dir) throws Exception {
        Map<String, String> env = Map.of("MAILROOM_DB_URL", pg.database().jdbcUrlWithCredentials());
        Path letter = dir.resolve("letter.eml");
        Files.writeString(letter, "Subject: hello\r\nContent-Type: text/plain\r\n\r\nhi\r\n");

        Run notAReport = run(env, "", letter.toString());
        assertThat(notAReport.code()).isEqualTo(65);
        assertThat(notAReport.err()).contains("is not a delivery status notification").contains("not multipart/report");

        assertThat(run(env, "", dir.resolve("missing.eml").toString()).code()).isEqualTo(66);

        Run down = run(Map.of("MAILROOM_DB_URL", "jdbc:postgresql://127.0.0.1:1/none?user=x&connectTimeout=2"), BOUNCE, "-");
        assertThat(down.code()).isEqualTo(75);
        assertThat(down.err()).contains("database unavailable").contains("SQLSTATE 08");
    }

    @Test
    void aReportHoldingANulIs65NamingTheField_andADateOutOfRangeIsStoredWithoutIt() {
        Map<String, String> env = Map.of("MAILROOM_DB_URL", pg.database().jdbcUrlWithCredentials());
        Run nul = run(env, BOUNCE.replace("<dsn-cli-1@", "<dsn-cli-nul@").replace("no such user", "no such\u0000user"), "-");
        assertThat(nul.code()).as(nul.err()).isEqualTo(65);
        assertThat(nul.err()).contains("Diagnostic-Code").contains("U+0000").doesNotContain("database unavailable");

        Run far = run(env, BOUNCE.replace("<dsn-cli-1@", "<dsn-cli-far@")
                .replace("Status: 5.1.1\r\n", "Status: 5.1.1\r\nLast-Attempt-Date: Mon, 1 Jan 300000 00:00:00 +0000\r\n"), "-");
        assertThat(far.code()).as(far.err()).isZero();
        assertThat(pg.dsl().select(DELIVERY_EVENT.OCCURRED_AT).from(DELIVERY_EVENT)
                .where(DELIVERY_EVENT.DELIVERY_ID.eq("<dsn-cli-far@mx.example>")).fetchOne(DELIVERY_EVENT.OCCURRED_AT)).isNull();
        assertThat(pg.dsl().fetchCount(DELIVERY_EVENT, DELIVERY_EVENT.DELIVERY_ID.eq("<dsn-cli-nul@mx.example>"))).isZero();
    }
}
