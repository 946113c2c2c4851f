package io.mailroom.bench;

import io.mailroom.orders.OrderService;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.function.LongFunction;

/**
 * The exactly-once checks of scenarios 3 to 5, from both ends: what the provider accepted (every
 * order's email exactly once, nothing else, nothing refused) and what the database says (every
 * order's outbox message and effect {@code done}, its idempotency record {@code succeeded} after a
 * single reservation). A row is {@code ok} only when both hold.
 */
final class EmailChecks {

    private EmailChecks() {
    }

    /** The database's view of the confirmation emails. */
    record Database(long orders, long messagesDone, long messagesNotDone, long effectsDone, long effectsNotDone,
                    long recordsSucceeded, long recordsOther, long reservations) {

        static Database read(Connection c) throws SQLException {
            try (PreparedStatement ps = c.prepareStatement("""
                    SELECT (SELECT count(*) FROM orders),
                           (SELECT count(*) FROM mailroom.outbox_message WHERE topic = ? AND status = 'done'),
                           (SELECT count(*) FROM mailroom.outbox_message WHERE status <> 'done'),
                           (SELECT count(*) FROM mailroom.outbox_effect WHERE topic = ? AND status = 'done'),
                           (SELECT count(*) FROM mailroom.outbox_effect WHERE status <> 'done'),
                           (SELECT count(*) FROM mailroom.idempotency_record WHERE state = 'succeeded'),
                           (SELECT count(*) FROM mailroom.idempotency_record WHERE state <> 'succeeded'),
                           (SELECT coalesce(sum(reservations), 0) FROM mailroom.idempotency_record)
                    """)) {
                ps.setString(1, OrderService.TOPIC);
                ps.setString(2, OrderService.TOPIC);
                try (ResultSet rs = ps.executeQuery()) {
                    rs.next();
                    return new Database(rs.getLong(1), rs.getLong(2), rs.getLong(3), rs.getLong(4), rs.getLong(5),
                            rs.getLong(6), rs.getLong(7), rs.getLong(8));
                }
            }
        }

        /** Null when all {@code orders} orders ended with one email each, else what is wrong. */
        String problem(long expectedOrders) {
            boolean ok = orders == expectedOrders && messagesDone == expectedOrders && messagesNotDone == 0
                    && effectsDone == expectedOrders && effectsNotDone == 0 && recordsSucceeded == expectedOrders
                    && recordsOther == 0 && reservations == expectedOrders;
            return ok ? null : "database after " + expectedOrders + " orders: " + this;
        }
    }

    /**
     * Null when the provider accepted the email of every order in {@code orderIds} (all orders of the
     * run) exactly once and nothing else ({@code accepted} holds everything it ever accepted, by
     * provider id; {@code idOf} gives an order's), else what is wrong, with examples.
     */
    static String providerProblem(Collection<Long> orderIds, LongFunction<String> idOf,
                                  Map<String, Acceptances.Entry> accepted, Acceptances.Count count) {
        List<String> missing = new ArrayList<>();
        List<String> repeated = new ArrayList<>();
        Set<String> expected = new HashSet<>();
        for (long orderId : orderIds) {
            String id = idOf.apply(orderId);
            expected.add(id);
            Acceptances.Entry e = accepted.get(id);
            if (e == null) {
                missing.add("order " + orderId);
            } else if (e.times() != 1) {
                repeated.add("order " + orderId + " x" + e.times());
            }
        }
        List<String> unexpected = accepted.keySet().stream().filter(id -> !expected.contains(id)).sorted().toList();
        List<String> problems = new ArrayList<>();
        if (!missing.isEmpty()) {
            problems.add(missing.size() + " orders without an accepted email (" + examples(missing) + ")");
        }
        if (!repeated.isEmpty()) {
            problems.add(repeated.size() + " emails accepted more than once (" + examples(repeated) + ")");
        }
        if (!unexpected.isEmpty()) {
            problems.add(unexpected.size() + " accepted emails belong to no order of the run (" + examples(unexpected) + ")");
        }
        if (count.refused() > 0) {
            problems.add("the provider refused " + count.refused() + " requests (see its log)");
        }
        if (count.accepted() != accepted.values().stream().mapToLong(Acceptances.Entry::times).sum()) {
            problems.add("the provider counted " + count.accepted() + " acceptances but listed fewer");
        }
        return problems.isEmpty() ? null : String.join("; ", problems);
    }

    private static String examples(List<String> items) {
        return String.join(", ", items.subList(0, Math.min(3, items.size()))) + (items.size() > 3 ? ", ..." : "");
    }
}
