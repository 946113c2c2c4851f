package io.mailroom.support.cli;

import io.mailroom.support.InvalidParameterException;
import io.mailroom.support.SuppressionView;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;

import java.io.PrintWriter;
import java.util.List;

/**
 * {@code mailroom support suppressions [list|add ADDRESS|lift ADDRESS]}: the suppression list.
 * Listing needs viewer; adding and lifting need support and a reason, audited.
 */
@Command(name = "suppressions", mixinStandardHelpOptions = true, sortOptions = false,
        description = {"The suppression list: addresses no email is sent to.",
                "Examples: suppressions;  suppressions --address ann@example.com --lifted;",
                "          suppressions add ann@example.com --reason \"asked by phone\";  suppressions lift ann@example.com --reason \"mailbox fixed\""})
final class SuppressionsCommand extends CliCommand {

    @Parameters(index = "0", arity = "0..1", paramLabel = "ACTION", description = "list (default), add or lift")
    String action;

    @Parameters(index = "1", arity = "0..1", paramLabel = "ADDRESS", description = "the address to add or lift")
    String address;

    @Option(names = "--address", paramLabel = "ADDRESS", description = "list: only this address")
    String filter;

    @Option(names = "--lifted", description = "list: with lifted entries")
    boolean lifted;

    @Option(names = "--reason", paramLabel = "TEXT", description = "add, lift: why (required; kept in the audit log)")
    String reason;

    @Option(names = "--before", paramLabel = "ID", description = "list: continue before this entry id (printed at the end of a page)")
    String before;

    @Option(names = "--limit", paramLabel = "N", description = "list: how many (1-200, default 50)")
    String limit;

    @Override
    int run(PrintWriter out) throws Exception {
        String what = action == null ? "list" : action;
        switch (what) {
            case "list" -> {
                List<SuppressionView> entries = cli.service().suppressions(filter, lifted, before, limit);
                if (json()) {
                    printJson(out, entries);
                } else {
                    print(out, entries);
                }
            }
            case "add" -> {
                SuppressionView added = cli.service().suppress(cli.actor(), required(), reason);
                if (json()) {
                    printJson(out, added);
                } else {
                    out.println("Suppressed " + added.address() + ": no email will be sent to it until lifted");
                }
            }
            case "lift" -> {
                List<SuppressionView> lifted = cli.service().liftSuppression(cli.actor(), required(), reason);
                if (json()) {
                    printJson(out, lifted);
                } else {
                    out.println("Lifted " + lifted.size() + " suppression(s) of " + lifted.getFirst().address() + " ("
                            + String.join(", ", lifted.stream().map(SuppressionView::reasonText).toList()) + ")");
                }
            }
            default -> throw new InvalidParameterException("action", "ACTION must be list, add or lift, got '" + what + "'");
        }
        return ExitCodes.OK;
    }

    private String required() {
        if (address == null || address.isBlank()) {
            throw new InvalidParameterException("address", action + " needs an ADDRESS");
        }
        return address;
    }

    private static void print(PrintWriter out, List<SuppressionView> entries) {
        if (entries.isEmpty()) {
            out.println("No suppressed addresses.");
            return;
        }
        Table t = new Table(List.of("ID", "ADDRESS", "WHY", "SINCE", "BY", "LIFTED"), 10, 50, 80, 24, 30, 60);
        for (SuppressionView s : entries) {
            t.row(Long.toString(s.id()), s.address(), s.reasonText() + (s.detail() == null ? "" : ": " + s.detail()),
                    Printer.time(s.createdAt()), s.createdBy(),
                    s.active() ? "" : Printer.time(s.liftedAt()) + " by " + s.liftedBy() + ": " + s.liftReason());
        }
        t.print(out);
    }
}
