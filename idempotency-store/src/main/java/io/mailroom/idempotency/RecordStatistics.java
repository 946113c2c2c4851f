package io.mailroom.idempotency;

import io.mailroom.db.sql.TableStatistics;
import org.jooq.DSLContext;

import java.util.List;

/** The health of {@code idempotency_record} for metrics (dead tuples, size, last vacuum). */
public final class RecordStatistics {

    /** The tables idempotency-store owns. */
    public static final List<String> TABLES = List.of("idempotency_record");

    private RecordStatistics() {
    }

    public static List<TableStatistics.Row> read(DSLContext dsl) {
        return TableStatistics.read(dsl, TABLES);
    }
}
