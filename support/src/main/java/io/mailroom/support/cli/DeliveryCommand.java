package io.mailroom.support.cli;

import io.mailroom.support.DeliveryPage;
import io.mailroom.support.EmailView;
import io.mailroom.support.InvalidParameterException;
import io.mailroom.support.OrphanEvent;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;

import java.io.PrintWriter;
import java.util.List;

/** {@code mailroom support delivery bounced|complained|orphans}: what providers reported after accepting emails. */
@Command(name = "delivery", mixinStandardHelpOptions = true, sortOptions = false,
        description = {"Emails the provider reported as bounced or marked as spam, newest first; or (operators)",
                "reports that matched no email.  Examples: delivery bounced;  delivery complained --limit 20;  delivery orphans"})
final class DeliveryCommand extends CliCommand {

    @Parameters(paramLabel = "LIST", description = "bounced, complained or orphans")
    String list;

    @Option(names = "--limit", paramLabel = "N", description = "how many (1-200, default 50)")
    String limit;

    @Option(names = "--cursor", paramLabel = "CURSOR", description = "bounced, complained: continue after the previous page")
    String cursor;

    @Override
    int run(PrintWriter out) throws Exception {
        if ("orphans".equals(list)) {
            List<OrphanEvent> orphans = cli.service().orphanEvents(cli.actor(), null, limit);
            if (json()) {
                printJson(out, orphans);
                return ExitCodes.OK;
            }
            if (orphans.isEmpty()) {
                out.println("No reports without an email.");
                return ExitCodes.OK;
            }
            Table t = new Table(List.of("RECEIVED", "SOURCE", "EVENT", "RECIPIENT", "PROVIDER ID", "DIAGNOSTIC"), 24, 10, 24, 40, 50, 80);
            for (OrphanEvent o : orphans) {
                t.row(Printer.time(o.receivedAt()), o.source(), o.providerEvent(), o.recipient(), o.providerMessageId(), o.diagnosticCode());
            }
            t.print(out);
            return ExitCodes.OK;
        }
        if (!"bounced".equals(list) && !"complained".equals(list)) {
            throw new InvalidParameterException("list", "LIST must be bounced, complained or orphans");
        }
        DeliveryPage page = cli.service().emailsByDelivery(list, cursor, limit);
        if (json()) {
            printJson(out, page);
            return ExitCodes.OK;
        }
        if (page.emails().isEmpty()) {
            out.println("No " + list + " emails.");
            return ExitCodes.OK;
        }
        Table t = new Table(List.of("KEY", "ABOUT", "TO", "WHAT THE PROVIDER SAID", "REPORTED"), 60, 20, 40, 90, 24);
        for (EmailView e : page.emails()) {
            t.row(e.key(), e.about().label(), e.recipient(), e.delivery().stateText()
                    + (e.delivery().detail() == null ? "" : ": " + e.delivery().detail()), Printer.time(e.delivery().at()));
        }
        t.print(out);
        if (page.nextCursor() != null) {
            out.println();
            out.println("More: add --cursor " + page.nextCursor());
        }
        return ExitCodes.OK;
    }
}
