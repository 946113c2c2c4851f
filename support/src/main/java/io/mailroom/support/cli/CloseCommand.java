package io.mailroom.support.cli;

import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;

import java.io.PrintWriter;

@Command(name = "close", mixinStandardHelpOptions = true,
        description = "Close a failed email (or one in review) as won't send: it will not be sent, for good.")
final class CloseCommand extends CliCommand {

    @Parameters(paramLabel = "KEY", description = Commands.KEY_HELP)
    String key;

    @Option(names = "--reason", paramLabel = "TEXT", required = true,
            description = "why it will not be sent (required; kept in the audit log)")
    String reason;

    @Override
    int run(PrintWriter out) throws Exception {
        return report(out, cli.service().close(cli.actor(), key, reason), key);
    }
}
