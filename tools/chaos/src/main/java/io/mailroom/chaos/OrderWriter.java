package io.mailroom.chaos;

import io.mailroom.db.sql.SqlStates;
import io.mailroom.orders.OrderService;
import io.mailroom.orders.PlaceOrder;
import io.mailroom.orders.PlacedOrder;
import org.jooq.SQLDialect;
import org.jooq.impl.DSL;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import javax.sql.DataSource;
import java.math.BigDecimal;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.locks.LockSupport;

/**
 * Places orders through {@link OrderService#placeOrder(PlaceOrder)} at a steady rate, on its own
 * thread, and remembers when each commit was acknowledged (the start of the delivery delay). A
 * failed order (the database restarting, say) is counted by SQLSTATE and not retried: it was not
 * committed, or if its commit went through unacknowledged the database still shows it, and the
 * checks go by the database.
 */
final class OrderWriter implements AutoCloseable {

    private static final Logger log = LoggerFactory.getLogger(OrderWriter.class);

    private final OrderService service;
    private final long periodNanos;
    /** Every acknowledged order, in order: an id can come twice after a failover that rewound the sequence. */
    private final List<Acknowledged> acknowledged = java.util.Collections.synchronizedList(new ArrayList<>());

    /** An order the database acknowledged: its id, the customer it was for, when. */
    record Acknowledged(long orderId, String customerEmail, long atMillis) {
    }
    private final Map<String, AtomicInteger> failures = new ConcurrentHashMap<>();
    private final AtomicInteger attempted = new AtomicInteger();
    private volatile boolean running = true;
    private final Thread thread;

    OrderWriter(DataSource dataSource, double ordersPerSecond) {
        this.service = new OrderService(DSL.using(dataSource, SQLDialect.POSTGRES));
        this.periodNanos = (long) (1_000_000_000L / ordersPerSecond);
        this.thread = Thread.ofPlatform().name("chaos-order-writer").start(this::loop);
    }

    private void loop() {
        long start = System.nanoTime();
        for (long i = 0; running; i++) {
            long due = start + i * periodNanos;
            long wait = due - System.nanoTime();
            if (wait > 0) {
                LockSupport.parkNanos(wait);
            }
            if (!running) {
                break;
            }
            attempted.incrementAndGet();
            try {
                PlaceOrder order = order(i);
                PlacedOrder placed = service.placeOrder(order);
                acknowledged.add(new Acknowledged(placed.orderId(), order.customerEmail(), System.currentTimeMillis()));
            } catch (RuntimeException e) {
                String state = SqlStates.sqlState(e);
                failures.computeIfAbsent(state == null ? e.getClass().getSimpleName() : "SQLSTATE " + state,
                        k -> new AtomicInteger()).incrementAndGet();
                log.debug("Order {} not placed: {}", i, e.toString());
            }
        }
    }

    private static PlaceOrder order(long i) {
        List<PlaceOrder.Line> lines = new ArrayList<>();
        int n = 1 + (int) (i % 3);
        for (int l = 1; l <= n; l++) {
            lines.add(new PlaceOrder.Line("SKU-" + l, "Article " + l, l, new BigDecimal("4.50").multiply(BigDecimal.valueOf(l))));
        }
        return new PlaceOrder("customer" + i + "@example.com", "Customer " + i, "EUR", lines);
    }

    /** Orders whose commit was acknowledged, with the time of the acknowledgement (the latest, for an id given twice). */
    Map<Long, Long> committedAtMillis() {
        Map<Long, Long> at = new HashMap<>();
        acknowledged().forEach(a -> at.put(a.orderId(), a.atMillis()));
        return at;
    }

    /** Every acknowledged order, in the order of acknowledgement. */
    List<Acknowledged> acknowledged() {
        synchronized (acknowledged) {
            return List.copyOf(acknowledged);
        }
    }

    /** Orders the database refused or that failed in flight, by SQLSTATE. */
    Map<String, Integer> failures() {
        Map<String, Integer> out = new java.util.TreeMap<>();
        failures.forEach((k, v) -> out.put(k, v.get()));
        return out;
    }

    int attempted() {
        return attempted.get();
    }

    @Override
    public void close() {
        running = false;
        try {
            thread.join(30_000);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
