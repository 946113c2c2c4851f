package io.mailroom.support.cli;

import io.mailroom.support.ErasureResult;
import io.mailroom.support.HttpFailure;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

import java.io.PrintWriter;

/**
 * {@code support erase --address A --reason R}: a customer's right to erasure, as the API's
 * {@code POST /api/erasures}. Exit 0 with what was erased (zero counts when nothing held it), 2 for
 * a bad address or a missing reason, 4 while an email to it is being sent (try again).
 */
@Command(name = "erase", mixinStandardHelpOptions = true,
        description = "Erase an address from the whole history on the customer's request: recipient, name, data and"
                + " renderings of its emails; keys, statuses and counts stay; a suppression stays in force by a keyed hash.")
final class EraseCommand extends CliCommand {

    @Option(names = "--address", paramLabel = "ADDRESS", required = true, description = "the email address to erase")
    String address;

    @Option(names = "--reason", paramLabel = "TEXT", required = true,
            description = "why (required; kept in the audit log, with the address taken out)")
    String reason;

    @Override
    int run(PrintWriter out) throws Exception {
        ErasureResult r;
        try {
            r = cli.service().erase(cli.actor(), address, reason);
        } catch (HttpFailure e) {
            if (e.status() == 409) {
                spec.commandLine().getErr().println("busy: " + e.getMessage());
                return ExitCodes.BUSY;
            }
            throw e;
        }
        if (json()) {
            printJson(out, r);
        } else {
            out.println(r.summary());
            if (!r.keys().isEmpty()) {
                out.println("Emails: " + String.join(", ", r.keys()));
            }
            if (!r.cancelled().isEmpty()) {
                out.println("Cancelled (were waiting): " + String.join(", ", r.cancelled()));
            }
        }
        return ExitCodes.OK;
    }
}
