package io.mailroom.outbox.admin;

import io.mailroom.db.jooq.tables.AuditLog;
import org.jooq.Condition;
import org.jooq.DSLContext;
import org.jooq.Field;
import org.jooq.JSONB;
import org.jooq.Record;
import org.jooq.impl.DSL;
import org.jooq.impl.SQLDataType;

import java.time.Instant;
import java.util.Collection;
import java.util.List;
import java.util.Objects;

import static io.mailroom.db.jooq.Tables.AUDIT_LOG;

/**
 * The one owner of {@code audit_log}: what people and providers did to an email (or to the queue),
 * written in the caller's transaction so that an action that is not in the trail did not happen, and
 * read back by key for the support timeline. Other modules reach the table only through this class;
 * its rows are removed by outbox-core's retention ({@code RetentionStore}).
 */
public final class AuditTrail {

    private static final AuditLog L = AUDIT_LOG;

    private AuditTrail() {
    }

    /**
     * An entry to write.
     *
     * @param at         when it happened; null for the database's {@code now()}
     * @param key        the email's idempotency key; null for an entry about no one email
     * @param detailJson a JSON object with what else the entry keeps; may be null
     */
    public record NewEntry(Instant at, String actor, String role, String action, String key, String reason,
                           String detailJson) {
        public NewEntry {
            Objects.requireNonNull(actor, "actor");
            Objects.requireNonNull(role, "role");
            Objects.requireNonNull(action, "action");
        }
    }

    /** One entry as stored. */
    public record Entry(long id, Instant at, String actor, String role, String action, String key, String reason,
                       String detailJson) {
    }

    /** Entries of one action by minute; {@code action} as written. */
    public record MinuteCount(Instant minute, String action, long count) {
    }

    /**
     * Which entries a per-minute count takes: those of {@code action}, and if {@code detailKey} is not
     * null only those whose detail has {@code detailKey} equal to {@code detailValue}.
     */
    public record Match(String action, String detailKey, String detailValue) {
        public Match {
            Objects.requireNonNull(action, "action");
        }

        public static Match action(String action) {
            return new Match(action, null, null);
        }

        Condition condition() {
            Condition c = L.ACTION.eq(action);
            return detailKey == null ? c : c.and(DSL.jsonbGetAttributeAsText(L.DETAIL, detailKey).eq(detailValue));
        }
    }

    /** Writes one entry in {@code tx}, the transaction of the change it records. */
    public static void write(DSLContext tx, NewEntry entry) {
        var insert = tx.insertInto(L)
                .set(L.ACTOR, entry.actor())
                .set(L.ROLE, entry.role())
                .set(L.ACTION, entry.action())
                .set(L.IDEMPOTENCY_KEY, entry.key())
                .set(L.REASON, entry.reason())
                .set(L.DETAIL, entry.detailJson() == null ? null : JSONB.valueOf(entry.detailJson()));
        if (entry.at() != null) {
            insert = insert.set(L.AT, entry.at());
        }
        insert.execute();
    }

    /** The entries of these keys, oldest first. */
    public static List<Entry> forKeys(DSLContext tx, Collection<String> keys) {
        if (keys.isEmpty()) {
            return List.of();
        }
        return tx.select(L.ID, L.AT, L.ACTOR, L.ROLE, L.ACTION, L.IDEMPOTENCY_KEY, L.REASON, L.DETAIL)
                .from(L)
                .where(L.IDEMPOTENCY_KEY.in(keys))
                .orderBy(L.AT, L.ID)
                .fetch(AuditTrail::entry);
    }

    /** The newest entries (any key), newest first. */
    public static List<Entry> recent(DSLContext tx, int limit) {
        return tx.select(L.ID, L.AT, L.ACTOR, L.ROLE, L.ACTION, L.IDEMPOTENCY_KEY, L.REASON, L.DETAIL)
                .from(L).orderBy(L.AT.desc(), L.ID.desc()).limit(limit)
                .fetch(AuditTrail::entry);
    }

    /** Entries matching any of {@code matches} since {@code from}, counted by minute and action. */
    public static List<MinuteCount> perMinute(DSLContext tx, Instant from, Collection<Match> matches) {
        if (matches.isEmpty()) {
            return List.of();
        }
        Field<Instant> m = DSL.field("date_trunc('minute', {0})", SQLDataType.INSTANT, L.AT);
        return tx.select(m, L.ACTION, DSL.count()).from(L)
                .where(L.AT.ge(from))
                .and(DSL.or(matches.stream().map(Match::condition).toList()))
                .groupBy(m, L.ACTION)
                .fetch(r -> new MinuteCount(r.value1(), r.value2(), r.value3()));
    }

    private static Entry entry(Record r) {
        return new Entry(r.get(L.ID), r.get(L.AT), r.get(L.ACTOR), r.get(L.ROLE), r.get(L.ACTION),
                r.get(L.IDEMPOTENCY_KEY), r.get(L.REASON), r.get(L.DETAIL) == null ? null : r.get(L.DETAIL).data());
    }
}
