package io.mailroom.support.cli;

import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;

import java.io.PrintWriter;

@Command(name = "retry", mixinStandardHelpOptions = true,
        description = "Try a failed (or waiting) email again now, with one more attempt allowed.")
final class RetryCommand extends CliCommand {

    @Parameters(paramLabel = "KEY", description = Commands.KEY_HELP)
    String key;

    @Option(names = "--reason", paramLabel = "TEXT", description = "why (kept in the audit log)")
    String reason;

    @Override
    int run(PrintWriter out) throws Exception {
        return report(out, cli.service().retry(cli.actor(), key, reason), key);
    }
}
