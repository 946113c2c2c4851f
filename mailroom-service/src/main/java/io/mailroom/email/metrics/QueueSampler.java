package io.mailroom.email.metrics;

import io.mailroom.db.MailroomSchema;
import io.mailroom.db.sql.TableStatistics;
import io.mailroom.delivery.DeliveryEventTotals;
import io.mailroom.idempotency.RecordStatistics;
import io.mailroom.outbox.admin.QueueFigures;
import io.mailroom.outbox.runtime.DispatcherRegistry;
import io.micrometer.core.instrument.FunctionCounter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import org.jooq.DSLContext;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import javax.sql.DataSource;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;

/**
 * Database-derived gauges: queue depth by status, age of the oldest due message, and the health of
 * the queue tables (dead tuples, last autovacuum, table + index size). They are sampled on a
 * schedule, one set of cheap queries per interval (counts come from the partial indexes), each
 * through the API of the module that owns the table (outbox-core's {@link QueueFigures},
 * idempotency-store's {@link RecordStatistics}, delivery-events' {@link DeliveryEventTotals}), and the
 * gauges read the last sample: a scrape never touches the database. Among them
 * {@code mailroom_unserved_topic_messages{topic}}: emails due for over a minute on a topic no live
 * dispatcher serves ({@link DispatcherRegistry}), which would otherwise wait forever unseen; a
 * topic's gauge stays, at 0, once it is served again. And {@code mailroom_delivery_events_total{source,
 * kind, bounce, topic}}, read from delivery-events' totals, which a trigger keeps for every
 * event stored by any process (the webhook endpoint, {@code mailroom dsn ingest}): a cluster-wide
 * count, the same on every dispatcher, so alert rules take its max across instances.
 */
public final class QueueSampler implements AutoCloseable {

    private static final Logger log = LoggerFactory.getLogger(QueueSampler.class);
    static final List<String> TABLES = concat(QueueFigures.TABLES, RecordStatistics.TABLES);

    private final DSLContext dsl;
    private final MeterRegistry registry;
    private final Map<String, Double> values = new ConcurrentHashMap<>();
    /** Delivery events ever stored, by "source|kind|bounce|topic" (from delivery_event_count). */
    private final Map<String, Double> deliveryEvents = new ConcurrentHashMap<>();
    /** Emails waiting on each topic seen unserved since start (0 once served again). */
    private final Map<String, Double> unserved = new ConcurrentHashMap<>();
    private final ScheduledExecutorService timer;

    public QueueSampler(DataSource dataSource, MeterRegistry registry, Duration interval) {
        this.dsl = MailroomSchema.of(dataSource).dsl(dataSource);
        this.registry = registry;
        gauge(registry, "mailroom.outbox.messages", "pending", "Messages in the hot queue by status", "status");
        gauge(registry, "mailroom.outbox.messages", "running", "Messages in the hot queue by status", "status");
        gauge(registry, "mailroom.outbox.effects", "failed", "Business effects by final status", "status");
        gauge(registry, "mailroom.outbox.effects", "review", "Business effects by final status", "status");
        Gauge.builder("mailroom.outbox.oldest.pending.age", values, v -> v.getOrDefault("oldest", 0.0))
                .description("Seconds the oldest due pending message has waited").baseUnit("seconds").register(registry);
        for (String table : TABLES) {
            for (String kind : List.of("dead", "live")) {
                Gauge.builder("mailroom.table.tuples", values, v -> v.getOrDefault(table + "." + kind, Double.NaN))
                        .tags("table", table, "kind", kind).description("Tuples per table (partitions summed)").register(registry);
            }
            Gauge.builder("mailroom.table.size", values, v -> v.getOrDefault(table + ".size", Double.NaN))
                    .tags("table", table).baseUnit("bytes").description("Table + indexes + TOAST (partitions summed)")
                    .register(registry);
            Gauge.builder("mailroom.table.last.autovacuum", values, v -> v.getOrDefault(table + ".autovacuum", Double.NaN))
                    .tags("table", table).baseUnit("seconds")
                    .description("Epoch seconds of the last autovacuum (latest partition); NaN if never").register(registry);
        }
        this.timer = Executors.newSingleThreadScheduledExecutor(r -> Thread.ofPlatform().daemon().name("mailroom-metrics").unstarted(r));
        timer.scheduleWithFixedDelay(this::sampleQuietly, 0, interval.toMillis(), TimeUnit.MILLISECONDS);
    }

    private void gauge(MeterRegistry registry, String name, String status, String description, String tag) {
        Gauge.builder(name, values, v -> v.getOrDefault(name + "." + status, 0.0)).tag(tag, status)
                .description(description).register(registry);
    }

    /** Takes one sample now (also what the schedule runs); every reading goes through its table's owner. */
    public void sample() {
        QueueFigures.Depth depth = QueueFigures.depth(dsl);
        values.put("mailroom.outbox.messages.pending", (double) depth.pending());
        values.put("mailroom.outbox.messages.running", (double) depth.running());
        values.put("mailroom.outbox.effects.failed", (double) depth.failed());
        values.put("mailroom.outbox.effects.review", (double) depth.review());
        values.put("oldest", depth.oldestDueSeconds());
        List<TableStatistics.Row> tables = new ArrayList<>(QueueFigures.tableStatistics(dsl));
        tables.addAll(RecordStatistics.read(dsl));
        for (TableStatistics.Row r : tables) {
            values.put(r.table() + ".dead", r.dead());
            values.put(r.table() + ".live", r.live());
            values.put(r.table() + ".size", r.size());
            values.put(r.table() + ".autovacuum", r.vacuumed() == null ? Double.NaN : r.vacuumed().toEpochSecond());
        }
        for (DeliveryEventTotals.Total t : DeliveryEventTotals.read(dsl)) {
            String key = t.source() + "|" + t.kind() + "|" + t.bounce() + "|" + t.topic();
            if (deliveryEvents.put(key, t.events()) == null) {
                FunctionCounter.builder("mailroom.delivery.events", deliveryEvents, d -> d.getOrDefault(key, 0.0))
                        .tags("source", t.source(), "kind", t.kind(), "bounce", t.bounce(), "topic", t.topic())
                        .description("Delivery events stored by every process (webhooks, DSN pipe), counted in the database")
                        .register(registry);
            }
        }
        Map<String, Long> now = DispatcherRegistry.unservedTopics(dsl);
        unserved.replaceAll((topic, v) -> 0.0);
        now.forEach((topic, waiting) -> {
            if (unserved.put(topic, waiting.doubleValue()) == null) {
                Gauge.builder("mailroom.unserved.topic.messages", unserved, u -> u.getOrDefault(topic, 0.0)).tag("topic", topic)
                        .description("Emails due for over a minute on a topic no running dispatcher serves").register(registry);
            }
        });
    }

    private static List<String> concat(List<String> a, List<String> b) {
        List<String> all = new ArrayList<>(a);
        all.addAll(b);
        return List.copyOf(all);
    }

    private void sampleQuietly() {
        try {
            sample();
        } catch (RuntimeException e) {
            log.warn("Could not sample queue metrics: {}", e.toString());
        }
    }

    @Override
    public void close() {
        timer.shutdownNow();
    }
}
