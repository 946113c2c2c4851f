package io.mailroom.email.metrics;

import io.mailroom.db.MailroomSchema;
import io.mailroom.outbox.runtime.DispatcherRegistry;
import io.micrometer.core.instrument.FunctionCounter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import org.jooq.DSLContext;
import org.jooq.Record;
import org.jooq.SQLDialect;
import org.jooq.impl.DSL;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import javax.sql.DataSource;
import java.time.Duration;
import java.time.OffsetDateTime;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;

/**
 * Database-derived gauges: queue depth by status, age of the oldest due message, and the health of
 * the queue tables (dead tuples, last autovacuum, table + index size). They are sampled on a
 * schedule, one set of cheap queries per interval (counts come from the partial indexes), and the
 * gauges read the last sample: a scrape never touches the database. Among them
 * {@code mailroom_unserved_topic_messages{topic}}: emails due for over a minute on a topic no live
 * dispatcher serves ({@link DispatcherRegistry}), which would otherwise wait forever unseen; a
 * topic's gauge stays, at 0, once it is served again. And {@code mailroom_delivery_events_total{source,
 * kind, bounce, topic}}, read from {@code delivery_event_count}, which a trigger keeps for every
 * event stored by any process (the webhook endpoint, {@code mailroom dsn ingest}): a cluster-wide
 * count, the same on every dispatcher, so alert rules take its max across instances.
 */
public final class QueueSampler implements AutoCloseable {

    private static final Logger log = LoggerFactory.getLogger(QueueSampler.class);
    static final List<String> TABLES = List.of("outbox_message", "outbox_effect", "outbox_attempt", "idempotency_record");

    private final MailroomSchema schema;
    private final DSLContext dsl;
    private final MeterRegistry registry;
    private final Map<String, Double> values = new ConcurrentHashMap<>();
    /** Delivery events ever stored, by "source|kind|bounce|topic" (from delivery_event_count). */
    private final Map<String, Double> deliveryEvents = new ConcurrentHashMap<>();
    /** Emails waiting on each topic seen unserved since start (0 once served again). */
    private final Map<String, Double> unserved = new ConcurrentHashMap<>();
    private final ScheduledExecutorService timer;

    public QueueSampler(DataSource dataSource, MeterRegistry registry, Duration interval) {
        this.schema = MailroomSchema.of(dataSource);
        this.dsl = schema.dsl(dataSource);
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

    /** Takes one sample now (also what the schedule runs). */
    public void sample() {
        for (Record r : dsl.fetch(schema.sql("""
                SELECT 'pending' AS status, count(*) AS n FROM {schema}.outbox_message WHERE status = 'pending'
                UNION ALL SELECT 'running', count(*) FROM {schema}.outbox_message WHERE status = 'running'"""))) {
            values.put("mailroom.outbox.messages." + r.get("status", String.class), r.get("n", Double.class));
        }
        for (String status : List.of("failed", "review")) {
            values.put("mailroom.outbox.effects." + status, 0.0);
        }
        for (Record r : dsl.fetch(schema.sql("SELECT status, count(*) AS n FROM {schema}.outbox_effect WHERE status IN ('failed', 'review') GROUP BY status"))) {
            values.put("mailroom.outbox.effects." + r.get("status", String.class), r.get("n", Double.class));
        }
        Double oldest = dsl.fetchSingle(schema.sql("""
                SELECT coalesce(extract(epoch FROM now() - min(available_at)), 0)::float8 FROM {schema}.outbox_message
                WHERE status = 'pending' AND available_at <= now()""")).get(0, Double.class);
        values.put("oldest", Math.max(0.0, oldest == null ? 0.0 : oldest));
        for (Record r : dsl.fetch(schema.sql("""
                SELECT coalesce(parent.relname, c.relname) AS tbl,
                       sum(s.n_dead_tup)::float8 AS dead, sum(s.n_live_tup)::float8 AS live,
                       sum(pg_total_relation_size(c.oid))::float8 AS size,
                       max(greatest(s.last_autovacuum, s.last_vacuum)) AS vacuumed
                FROM pg_stat_user_tables s
                JOIN pg_class c ON c.oid = s.relid
                LEFT JOIN pg_inherits i ON i.inhrelid = c.oid
                LEFT JOIN pg_class parent ON parent.oid = i.inhparent
                WHERE coalesce(parent.relname, c.relname) = ANY({0}) AND s.schemaname = '{schema}'
                GROUP BY 1"""), DSL.val(TABLES.toArray(String[]::new)))) {
            String table = r.get("tbl", String.class);
            values.put(table + ".dead", r.get("dead", Double.class));
            values.put(table + ".live", r.get("live", Double.class));
            values.put(table + ".size", r.get("size", Double.class));
            OffsetDateTime vacuumed = r.get("vacuumed", OffsetDateTime.class);
            values.put(table + ".autovacuum", vacuumed == null ? Double.NaN : vacuumed.toEpochSecond());
        }
        for (Record r : dsl.fetch(schema.sql("SELECT source, kind, bounce, topic, events FROM {schema}.delivery_event_count"))) {
            String source = r.get("source", String.class);
            String kind = r.get("kind", String.class);
            String bounce = r.get("bounce", String.class);
            String topic = r.get("topic", String.class);
            String key = source + "|" + kind + "|" + bounce + "|" + topic;
            if (deliveryEvents.put(key, r.get("events", Double.class)) == null) {
                FunctionCounter.builder("mailroom.delivery.events", deliveryEvents, d -> d.getOrDefault(key, 0.0))
                        .tags("source", source, "kind", kind, "bounce", bounce, "topic", topic)
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
