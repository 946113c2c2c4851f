package io.mailroom.email.service;

import io.mailroom.outbox.InvalidSettingException;
import picocli.CommandLine;
import picocli.CommandLine.Command;

import java.util.concurrent.Callable;
import java.util.concurrent.CountDownLatch;

/**
 * {@code mailroom}: the operator's command line. {@code mailroom dispatcher run} runs a dispatcher
 * configured from the environment until SIGTERM; {@code mailroom templates check|render} is the template
 * author's loop; {@code mailroom support ...} answers support questions and takes their actions
 * (emails of an order, retry, resend, confirm-sent, cancel, stats, pause, resume); {@code mailroom dsn
 * ingest} stores the bounces a mail server pipes to it; {@code mailroom health} is a container's healthcheck;
 * {@code mailroom schema sql|status|migrate} serves a business that runs its migrations itself.
 */
@Command(name = "mailroom", mixinStandardHelpOptions = true, version = "mailroom 0.1.0",
        description = "Transactional outbox and idempotent email dispatcher for PostgreSQL.",
        subcommands = {MailroomCli.DispatcherCommand.class})
public final class MailroomCli implements Callable<Integer> {

    public static void main(String[] args) {
        io.mailroom.db.PostgresVersions.replaceJooqVersionCheck(); // before any query: DSN pipes quote the first line
        System.exit(commandLine().execute(args));
    }

    public static CommandLine commandLine() {
        CommandLine cli = new CommandLine(new MailroomCli());
        cli.addSubcommand("support", SupportEnv.cli(System.getenv()));
        cli.addSubcommand("templates", new CommandLine(new TemplatesCommand()));
        cli.addSubcommand("dsn", new CommandLine(new DsnCommand()));
        cli.addSubcommand("webhooks", new CommandLine(new WebhooksCommand()));
        cli.addSubcommand("health", new CommandLine(new HealthCommand()));
        cli.addSubcommand("schema", new CommandLine(new SchemaCommand()));
        cli.setExecutionExceptionHandler((e, cmd, parsed) -> {
            if (e instanceof InvalidSettingException || e instanceof IllegalArgumentException) {
                cmd.getErr().println("mailroom: invalid configuration: " + e.getMessage());
                return 2;
            }
            if (e instanceof DatabaseStartupException) {
                cmd.getErr().println("mailroom: " + e.getMessage()); // it says it all: URL, SQLSTATE, what happened
                return 1;
            }
            cmd.getErr().println("mailroom: " + e);
            return 1;
        });
        return cli;
    }

    @Override
    public Integer call() {
        CommandLine.usage(this, System.out);
        return 0;
    }

    @Command(name = "dispatcher", description = "Run and manage dispatchers.", subcommands = {RunCommand.class},
            mixinStandardHelpOptions = true)
    static final class DispatcherCommand implements Callable<Integer> {
        @Override
        public Integer call() {
            CommandLine.usage(this, System.out);
            return 0;
        }
    }

    @Command(name = "run", mixinStandardHelpOptions = true,
            description = "Run a dispatcher configured by MAILROOM_* environment variables (see README) until SIGTERM.")
    static final class RunCommand implements Callable<Integer> {
        @Override
        public Integer call() throws InterruptedException {
            DispatcherService service = DispatcherService.start(ServiceConfig.fromEnv(System.getenv()));
            CountDownLatch stopped = new CountDownLatch(1);
            Runtime.getRuntime().addShutdownHook(new Thread(() -> {
                service.close();
                stopped.countDown();
            }, "dispatcher-shutdown"));
            stopped.await();
            return 0;
        }
    }
}
