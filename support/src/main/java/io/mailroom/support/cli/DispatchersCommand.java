package io.mailroom.support.cli;

import io.mailroom.support.DispatcherList;
import picocli.CommandLine.Command;

import java.io.PrintWriter;

@Command(name = "dispatchers", mixinStandardHelpOptions = true,
        description = "The dispatchers in the registry (live or not): host, version, heartbeats, emails in flight, breakers,"
                + " topics; the paused topics and those no live dispatcher serves.")
final class DispatchersCommand extends CliCommand {

    @Override
    int run(PrintWriter out) throws Exception {
        DispatcherList list = cli.service().dispatchers();
        if (json()) {
            printJson(out, list);
        } else {
            Printer.dispatchers(out, list);
        }
        return ExitCodes.OK;
    }
}
