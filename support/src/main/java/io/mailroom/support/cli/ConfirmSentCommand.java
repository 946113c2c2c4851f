package io.mailroom.support.cli;

import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;

import java.io.PrintWriter;

@Command(name = "confirm-sent", mixinStandardHelpOptions = true,
        description = "Record an email in review as sent (e.g. the customer has it).")
final class ConfirmSentCommand extends CliCommand {

    @Parameters(paramLabel = "KEY", description = Commands.KEY_HELP)
    String key;

    @Option(names = "--provider-message-id", paramLabel = "ID", description = "the provider's id for the email, if known")
    String providerMessageId;

    @Option(names = "--reason", paramLabel = "TEXT", description = "how you know (kept in the audit log)")
    String reason;

    @Override
    int run(PrintWriter out) throws Exception {
        return report(out, cli.service().confirmSent(cli.actor(), key, providerMessageId, reason), key);
    }
}
