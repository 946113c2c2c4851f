package io.mailroom.outbox.admin;

import io.mailroom.db.MailroomSchema;
import io.mailroom.db.sql.TableStatistics;
import org.jooq.DSLContext;
import org.jooq.Record;

import java.util.List;

/**
 * The outbox's figures for metrics: hot-queue depth by status (counted through the partial indexes),
 * effects waiting for a person, the age of the oldest due message, and the health of outbox-core's
 * own tables. Cheap enough to be sampled every few seconds; the sampler reads nothing else of them.
 */
public final class QueueFigures {

    /** The tables outbox-core owns whose health is sampled. */
    public static final List<String> TABLES = List.of("outbox_message", "outbox_effect", "outbox_attempt");

    private QueueFigures() {
    }

    /**
     * One reading of the queue.
     *
     * @param oldestDueSeconds seconds the oldest due pending message has waited, 0 when none waits
     */
    public record Depth(long pending, long running, long failed, long review, double oldestDueSeconds) {
    }

    public static Depth depth(DSLContext dsl) {
        MailroomSchema schema = MailroomSchema.of(dsl);
        long pending = 0;
        long running = 0;
        for (Record r : dsl.fetch(schema.sql("""
                SELECT 'pending' AS status, count(*) AS n FROM {schema}.outbox_message WHERE status = 'pending'
                UNION ALL SELECT 'running', count(*) FROM {schema}.outbox_message WHERE status = 'running'"""))) {
            long n = r.get("n", Long.class);
            if ("pending".equals(r.get("status", String.class))) {
                pending = n;
            } else {
                running = n;
            }
        }
        long failed = 0;
        long review = 0;
        for (Record r : dsl.fetch(schema.sql(
                "SELECT exception_status, count(*) AS n FROM {schema}.outbox_effect"
                        + " WHERE exception_status IN ('failed', 'review') GROUP BY exception_status"))) {
            // the exception index (V29): no index of the effect holds its status itself
            long n = r.get("n", Long.class);
            if ("failed".equals(r.get("exception_status", String.class))) {
                failed = n;
            } else {
                review = n;
            }
        }
        Double oldest = dsl.fetchSingle(schema.sql("""
                SELECT coalesce(extract(epoch FROM now() - min(available_at)), 0)::float8 FROM {schema}.outbox_message
                WHERE status = 'pending' AND available_at <= now()""")).get(0, Double.class);
        return new Depth(pending, running, failed, review, Math.max(0.0, oldest == null ? 0.0 : oldest));
    }

    /** The health of {@link #TABLES}. */
    public static List<TableStatistics.Row> tableStatistics(DSLContext dsl) {
        return TableStatistics.read(dsl, TABLES);
    }
}
