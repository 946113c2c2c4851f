package io.mailroom.support.cli;

import io.mailroom.support.EmailView;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;

import java.io.PrintWriter;
import java.util.Optional;

@Command(name = "email", mixinStandardHelpOptions = true, description = "One email and its history.")
final class EmailCommand extends CliCommand {

    @Parameters(paramLabel = "KEY", description = Commands.KEY_HELP)
    String key;

    @Option(names = "--text", description = "also print the text part as it was sent")
    boolean text;

    @Override
    int run(PrintWriter out) throws Exception {
        Optional<EmailView> email = cli.service().email(key);
        if (email.isEmpty()) {
            spec.commandLine().getErr().println("not found: no email with key " + key.strip());
            return ExitCodes.NOT_FOUND;
        }
        if (json()) {
            printJson(out, email.get());
        } else {
            Printer.email(out, email.get());
            if (text) {
                out.println();
                Printer.text(out, email.get());
            }
        }
        return ExitCodes.OK;
    }
}
