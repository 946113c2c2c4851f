package io.mailroom.support.cli;

import io.mailroom.support.QueueStats;
import picocli.CommandLine.Command;

import java.io.PrintWriter;

@Command(name = "stats", mixinStandardHelpOptions = true,
        description = "The queue: emails by status, the oldest waiting one, sent and failed in the last minute and hour.")
final class StatsCommand extends CliCommand {

    @Override
    int run(PrintWriter out) throws Exception {
        QueueStats stats = cli.service().stats();
        if (json()) {
            printJson(out, stats);
        } else {
            Printer.stats(out, stats);
        }
        return ExitCodes.OK;
    }
}
