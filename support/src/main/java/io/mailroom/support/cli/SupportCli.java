package io.mailroom.support.cli;

import io.mailroom.support.Actor;
import io.mailroom.support.Role;
import io.mailroom.support.SupportService;
import org.postgresql.ds.PGSimpleDataSource;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.ScopeType;
import picocli.CommandLine.Spec;

import javax.sql.DataSource;
import java.io.PrintWriter;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.Callable;

/**
 * {@code support}: the support and operator commands, talking to the database directly.
 *
 * <pre>
 * support emails --order 102
 * support emails --status failed --since 1h
 * support email email-order-102
 * support retry email-order-102
 * support resend email-order-102 --reason "customer deleted it"
 * support confirm-sent email-order-102
 * support cancel email-order-102
 * support close email-order-102 --reason "the name cannot be rendered; customer told by phone"
 * support stats
 * support dispatchers
 * support pause --reason "provider incident"
 * support pause --scope email.password_reset --reason "template being fixed"
 * support resume
 * </pre>
 *
 * Options for every command: {@code --db-url} (default {@code $MAILROOM_DB_URL}), {@code --db-user}
 * / {@code --db-password} (default {@code $MAILROOM_DB_USER} / {@code $MAILROOM_DB_PASSWORD}),
 * {@code --json} for scripts, {@code --actor} for the name in the audit log (default
 * {@code cli:<os user>}). Whoever can reach the database is treated as an operator. Exit codes: see
 * {@link ExitCodes}.
 *
 * <p>Reusable as a subcommand of another main:
 * <pre>{@code
 * new CommandLine(new MailroomMain()).addSubcommand("support", SupportCli.commandLine(new SupportCli(System.getenv())))
 * }</pre>
 */
@Command(name = "support", mixinStandardHelpOptions = true, sortOptions = false,
        description = "Find emails and their history, retry, resend, confirm, cancel or close them; pause and resume sending.",
        subcommands = {EmailsCommand.class, EmailCommand.class, RetryCommand.class, ResendCommand.class,
                ConfirmSentCommand.class, CancelCommand.class, CloseCommand.class, StatsCommand.class, PauseCommand.class, ResumeCommand.class,
                DeliveryCommand.class, SuppressionsCommand.class, DispatchersCommand.class})
public class SupportCli implements Callable<Integer> {

    public static final String ENV_DB_URL = "MAILROOM_DB_URL";
    public static final String ENV_DB_USER = "MAILROOM_DB_USER";
    public static final String ENV_DB_PASSWORD = "MAILROOM_DB_PASSWORD";
    public static final String ENV_DB_POOLER = "MAILROOM_DB_POOLER";
    public static final String ENV_DB_SESSION_SETTINGS = "MAILROOM_DB_SESSION_SETTINGS";
    public static final String ENV_SCHEMA = "MAILROOM_SCHEMA";

    @Option(names = "--db-url", scope = ScopeType.INHERIT, paramLabel = "URL",
            description = "JDBC URL of the database (default: $MAILROOM_DB_URL)")
    String dbUrl;

    @Option(names = "--db-user", scope = ScopeType.INHERIT, paramLabel = "USER",
            description = "database user (default: $MAILROOM_DB_USER, else from the URL)")
    String dbUser;

    @Option(names = "--db-password", scope = ScopeType.INHERIT, paramLabel = "PASSWORD",
            description = "database password (default: $MAILROOM_DB_PASSWORD, else from the URL)")
    String dbPassword;

    @Option(names = "--schema", scope = ScopeType.INHERIT, paramLabel = "NAME",
            description = "the schema of Mailroom's tables (default: $MAILROOM_SCHEMA, else mailroom)")
    String schema;

    @Option(names = "--json", scope = ScopeType.INHERIT, description = "print JSON instead of tables")
    boolean json;

    @Option(names = "--actor", scope = ScopeType.INHERIT, paramLabel = "NAME",
            description = "your name in the audit log (default: cli:<operating-system user>)")
    String actorName;

    @Spec
    CommandSpec spec;

    private final Map<String, String> env;
    private final DataSource provided;
    private SupportService service;

    /** Reads the database settings from {@code env}, which the shell that embeds it passes (its process environment). */
    public SupportCli(Map<String, String> env) {
        this.env = Map.copyOf(env);
        this.provided = null;
    }

    /** Uses {@code dataSource}; {@code --db-url} and the environment are then ignored. */
    public SupportCli(DataSource dataSource) {
        this.env = Map.of();
        this.provided = Objects.requireNonNull(dataSource, "dataSource");
    }

    /** Without a subcommand: the usage, and the invalid-input exit code. */
    @Override
    public Integer call() {
        spec.commandLine().usage(spec.commandLine().getErr());
        return ExitCodes.INVALID_INPUT;
    }

    /** A command line for {@code cli} with the output streams and exit codes this module expects. */
    public static CommandLine commandLine(SupportCli cli) {
        CommandLine cmd = new CommandLine(cli);
        cmd.setCaseInsensitiveEnumValuesAllowed(true);
        return cmd;
    }

    /** Runs with the given arguments, printing to {@code out} and {@code err}; returns the exit code. */
    public static int run(Map<String, String> env, PrintWriter out, PrintWriter err, String... args) {
        CommandLine cmd = commandLine(new SupportCli(env));
        cmd.setOut(out);
        cmd.setErr(err);
        int code = cmd.execute(args);
        out.flush();
        err.flush();
        return code;
    }

    // ------------------------------------------------------------------------------ for commands

    boolean json() {
        return json;
    }

    SupportService service() {
        if (service == null) {
            service = new SupportService(dataSource(), io.mailroom.support.TransportStatus.UNKNOWN, sessionSettings());
        }
        return service;
    }

    /** Who acts: the given name, or {@code cli:<os user>}; an operator, since they hold the database's keys. */
    Actor actor() {
        String name = actorName != null && !actorName.isBlank() ? actorName.trim()
                : "cli:" + System.getProperty("user.name", "unknown");
        if (name.length() > Actor.MAX_NAME_LENGTH) {
            throw new io.mailroom.support.InvalidParameterException("actor", "--actor must be at most " + Actor.MAX_NAME_LENGTH + " characters");
        }
        for (int i = 0; i < name.length(); i++) {
            if (Character.isISOControl(name.charAt(i))) {
                throw new io.mailroom.support.InvalidParameterException("actor", "--actor must not contain control characters");
            }
        }
        return new Actor(name, Role.OPERATOR);
    }

    /** {@code MAILROOM_DB_POOLER}, read as the services read it: whether the URL goes through a transaction-mode pooler. */
    private boolean pooled() {
        try {
            return io.mailroom.outbox.DbPooler.pooled(ENV_DB_POOLER, env.get(ENV_DB_POOLER));
        } catch (io.mailroom.outbox.InvalidSettingException e) {
            throw new io.mailroom.support.InvalidParameterException(e.setting(), e.getMessage());
        }
    }

    /** Where the actions' timeouts are set: {@code MAILROOM_DB_SESSION_SETTINGS}, else per transaction behind a pooler. */
    private io.mailroom.outbox.SessionSettings sessionSettings() {
        boolean pooled = pooled();
        try {
            return io.mailroom.outbox.DbPooler.sessionSettings(ENV_DB_POOLER, ENV_DB_SESSION_SETTINGS, pooled, env.get(ENV_DB_SESSION_SETTINGS));
        } catch (io.mailroom.outbox.InvalidSettingException e) {
            throw new io.mailroom.support.InvalidParameterException(e.setting(), e.getMessage());
        }
    }

    private DataSource dataSource() {
        if (provided != null) {
            return provided;
        }
        String url = firstSet(dbUrl, env.get(ENV_DB_URL));
        if (url == null) {
            throw new io.mailroom.support.InvalidParameterException("db-url",
                    "no database given: pass --db-url jdbc:postgresql://host:5432/db or set " + ENV_DB_URL);
        }
        if (!url.toLowerCase(Locale.ROOT).startsWith("jdbc:postgresql:")) {
            throw new io.mailroom.support.InvalidParameterException("db-url", "--db-url must be a PostgreSQL JDBC URL (jdbc:postgresql://...)");
        }
        io.mailroom.outbox.DbTimeouts timeouts;
        try {
            timeouts = io.mailroom.outbox.DbTimeouts.fromSettings(env::get);
        } catch (io.mailroom.outbox.InvalidSettingException e) {
            throw new io.mailroom.support.InvalidParameterException(e.setting(), e.getMessage());
        }
        PGSimpleDataSource ds = new PGSimpleDataSource();
        try {
            // network timeouts and keepalive, unless the URL sets its own: a half-open session fails instead of hanging
            ds.setURL(timeouts.jdbcUrl(url));
        } catch (IllegalArgumentException e) {
            throw new io.mailroom.support.InvalidParameterException("db-url", "--db-url is not a valid PostgreSQL JDBC URL");
        }
        String user = firstSet(dbUser, env.get(ENV_DB_USER));
        if (user != null) {
            ds.setUser(user);
        }
        String password = firstSet(dbPassword, env.get(ENV_DB_PASSWORD));
        if (password != null) {
            ds.setPassword(password);
        }
        if (pooled()) {
            ds.setPrepareThreshold(0); // no named server-side statements through a transaction-mode pooler
        }
        ds.setApplicationName("mailroom-support-cli");
        try {
            return io.mailroom.db.MailroomSchema.named(firstSet(schema, env.get(ENV_SCHEMA))).bind(ds);
        } catch (IllegalArgumentException e) {
            throw new io.mailroom.support.InvalidParameterException("schema", "--schema: " + e.getMessage());
        }
    }

    private static String firstSet(String a, String b) {
        if (a != null && !a.isBlank()) {
            return a.trim();
        }
        return b != null && !b.isBlank() ? b.trim() : null;
    }
}
