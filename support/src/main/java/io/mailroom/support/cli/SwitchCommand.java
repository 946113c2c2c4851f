package io.mailroom.support.cli;

import io.mailroom.support.Actor;
import io.mailroom.support.ControlState;
import io.mailroom.support.SupportService;
import picocli.CommandLine.Option;

import java.io.PrintWriter;

/** The frame of {@code pause} and {@code resume}: the scope option, the switch, and the state printed after it. */
abstract class SwitchCommand extends CliCommand {

    @Option(names = "--scope", paramLabel = "SCOPE", description = "* (everything, the default) or one topic")
    String scope;

    /** Sets the switch of {@link #scope} and answers the switches as they are now. */
    abstract ControlState set(SupportService service, Actor actor);

    @Override
    final int run(PrintWriter out) throws Exception {
        ControlState state = set(cli.service(), cli.actor());
        if (json()) {
            printJson(out, state);
        } else {
            Printer.control(out, state);
        }
        return ExitCodes.OK;
    }
}
