package io.mailroom.support.cli;

import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;

import java.io.PrintWriter;

@Command(name = "cancel", mixinStandardHelpOptions = true, description = "Cancel a waiting email: it will not be sent.")
final class CancelCommand extends CliCommand {

    @Parameters(paramLabel = "KEY", description = Commands.KEY_HELP)
    String key;

    @Option(names = "--reason", paramLabel = "TEXT", description = "why (kept in the audit log)")
    String reason;

    @Override
    int run(PrintWriter out) throws Exception {
        return report(out, cli.service().cancel(cli.actor(), key, reason), key);
    }
}
