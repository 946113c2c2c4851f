package io.mailroom.db.sql;

import io.mailroom.db.MailroomSchema;
import org.jooq.DSLContext;
import org.jooq.Record;
import org.jooq.impl.DSL;

import java.time.OffsetDateTime;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;

/**
 * The health of tables in Mailroom's schema as PostgreSQL's statistics see them (dead and live
 * tuples, size with indexes and TOAST, last vacuum), partitions summed under their parent. Reads only
 * the catalog; each module asks for its own tables through its own API.
 */
public final class TableStatistics {

    private TableStatistics() {
    }

    /** One table's figures; {@code vacuumed} is null when it was never vacuumed. */
    public record Row(String table, double dead, double live, double size, OffsetDateTime vacuumed) {
    }

    /** The figures of {@code tables} in the schema {@code dsl} reaches; a table without statistics is left out. */
    public static List<Row> read(DSLContext dsl, Collection<String> tables) {
        MailroomSchema schema = MailroomSchema.of(dsl);
        List<Row> rows = new ArrayList<>();
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
                GROUP BY 1"""), DSL.val(tables.toArray(String[]::new)))) {
            rows.add(new Row(r.get("tbl", String.class), r.get("dead", Double.class), r.get("live", Double.class),
                    r.get("size", Double.class), r.get("vacuumed", OffsetDateTime.class)));
        }
        return rows;
    }
}
