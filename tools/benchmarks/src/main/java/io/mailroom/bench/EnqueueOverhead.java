package io.mailroom.bench;

import io.mailroom.orders.OrderService;
import io.mailroom.orders.PlaceOrder;
import io.mailroom.outbox.OutboxEnqueuer;
import io.mailroom.outbox.WakeUpNotifier;
import org.jooq.DSLContext;
import org.jooq.SQLDialect;
import org.jooq.impl.DSL;

import java.math.BigDecimal;
import java.sql.Connection;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;

import static io.mailroom.orders.jooq.Tables.ORDERS;
import static io.mailroom.orders.jooq.Tables.ORDER_LINE;

/**
 * Scenario 6: what the outbox costs the business transaction. The same closed-loop load (threads,
 * orders per thread) runs three ways on one database: the order alone (orders + order_line, written
 * here with jOOQ exactly as the order service's repository writes them), the order service's
 * {@link OrderService#placeOrder} (order + outbox message + effect + pg_notify in one transaction),
 * the same with the wake-up sent after the commit from a session of its own (what the order
 * server ships, {@link io.mailroom.outbox.WakeUpNotifier}), and the same without any wake-up. The variants alternate in rounds so that the machine's noise
 * and the tables' growth fall on all of them alike.
 */
final class EnqueueOverhead {

    record Plan(int threads, int ordersPerThread, int rounds, int warmupPerThread) {
    }

    enum Variant {
        ORDER_ONLY("order only"),
        ORDER_AND_OUTBOX("order + outbox, pg_notify in txn"),
        ORDER_AND_OUTBOX_WAKE_AFTER("order + outbox, wake-up after commit"),
        ORDER_AND_OUTBOX_NO_NOTIFY("order + outbox, no wake-up");

        final String label;

        Variant(String label) {
            this.label = label;
        }
    }

    static final PlaceOrder ORDER = new PlaceOrder("ada@example.com", "Ada Lovelace", "EUR", List.of(
            new PlaceOrder.Line("SKU-1", "Notebook", 2, new BigDecimal("4.25")),
            new PlaceOrder.Line("SKU-2", "Pen set", 1, new BigDecimal("10.00"))));

    private final Plan plan;

    EnqueueOverhead(Plan plan) {
        this.plan = plan;
    }

    void run(Report report) throws Exception {
        Report.Section s = report.section("enqueue",
                "6. Enqueue overhead: order-only vs order + outbox transaction, same load (" + plan.threads()
                        + " threads, closed loop)",
                List.of(new Report.Column("variant", "variant"), new Report.Column("transactions", "txns"),
                        new Report.Column("seconds", "s"), new Report.Column("tx_per_s", "tx/s"),
                        new Report.Column("p50_ms", "p50 ms"), new Report.Column("p95_ms", "p95 ms"),
                        new Report.Column("p99_ms", "p99 ms"), new Report.Column("max_ms", "max ms"),
                        new Report.Column("overhead_throughput", "x tput cost"),
                        new Report.Column("overhead_p50", "x p50"),
                        new Report.Column("client_cpu_ms_per_1k", "client CPU ms/1k"),
                        new Report.Column("db_cpu_ms_per_1k", "PG CPU ms/1k"),
                        new Report.Column("status", "check")));
        try (BenchDb db = BenchDb.create()) {
            DSLContext dsl = DSL.using(db.pool("bench-orders", plan.threads()), SQLDialect.POSTGRES);
            Map<Variant, Work> work = Map.of(
                    Variant.ORDER_ONLY, () -> orderOnly(dsl),
                    Variant.ORDER_AND_OUTBOX, new Work() {
                        final OrderService service = new OrderService(dsl, new OutboxEnqueuer(null, true));
                        public void once() {
                            service.placeOrder(ORDER);
                        }
                    },
                    Variant.ORDER_AND_OUTBOX_WAKE_AFTER, new Work() {
                        final OrderService service = new OrderService(dsl, new OutboxEnqueuer(null, false),
                                new WakeUpNotifier(db.pool("bench-wakeups", 1)));
                        public void once() {
                            service.placeOrder(ORDER);
                        }
                    },
                    Variant.ORDER_AND_OUTBOX_NO_NOTIFY, new Work() {
                        final OrderService service = new OrderService(dsl, new OutboxEnqueuer(null, false));
                        public void once() {
                            service.placeOrder(ORDER);
                        }
                    });
            ExecutorService pool = Executors.newFixedThreadPool(plan.threads());
            try (Connection monitor = db.connect()) {
                CpuMeter meter = new CpuMeter(monitor, true);
                for (Variant v : Variant.values()) {
                    measure(pool, work.get(v), plan.warmupPerThread(), null, null);
                }
                Map<Variant, Acc> acc = new java.util.EnumMap<>(Variant.class);
                for (Variant v : Variant.values()) {
                    acc.put(v, new Acc());
                }
                for (int round = 0; round < plan.rounds(); round++) {
                    for (Variant v : Variant.values()) {
                        measure(pool, work.get(v), plan.ordersPerThread(), acc.get(v), meter);
                    }
                }
                long orders = count(monitor, "orders");
                long messages = count(monitor, "mailroom.outbox_message");
                long effects = count(monitor, "mailroom.outbox_effect");
                int perVariant = plan.threads() * (plan.ordersPerThread() * plan.rounds() + plan.warmupPerThread());
                long expectedOrders = (long) Variant.values().length * perVariant;
                long expectedMessages = expectedOrders - perVariant; // every variant but the order-only one
                Acc base = acc.get(Variant.ORDER_ONLY);
                for (Variant v : Variant.values()) {
                    Acc a = acc.get(v);
                    Percentiles p = Percentiles.ofNanos(a.latencies());
                    Map<String, Object> row = s.row();
                    row.put("variant", v.label);
                    row.put("transactions", a.count);
                    row.put("seconds", a.nanos / 1e9);
                    row.put("tx_per_s", a.perSecond());
                    row.put("p50_ms", p.p50Ms());
                    row.put("p95_ms", p.p95Ms());
                    row.put("p99_ms", p.p99Ms());
                    row.put("max_ms", p.maxMs());
                    row.put("overhead_throughput", base.perSecond() / a.perSecond());
                    row.put("overhead_p50", p.p50Ms() / Percentiles.ofNanos(base.latencies()).p50Ms());
                    row.put("client_cpu_ms_per_1k", a.clientNanos / 1e6 * 1000.0 / a.count);
                    row.put("db_cpu_ms_per_1k", meter.databaseVisible() ? a.dbNanos / 1e6 * 1000.0 / a.count : null);
                    row.put("load1", LoadAverage.oneMinute());
                    String problem = a.errors > 0 ? a.errors + " transactions failed" : null;
                    if (orders != expectedOrders || messages != expectedMessages || effects != expectedMessages) {
                        problem = "database holds " + orders + " orders, " + messages + " outbox messages, " + effects
                                + " effects; expected " + expectedOrders + ", " + expectedMessages + ", " + expectedMessages;
                    }
                    row.put("status", problem == null ? Report.OK : Report.FAILED);
                    if (problem != null) {
                        row.put("note", problem);
                    }
                }
            } finally {
                pool.shutdownNow();
            }
        }
        s.note("x tput cost = order-only tx/s / variant tx/s (1.00 = free); x p50 = variant p50 / order-only p50");
        s.note("each variant's latency is one whole transaction as the caller sees it: begin, inserts, commit (fsync)");
    }

    @FunctionalInterface
    private interface Work {
        void once();
    }

    /** The order's rows only: the inserts of the order service's repository, one transaction. */
    private static void orderOnly(DSLContext dsl) {
        ORDER.validate();
        dsl.transaction(cfg -> {
            DSLContext tx = cfg.dsl();
            var created = tx.insertInto(ORDERS)
                    .set(ORDERS.CUSTOMER_EMAIL, ORDER.customerEmail())
                    .set(ORDERS.CUSTOMER_NAME, ORDER.customerName())
                    .set(ORDERS.CURRENCY, ORDER.currency())
                    .set(ORDERS.TOTAL, ORDER.total())
                    .returningResult(ORDERS.ID, ORDERS.CREATED_AT)
                    .fetchSingle();
            var l = ORDER_LINE;
            var insert = tx.insertInto(l, l.ORDER_ID, l.LINE_NO, l.SKU, l.NAME, l.QUANTITY, l.UNIT_PRICE);
            int lineNo = 0;
            for (PlaceOrder.Line line : ORDER.lines()) {
                insert = insert.values(created.value1(), ++lineNo, line.sku(), line.name(), line.quantity(), line.unitPrice());
            }
            insert.execute();
        });
    }

    private static final class Acc {
        long count;
        long nanos;
        long errors;
        long clientNanos;
        long dbNanos;
        final List<long[]> chunks = new ArrayList<>();

        double perSecond() {
            return nanos == 0 ? 0 : count * 1e9 / nanos;
        }

        long[] latencies() {
            return chunks.stream().flatMapToLong(java.util.Arrays::stream).toArray();
        }
    }

    private void measure(ExecutorService pool, Work work, int perThread, Acc acc, CpuMeter meter) throws Exception {
        List<Future<long[]>> futures = new ArrayList<>();
        long[] errors = new long[plan.threads()];
        CpuMeter.Sample before = meter == null ? null : meter.sample(List.of());
        long t0 = System.nanoTime();
        for (int t = 0; t < plan.threads(); t++) {
            int thread = t;
            futures.add(pool.submit(() -> {
                long[] lat = new long[perThread];
                for (int i = 0; i < perThread; i++) {
                    long s = System.nanoTime();
                    try {
                        work.once();
                    } catch (RuntimeException e) {
                        errors[thread]++;
                    }
                    lat[i] = System.nanoTime() - s;
                }
                return lat;
            }));
        }
        List<long[]> results = new ArrayList<>();
        for (Future<long[]> f : futures) {
            results.add(f.get());
        }
        long t1 = System.nanoTime();
        if (acc != null) {
            CpuMeter.Used used = meter.between(before, meter.sample(List.of()));
            acc.count += (long) perThread * plan.threads();
            acc.nanos += t1 - t0;
            acc.chunks.addAll(results);
            acc.clientNanos += used.jvmNanos();
            acc.dbNanos += used.backendNanos();
            for (long e : errors) {
                acc.errors += e;
            }
        }
    }

    private static long count(Connection c, String table) throws Exception {
        try (var st = c.createStatement(); var rs = st.executeQuery("SELECT count(*) FROM " + table)) {
            rs.next();
            return rs.getLong(1);
        }
    }
}
