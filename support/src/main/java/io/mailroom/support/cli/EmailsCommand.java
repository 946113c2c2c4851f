package io.mailroom.support.cli;

import io.mailroom.support.EmailFilter;
import io.mailroom.support.EmailPage;
import io.mailroom.support.InvalidParameterException;
import io.mailroom.support.AboutEmails;
import io.mailroom.support.About;
import io.mailroom.support.Params;
import io.mailroom.support.EmailSearch;
import io.mailroom.support.SearchPage;
import io.mailroom.support.SupportParams;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;

import java.io.PrintWriter;
import java.time.Instant;

@Command(name = "emails", mixinStandardHelpOptions = true, sortOptions = false,
        description = {"The emails about one business entity (with their history), the emails in one status, or a search",
                "of every email the history keeps (any of --recipient, --domain, --topic, --template, --delivery, --key,",
                "--key-prefix, --provider-id, --error, with --about, --status, --since, --until: newest queued first).",
                "Examples: emails --about user:42;  emails --order 102 (= --about order:102);",
                "          emails --status failed --since 1h;  emails --status pending --older-than 30m;  emails --status scheduled",
                "          emails --recipient ann@example.com;  emails --domain example.com --status failed --since 1d"})
final class EmailsCommand extends CliCommand {

    @Option(names = "--about", paramLabel = "TYPE:ID", description = "what the emails are about: order:102, user:42, invoice:2026-17")
    String about;

    @Option(names = "--order", paramLabel = "ORDER", description = "an order number (the same as --about order:ORDER)")
    String order;

    @Option(names = "--status", paramLabel = "STATUS", description = "failed, review, pending, scheduled, sent, cancelled or closed")
    String status;

    @Option(names = "--since", paramLabel = "WHEN", description = "changed at or after: 1h, 2d, or 2025-01-31T09:00:00Z")
    String since;

    @Option(names = "--until", paramLabel = "WHEN", description = "changed before: same forms as --since")
    String until;

    @Option(names = "--older-than", paramLabel = "DURATION", description = "queued more than this long ago: 30m, 2h, 1d")
    String olderThan;

    @Mixin
    SearchOptions filters = new SearchOptions();

    @Option(names = "--limit", paramLabel = "N", description = "how many (1-200, default 50)")
    String limit;

    @Option(names = "--cursor", paramLabel = "CURSOR", description = "continue after the previous page (printed at its end)")
    String cursor;

    @Override
    int run(PrintWriter out) throws Exception {
        // scheduled is told apart from pending by the search (a status list reads the stored status)
        boolean searching = filters.any() || (about != null && status != null)
                || (status != null && io.mailroom.support.EmailStatus.parse(status) == io.mailroom.support.EmailStatus.SCHEDULED);
        if (searching) {
            if (order != null) {
                throw new InvalidParameterException("order", "--order does not combine with a search: use --about order:ORDER");
            }
            java.util.Map<String, String> p = filters.params();
            p.put(SupportParams.ABOUT, about);
            p.put(SupportParams.STATUS, status);
            p.put(SupportParams.SINCE, since);
            p.put(SupportParams.UNTIL, until);
            p.put(SupportParams.OLDER_THAN, olderThan);
            p.put(SupportParams.CURSOR, cursor);
            p.put(SupportParams.LIMIT, limit);
            SearchPage page = cli.service().search(EmailSearch.parse(p::get, Instant.now()));
            if (json()) {
                printJson(out, page);
            } else {
                Printer.search(out, page);
            }
            return ExitCodes.OK;
        }
        int given = (about != null ? 1 : 0) + (order != null ? 1 : 0) + (status != null ? 1 : 0);
        if (given != 1) {
            throw new InvalidParameterException(about != null ? "about" : "order",
                    "give one of --about TYPE:ID, --order ORDER or --status STATUS");
        }
        if (about != null || order != null) {
            String option = about != null ? "about" : "order";
            if (since != null || until != null || olderThan != null || limit != null || cursor != null) {
                throw new InvalidParameterException(option, "--since, --until, --older-than, --limit and --cursor go with --status, not --"
                        + option);
            }
            AboutEmails emails;
            if (about != null) {
                About a = Params.about("about", about);
                emails = cli.service().emailsAbout(a.type(), a.id());
            } else {
                emails = cli.service().emailsOfOrder(Params.orderId("order", order));
            }
            if (json()) {
                printJson(out, emails);
            } else {
                Printer.about(out, emails);
            }
            return ExitCodes.OK;
        }
        EmailFilter filter = new EmailFilter(Params.status("status", status), Params.time("since", since, Instant.now()),
                Params.time("until", until, Instant.now()), Params.duration("older-than", olderThan),
                Params.cursor("cursor", cursor), Params.limit("limit", limit));
        EmailPage page = cli.service().emails(filter);
        if (json()) {
            printJson(out, page);
        } else {
            Printer.page(out, page);
        }
        return ExitCodes.OK;
    }
}
