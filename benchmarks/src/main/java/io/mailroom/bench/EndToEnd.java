package io.mailroom.bench;

import java.util.List;

/**
 * Scenarios 3 and 4: orders through the order service's HTTP API, emails through the real HTTP
 * transport to a loopback stub provider (3) or the SMTP transport to a loopback SMTP sink (4), each
 * in its own process; emails/s. They need the runnable dispatcher service that wires the
 * email-dispatcher transports to the outbox, which does not exist yet (issue 5), so each reports a
 * row saying so instead of a number. When the service exists, {@link #run} starts it, the order
 * server ({@code io.mailroom.orders.OrderServer}) and the stub, posts orders and times the stub's
 * count, filling the same columns.
 */
final class EndToEnd {

    static final List<Report.Column> COLUMNS = List.of(
            new Report.Column("scenario", "scenario"), new Report.Column("orders", "orders"),
            new Report.Column("seconds", "s"), new Report.Column("emails_per_s", "emails/s"),
            new Report.Column("client_cpu_ms_per_1k", "client CPU ms/1k"),
            new Report.Column("db_cpu_ms_per_1k", "PG CPU ms/1k"), new Report.Column("status", "check"));

    private static final String WHY = "needs the runnable dispatcher service (email-dispatcher wired to the outbox, issue 5); "
            + "the transports exist, the service is being built";

    private EndToEnd() {
    }

    static void run(Report report) {
        Report.Section s = report.section("e2e", "3+4. End to end: POST /orders -> outbox -> transport -> loopback provider",
                COLUMNS);
        for (String scenario : List.of("3. HTTP transport -> stub provider", "4. SMTP transport -> SMTP sink")) {
            s.notAvailable(scenario, WHY);
        }
    }
}
