package io.mailroom.outbox.admin;

import io.mailroom.db.jooq.tables.OutboxEffect;
import io.mailroom.db.jooq.tables.OutboxEffectTerm;
import org.jooq.Condition;
import org.jooq.DSLContext;
import org.jooq.Field;
import org.jooq.Record;
import org.jooq.Select;
import org.jooq.SelectField;
import org.jooq.SortField;
import org.jooq.impl.DSL;

import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;

import static io.mailroom.db.jooq.Tables.OUTBOX_EFFECT;
import static io.mailroom.db.jooq.Tables.OUTBOX_EFFECT_TERM;
import static io.mailroom.db.jooq.Tables.OUTBOX_MESSAGE;

/**
 * Searches the effect history by any combination of its search terms ({@code outbox_effect_term}:
 * {@code to:}, {@code domain:}, {@code template:}, {@code tag:}), its own columns (status, topic, the
 * entity it is about, key exact or by prefix, words of the last error) and a time range; newest
 * first, a page at a time by keyset on (created_at, key).
 *
 * <p>How each search is served: with a term, the term's index in time order drives (a page is
 * read and the rest filters it); else the entity, a key, a key prefix or the topic drive through their
 * own indexes; else the time index. Every other condition filters the rows found, so a page costs
 * the rows read until it is full: a rare combination over a common term reads more (bound it with a
 * time range). {@link #query} is unexecuted, so a test or a benchmark can EXPLAIN exactly what runs.
 */
public final class EffectSearch {

    private static final OutboxEffect E = OUTBOX_EFFECT;

    private EffectSearch() {
    }

    /**
     * What to look for; null (or empty) means "any". Several terms must all match.
     *
     * @param keys       only these keys (e.g. those a provider's message id names); an empty list matches nothing
     * @param errorWords words that must all appear in the last error (PostgreSQL's simple text search)
     * @param since      created at or after
     * @param until      created before
     * @param afterCreatedAt with {@code afterKey}: the last row of the previous page
     */
    public record Criteria(List<String> terms, String status, String topic, String aggregateType, String aggregateId,
                           String key, String keyPrefix, List<String> keys, String errorWords, Instant since, Instant until,
                           Instant afterCreatedAt, String afterKey, int limit) {
        public Criteria {
            terms = terms == null ? List.of() : List.copyOf(terms);
            keys = keys == null ? null : List.copyOf(keys);
            if ((afterCreatedAt == null) != (afterKey == null)) {
                throw new IllegalArgumentException("a page cursor needs both created_at and key");
            }
            if ((aggregateType == null) != (aggregateId == null)) {
                throw new IllegalArgumentException("an entity needs both its type and its id");
            }
            if (limit < 1) {
                throw new IllegalArgumentException("limit must be at least 1, got " + limit);
            }
        }

        /** A copy that continues after ({@code createdAt}, {@code key}) with {@code limit} rows. */
        public Criteria after(Instant createdAt, String key, int limit) {
            return new Criteria(terms, status, topic, aggregateType, aggregateId, this.key, keyPrefix, keys, errorWords,
                    since, until, Objects.requireNonNull(createdAt), Objects.requireNonNull(key), limit);
        }
    }

    /** The search as one statement, unexecuted. */
    public static Select<Record> query(DSLContext tx, Criteria c) {
        return select(tx, c, EffectHistory.COLUMNS, true);
    }

    private static Select<Record> select(DSLContext tx, Criteria c, List<? extends SelectField<?>> columns, boolean page) {
        List<Condition> where = new ArrayList<>();
        Field<Instant> createdAt;
        Field<String> key;
        org.jooq.SelectJoinStep<Record> from;
        if (!c.terms().isEmpty()) {
            OutboxEffectTerm driver = OUTBOX_EFFECT_TERM.as("t0");
            createdAt = driver.CREATED_AT;
            key = driver.IDEMPOTENCY_KEY;
            from = tx.select(columns).from(driver);
            where.add(driver.TERM.eq(c.terms().getFirst()));
            from = from.join(E).on(E.IDEMPOTENCY_KEY.eq(driver.IDEMPOTENCY_KEY));
            for (int i = 1; i < c.terms().size(); i++) {
                OutboxEffectTerm other = OUTBOX_EFFECT_TERM.as("t" + i);
                where.add(DSL.exists(DSL.selectOne().from(other)
                        .where(other.IDEMPOTENCY_KEY.eq(E.IDEMPOTENCY_KEY), other.TERM.eq(c.terms().get(i))))); 
            }
        } else {
            createdAt = E.CREATED_AT;
            key = E.IDEMPOTENCY_KEY;
            from = tx.select(columns).from(E);
        }
        if (page) {
            from = from.leftJoin(OUTBOX_MESSAGE).on(OUTBOX_MESSAGE.ID.eq(E.MESSAGE_ID)
                    .and(OUTBOX_MESSAGE.CREATED_AT.eq(E.MESSAGE_CREATED_AT)));
        }
        if (c.status() != null) {
            where.add(E.STATUS.eq(c.status()));
        }
        if (c.topic() != null) {
            where.add(E.TOPIC.eq(c.topic()));
        }
        if (c.aggregateType() != null) {
            where.add(E.AGGREGATE_TYPE.eq(c.aggregateType()));
            where.add(E.AGGREGATE_ID.eq(c.aggregateId()));
        }
        if (c.key() != null) {
            where.add(E.IDEMPOTENCY_KEY.eq(c.key()));
        }
        if (c.keyPrefix() != null) {
            // varchar_pattern_ops serves LIKE 'prefix%' whatever the database's collation
            where.add(E.IDEMPOTENCY_KEY.like(escapeLike(c.keyPrefix()) + "%", '\\'));
        }
        if (c.keys() != null) {
            where.add(c.keys().isEmpty() ? DSL.falseCondition() : E.IDEMPOTENCY_KEY.in(c.keys()));
        }
        if (c.errorWords() != null) {
            where.add(E.LAST_ERROR.isNotNull());
            where.add(DSL.condition("to_tsvector('simple', {0}) @@ plainto_tsquery('simple', {1})", E.LAST_ERROR,
                    DSL.val(c.errorWords())));
        }
        if (c.since() != null) {
            where.add(createdAt.ge(c.since()));
        }
        if (c.until() != null) {
            where.add(createdAt.lt(c.until()));
        }
        if (c.afterKey() != null) {
            where.add(DSL.row(createdAt, key).lt(c.afterCreatedAt(), c.afterKey()));
        }
        if (!page) {
            return from.where(where);
        }
        List<SortField<?>> order = List.of(createdAt.desc(), key.desc());
        return from.where(where).orderBy(order).limit(c.limit());
    }

    /** One page of the search. */
    public static List<EffectHistory.Effect> search(DSLContext tx, Criteria c) {
        return query(tx, c).fetch(EffectHistory::effect);
    }

    /** How many effects match (without paging): what a bulk action confirms before it runs. */
    public static long count(DSLContext tx, Criteria c) {
        Criteria all = new Criteria(c.terms(), c.status(), c.topic(), c.aggregateType(), c.aggregateId(), c.key(),
                c.keyPrefix(), c.keys(), c.errorWords(), c.since(), c.until(), null, null, 1);
        return tx.fetchCount(select(tx, all, List.of(DSL.one()), false));
    }

    /** Terms starting with {@code prefix} ({@code to:ann}, {@code template:}), alphabetically, at most {@code limit}: autocomplete. */
    public static List<String> termsStartingWith(DSLContext tx, String prefix, int limit) {
        OutboxEffectTerm t = OUTBOX_EFFECT_TERM;
        // a loose index scan: one probe per distinct term, however many effects carry each
        return tx.fetch(io.mailroom.db.MailroomSchema.of(tx).sql("""
                WITH RECURSIVE found(term) AS (
                  (SELECT term FROM {schema}.outbox_effect_term WHERE term >= ? AND term < ? ORDER BY term LIMIT 1)
                  UNION ALL
                  SELECT (SELECT x.term FROM {schema}.outbox_effect_term x WHERE x.term > found.term AND x.term < ?
                          ORDER BY x.term LIMIT 1)
                  FROM found WHERE found.term IS NOT NULL
                )
                SELECT term FROM found WHERE term IS NOT NULL LIMIT ?"""),
                prefix, prefix + Character.MAX_VALUE, prefix + Character.MAX_VALUE, limit).getValues(0, String.class);
    }

    /** The distinct topics, alphabetically, at most {@code limit} (a loose scan of the topic index). */
    public static List<String> topics(DSLContext tx, int limit) {
        return tx.fetch(io.mailroom.db.MailroomSchema.of(tx).sql("""
                WITH RECURSIVE t(topic) AS (
                  (SELECT topic FROM {schema}.outbox_effect ORDER BY topic LIMIT 1)
                  UNION ALL
                  SELECT (SELECT e.topic FROM {schema}.outbox_effect e WHERE e.topic > t.topic ORDER BY e.topic LIMIT 1)
                  FROM t WHERE t.topic IS NOT NULL
                )
                SELECT topic FROM t WHERE topic IS NOT NULL LIMIT ?"""), limit).getValues(0, String.class);
    }

    static String escapeLike(String s) {
        return s.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_");
    }
}
