package io.mailroom.email.service;

import io.mailroom.db.MailroomSchema;
import io.mailroom.db.sql.SqlStates;
import io.mailroom.delivery.DeliveryEventStore;
import io.mailroom.delivery.dsn.DsnIngest;
import io.mailroom.delivery.suppression.SuppressionList;
import io.mailroom.delivery.webhook.MalformedEventException;
import io.mailroom.email.transport.smtp.Verp;
import io.mailroom.outbox.InvalidSettingException;
import org.jooq.SQLDialect;
import org.jooq.exception.DataAccessException;
import org.jooq.impl.DSL;
import org.postgresql.ds.PGSimpleDataSource;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;

import javax.sql.DataSource;
import java.io.IOException;
import java.io.InputStream;
import java.io.PrintWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Callable;

/**
 * {@code mailroom dsn ingest [FILE ...|-]}: stores delivery status notifications (RFC 3464 bounces)
 * that a mail server hands over, one report per file or on standard input. Made to sit behind a
 * mail server's pipe transport (Postfix: {@code bounces unix - n n - - pipe
 * user=mailroom argv=/usr/bin/mailroom dsn ingest -}), so its exit codes are the ones a mail server
 * understands (sysexits): 0 stored (or stored before), 65 not a delivery status report or one
 * holding a value that cannot be stored, such as a U+0000 (the mail server bounces it to the
 * postmaster rather than retrying), 75 the database is unavailable (the
 * mail server keeps the report and tries again), 66 a file cannot be read, 78 a bad setting.
 *
 * <p>With {@code MAILROOM_SMTP_VERP} set (the return path the SMTP transport sends from), the
 * address the report was delivered to carries the email's key: {@code --recipient} (Postfix pipe:
 * {@code argv=/usr/bin/mailroom dsn ingest --recipient ${recipient} -}), else the report's
 * {@code Delivered-To}, {@code X-Original-To} or {@code To}.
 */
@Command(name = "dsn", mixinStandardHelpOptions = true, description = "Delivery status notifications (bounces) from mail servers.",
        subcommands = {DsnCommand.Ingest.class})
final class DsnCommand implements Callable<Integer> {

    static final int EX_DATAERR = 65;
    static final int EX_NOINPUT = 66;
    static final int EX_TEMPFAIL = 75;
    static final int EX_CONFIG = 78;

    @Override
    public Integer call() {
        CommandLine.usage(this, System.out);
        return 0;
    }

    @Command(name = "ingest", mixinStandardHelpOptions = true,
            description = "Store delivery status notifications: one per FILE, or one on standard input with '-'.")
    static final class Ingest implements Callable<Integer> {

        @Parameters(arity = "1..*", paramLabel = "FILE", description = "a report (message/rfc822 bytes), or - for standard input")
        List<String> files;

        @Option(names = "--db-url", description = "JDBC URL of the database (default: $MAILROOM_DB_URL)")
        String dbUrl;

        @Option(names = "--recipient", paramLabel = "ADDR",
                description = "the address the mail server delivered the report to (a VERP address carries the email's key)")
        String recipient;

        @CommandLine.Spec
        CommandLine.Model.CommandSpec spec;

        Map<String, String> env = System.getenv();
        InputStream stdin = System.in;

        @Override
        public Integer call() {
            PrintWriter out = spec.commandLine().getOut();
            PrintWriter err = spec.commandLine().getErr();
            Verp verp;
            DataSource db;
            try {
                String template = env.get("MAILROOM_SMTP_VERP");
                verp = template == null || template.isBlank() ? null : Verp.parse(template);
                db = dataSource();
            } catch (InvalidSettingException e) {
                err.println("mailroom dsn: " + e.getMessage());
                return EX_CONFIG;
            }
            DsnIngest ingest = new DsnIngest(new DeliveryEventStore(
                    List.of(new SuppressionList(WebhookConfig.suppression(env), null)), null), verp == null ? null : verp::keyOf);
            int worst = 0;
            for (String file : files) {
                byte[] raw;
                try {
                    raw = file.equals("-") ? stdin.readAllBytes() : Files.readAllBytes(Path.of(file));
                } catch (IOException e) {
                    err.println("mailroom dsn: cannot read " + file + ": " + e.getMessage());
                    worst = Math.max(worst, EX_NOINPUT);
                    continue;
                }
                try {
                    DsnIngest.Result r = MailroomSchema.of(db).dsl(db).transactionResult(c -> {
                        try {
                            return ingest.ingest(c.dsl(), raw, recipient);
                        } catch (MalformedEventException e) {
                            throw new NotAReport(e);
                        }
                    });
                    out.printf("%s: %s %s, %d event(s), %d matched, %d orphan(s)%n", file, r.dsn().deliveryId(),
                            r.stored().replay() ? "stored before" : "stored", r.dsn().events().size(),
                            r.stored().matched(), r.stored().orphans());
                } catch (NotAReport e) {
                    err.println("mailroom dsn: " + file + " is not a delivery status notification: " + e.getCause().getMessage());
                    worst = Math.max(worst, EX_DATAERR);
                } catch (DataAccessException e) {
                    if (SqlStates.isDataException(e)) {
                        // the report's data, not the database: trying again would fail the same way
                        err.println("mailroom dsn: " + file + " holds a value the database cannot store (SQLSTATE "
                                + SqlStates.sqlState(e) + ")");
                        worst = Math.max(worst, EX_DATAERR);
                        continue;
                    }
                    err.println("mailroom dsn: database unavailable (SQLSTATE " + SqlStates.sqlState(e) + "); try again later");
                    return EX_TEMPFAIL;
                }
            }
            out.flush();
            return worst;
        }

        private DataSource dataSource() {
            String url = dbUrl != null ? dbUrl : env.get("MAILROOM_DB_URL");
            if (url == null || !url.startsWith("jdbc:postgresql:")) {
                throw new IllegalArgumentException("no database given: pass --db-url jdbc:postgresql://host:5432/db or set MAILROOM_DB_URL");
            }
            PGSimpleDataSource ds = new PGSimpleDataSource();
            // network timeouts and keepalive, unless the URL sets its own: the mail server's pipe must not hang on a lost session
            ds.setURL(DbTopology.timeouts(env).jdbcUrl(url));
            if (env.get("MAILROOM_DB_USER") != null) {
                ds.setUser(env.get("MAILROOM_DB_USER"));
            }
            if (env.get("MAILROOM_DB_PASSWORD") != null) {
                ds.setPassword(env.get("MAILROOM_DB_PASSWORD"));
            }
            ds.setApplicationName("mailroom-dsn-ingest");
            return ds;
        }
    }

    /** A parse failure carried out of the transaction, which it rolls back (nothing was written before it). */
    private static final class NotAReport extends RuntimeException {
        NotAReport(MalformedEventException cause) {
            super(cause);
        }
    }
}
