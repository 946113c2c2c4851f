package io.mailroom.support.cli;

import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;

import java.io.PrintWriter;

@Command(name = "reschedule", mixinStandardHelpOptions = true,
        description = {"Move a waiting (scheduled) email to another send time, or to now, until a dispatcher claims it.",
                "Examples: reschedule email-cart-9-reminder --at 2026-12-24T09:00:00Z;  reschedule KEY --at +2h;  reschedule KEY --at now"})
final class RescheduleCommand extends CliCommand {

    @Parameters(paramLabel = "KEY", description = Commands.KEY_HELP)
    String key;

    @Option(names = "--at", required = true, paramLabel = "WHEN",
            description = "the new send time: 2026-12-24T09:00:00Z, 2026-12-24T09:00+07:00, +2h (from now) or now; at most 30 days ahead")
    String at;

    @Option(names = "--reason", paramLabel = "TEXT", description = "why (kept in the audit log)")
    String reason;

    @Override
    int run(PrintWriter out) throws Exception {
        return report(out, cli.service().reschedule(cli.actor(), key, at, reason), key);
    }
}
