package io.mailroom.support.cli;

import io.mailroom.support.ControlState;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

import java.io.PrintWriter;

@Command(name = "resume", mixinStandardHelpOptions = true, description = "Resume sending after a pause.")
final class ResumeCommand extends CliCommand {

    @Option(names = "--scope", paramLabel = "SCOPE", description = "* (everything, the default) or one topic")
    String scope;

    @Option(names = "--reason", paramLabel = "TEXT", description = "why (kept in the audit log)")
    String reason;

    @Override
    int run(PrintWriter out) throws Exception {
        ControlState state = cli.service().resume(cli.actor(), scope, reason);
        if (json()) {
            printJson(out, state);
        } else {
            Printer.control(out, state);
        }
        return ExitCodes.OK;
    }
}
