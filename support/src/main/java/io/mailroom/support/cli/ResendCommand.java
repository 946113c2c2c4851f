package io.mailroom.support.cli;

import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;

import java.io.PrintWriter;

@Command(name = "resend", mixinStandardHelpOptions = true,
        description = "Send a sent email (or one in review) again, as a new email with a new key (KEY-resend-N).")
final class ResendCommand extends CliCommand {

    @Parameters(paramLabel = "KEY", description = Commands.KEY_HELP)
    String key;

    @Option(names = "--reason", paramLabel = "TEXT", required = true, description = "why it is sent again (required; kept in the audit log)")
    String reason;

    @Override
    int run(PrintWriter out) throws Exception {
        return report(out, cli.service().resend(cli.actor(), key, reason), key);
    }
}
