package io.mailroom.support.cli;

import io.mailroom.support.BulkActions;
import io.mailroom.support.BulkRun;
import io.mailroom.support.EmailSearch;
import io.mailroom.support.SupportParams;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;

import java.io.PrintWriter;
import java.time.Duration;
import java.time.Instant;
import java.util.Map;

@Command(name = "bulk", mixinStandardHelpOptions = true, sortOptions = false,
        description = {"Apply an action to every email matching a search: retry (status failed), close (failed or review),",
                "resend (review) or lift-suppression. Without --confirm it counts what matches; with --confirm N (the",
                "number it counted) it runs, refusing if more match by then, and waits until it is done.",
                "Example: bulk retry --status failed --domain example.com --since 1d;  then the same with --confirm 500 --reason R"})
final class BulkCommand extends CliCommand {

    @Parameters(paramLabel = "ACTION", description = "retry, close, resend or lift-suppression")
    String action;

    @Mixin
    SearchOptions filters = new SearchOptions();

    @Option(names = "--about", paramLabel = "TYPE:ID", description = "about this entity: order:102, user:42")
    String about;

    @Option(names = "--status", paramLabel = "STATUS", description = "failed, review, pending, scheduled, sent, cancelled or closed")
    String status;

    @Option(names = "--since", paramLabel = "WHEN", description = "queued at or after: 1h, 2d, or 2025-01-31T09:00:00Z")
    String since;

    @Option(names = "--until", paramLabel = "WHEN", description = "queued before: same forms as --since")
    String until;

    @Option(names = "--confirm", paramLabel = "N", description = "run it on the N emails counted (never more)")
    Integer confirm;

    @Option(names = "--reason", paramLabel = "TEXT", description = "why (required to run; kept in each email's history)")
    String reason;

    @Override
    int run(PrintWriter out) throws Exception {
        Map<String, String> p = filters.params();
        p.put(SupportParams.ABOUT, about);
        p.put(SupportParams.STATUS, status);
        p.put(SupportParams.SINCE, since);
        p.put(SupportParams.UNTIL, until);
        Instant now = Instant.now();
        EmailSearch search = EmailSearch.parse(p::get, now);
        if (confirm == null) {
            BulkActions.Preview preview = cli.service().previewBulk(cli.actor(), action, search);
            if (json()) {
                printJson(out, preview);
            } else {
                out.println(preview.matching() + " email(s) match " + preview.filter() + ".");
                if (preview.matching() > 0) {
                    out.println("To " + preview.action() + " them, run the same command with --confirm " + preview.matching()
                            + " --reason TEXT" + (since != null || until != null ? " (times as printed above: "
                            + "relative ones move)" : "") + ".");
                }
            }
            return ExitCodes.OK;
        }
        BulkRun run = cli.service().startBulk(cli.actor(), action, search, confirm, reason);
        while (!run.finished()) {
            Thread.sleep(Duration.ofMillis(500));
            run = cli.service().bulkRun(run.id()).orElseThrow();
            if (!json() && !run.finished()) {
                out.println("… " + run.processed() + " of " + run.confirmed());
                out.flush();
            }
        }
        if (json()) {
            printJson(out, run);
        } else {
            out.println("Bulk " + run.action() + " " + run.id() + " " + run.state() + ": " + run.applied() + " changed, "
                    + run.skipped() + " left alone (no longer matching or not applicable), " + run.busy() + " busy"
                    + (run.error() == null ? "" : "; " + run.error()));
        }
        return run.state().equals("done") ? ExitCodes.OK : ExitCodes.FAILURE;
    }
}
