package io.mailroom.support.cli;

import io.mailroom.support.ControlState;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

import java.io.PrintWriter;

@Command(name = "pause", mixinStandardHelpOptions = true,
        description = "Pause sending: every dispatcher stops taking new emails within seconds.")
final class PauseCommand extends CliCommand {

    @Option(names = "--scope", paramLabel = "SCOPE", description = "* (everything, the default) or one topic")
    String scope;

    @Option(names = "--reason", paramLabel = "TEXT", description = "why (shown to others and kept in the audit log)")
    String reason;

    @Override
    int run(PrintWriter out) throws Exception {
        ControlState state = cli.service().pause(cli.actor(), scope, reason);
        if (json()) {
            printJson(out, state);
        } else {
            Printer.control(out, state);
        }
        return ExitCodes.OK;
    }
}
