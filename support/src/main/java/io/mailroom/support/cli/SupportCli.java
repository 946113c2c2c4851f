package io.mailroom.support.cli;

import io.mailroom.delivery.suppression.ErasureKey;
import io.mailroom.outbox.InvalidSettingException;
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
import java.util.Objects;
import java.util.concurrent.Callable;
import java.util.function.Supplier;

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
 * support erase --address ann@example.com --reason "customer's request of 2026-05-02, ticket 4411"
 * </pre>
 *
 * Options for every command: {@code --db-url}, {@code --db-user}, {@code --db-password} and
 * {@code --schema} (defaults: the {@link CliDatabase} of the program that embeds the commands),
 * {@code --json} for scripts, {@code --actor} for the name in the audit log (default
 * {@code cli:<os user>}). Whoever can reach the database is treated as an operator. Exit codes: see
 * {@link ExitCodes}.
 *
 * <p>Reusable as a subcommand of another main, which resolves the defaults (only when a command needs
 * the database, so that a bad setting does not stop its other commands) and may give the options'
 * help in its own words through a resource bundle (keys {@code db-url}, {@code db-user},
 * {@code db-password}, {@code schema}):
 * <pre>{@code
 * new CommandLine(new MailroomMain()).addSubcommand("support", SupportCli.commandLine(new SupportCli(() -> defaults)))
 * }</pre>
 */
@Command(name = "support", mixinStandardHelpOptions = true, sortOptions = false,
        description = "Find emails and their history, retry, resend, confirm, cancel or close them; pause and resume sending.",
        subcommands = {EmailsCommand.class, EmailCommand.class, RetryCommand.class, ResendCommand.class,
                ConfirmSentCommand.class, CancelCommand.class, RescheduleCommand.class, CloseCommand.class, StatsCommand.class, PauseCommand.class, ResumeCommand.class,
                DeliveryCommand.class, SuppressionsCommand.class, DispatchersCommand.class, BulkCommand.class,
                EraseCommand.class})
public class SupportCli implements Callable<Integer> {

    @Option(names = "--db-url", scope = ScopeType.INHERIT, paramLabel = "URL",
            description = "JDBC URL of the database (default: the embedding program's)")
    String dbUrl;

    @Option(names = "--db-user", scope = ScopeType.INHERIT, paramLabel = "USER",
            description = "database user (default: the embedding program's, else from the URL)")
    String dbUser;

    @Option(names = "--db-password", scope = ScopeType.INHERIT, paramLabel = "PASSWORD",
            description = "database password (default: the embedding program's, else from the URL)")
    String dbPassword;

    @Option(names = "--schema", scope = ScopeType.INHERIT, paramLabel = "NAME",
            description = "the schema of Mailroom's tables (default: the embedding program's, else mailroom)")
    String schema;

    @Option(names = "--json", scope = ScopeType.INHERIT, description = "print JSON instead of tables")
    boolean json;

    @Option(names = "--actor", scope = ScopeType.INHERIT, paramLabel = "NAME",
            description = "your name in the audit log (default: cli:<operating-system user>)")
    String actorName;

    @Spec
    CommandSpec spec;

    private final Supplier<CliDatabase> defaults;
    private final DataSource provided;
    private final Supplier<ErasureKey> erasureKey;
    private CliDatabase database;
    private SupportService service;

    /**
     * The database options default to what {@code defaults} gives, asked once, when a command first
     * needs the database; an {@link InvalidSettingException} it throws is that command's invalid input.
     */
    public SupportCli(Supplier<CliDatabase> defaults) {
        this(defaults, ErasureKey::stored);
    }

    /**
     * As above; {@code erasureKey} gives the key an erased address's suppression is kept under (the
     * dispatchers' {@code MAILROOM_ERASURE_KEY}), asked when a command first needs it.
     */
    public SupportCli(Supplier<CliDatabase> defaults, Supplier<ErasureKey> erasureKey) {
        this.defaults = Objects.requireNonNull(defaults, "defaults");
        this.provided = null;
        this.erasureKey = Objects.requireNonNull(erasureKey, "erasureKey");
    }

    /** Uses {@code dataSource} with settings per session; the database options are then ignored. */
    public SupportCli(DataSource dataSource) {
        this.provided = Objects.requireNonNull(dataSource, "dataSource");
        this.defaults = () -> CliDatabase.direct(null);
        this.erasureKey = ErasureKey::stored;
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
    public static int run(CliDatabase defaults, PrintWriter out, PrintWriter err, String... args) {
        CommandLine cmd = commandLine(new SupportCli(() -> defaults));
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
            DataSource dataSource = dataSource();
            ErasureKey key;
            try {
                key = erasureKey.get();
            } catch (InvalidSettingException e) {
                throw new io.mailroom.support.InvalidParameterException(e.setting(), e.getMessage());
            }
            service = new SupportService(dataSource, io.mailroom.support.TransportStatus.UNKNOWN, database().sessionSettings(), key);
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

    /** Where a user sets the database, for a message: {@code --db-url}, and the embedding program's setting if it has one. */
    String urlHint() {
        String setting = database == null ? null : database.urlSetting();
        return "--db-url" + (setting == null ? "" : " or " + setting);
    }

    private CliDatabase database() {
        if (database == null) {
            try {
                database = Objects.requireNonNull(defaults.get(), "defaults");
            } catch (InvalidSettingException e) {
                throw new io.mailroom.support.InvalidParameterException(e.setting(), e.getMessage());
            }
        }
        return database;
    }

    private DataSource dataSource() {
        if (provided != null) {
            return provided;
        }
        CliDatabase db = database();
        String url = firstSet(dbUrl, db.url());
        if (url == null) {
            throw new io.mailroom.support.InvalidParameterException("db-url", "no database given: pass --db-url"
                    + " jdbc:postgresql://host:5432/db" + (db.urlSetting() == null ? "" : " or set " + db.urlSetting()));
        }
        if (!url.toLowerCase(Locale.ROOT).startsWith("jdbc:postgresql:")) {
            throw new io.mailroom.support.InvalidParameterException("db-url", "--db-url must be a PostgreSQL JDBC URL (jdbc:postgresql://...)");
        }
        PGSimpleDataSource ds = new PGSimpleDataSource();
        try {
            // network timeouts and keepalive, unless the URL sets its own: a half-open session fails instead of hanging
            ds.setURL(db.timeouts().jdbcUrl(url));
        } catch (IllegalArgumentException e) {
            throw new io.mailroom.support.InvalidParameterException("db-url", "--db-url is not a valid PostgreSQL JDBC URL");
        }
        String user = firstSet(dbUser, db.user());
        if (user != null) {
            ds.setUser(user);
        }
        String password = firstSet(dbPassword, db.password());
        if (password != null) {
            ds.setPassword(password);
        }
        if (db.pooled()) {
            ds.setPrepareThreshold(0); // no named server-side statements through a transaction-mode pooler
        }
        ds.setApplicationName("mailroom-support-cli");
        try {
            return io.mailroom.db.MailroomSchema.named(firstSet(schema, db.schema())).bind(ds);
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
