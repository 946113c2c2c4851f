package io.mailroom.outbox.maintenance;

import io.mailroom.db.MailroomSchema;
import io.mailroom.outbox.MessageStatus;
import io.mailroom.db.sql.SqlClock;
import org.jooq.DSLContext;
import org.jooq.Name;
import org.jooq.impl.DSL;

import java.time.Duration;
import java.time.Instant;
import java.time.LocalDate;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;
import java.time.format.DateTimeParseException;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import static io.mailroom.db.jooq.Tables.AUDIT_LOG;
import static io.mailroom.db.jooq.Tables.OUTBOX_ATTEMPT;
import static io.mailroom.db.jooq.Tables.OUTBOX_EFFECT;
import static io.mailroom.db.jooq.Tables.OUTBOX_MESSAGE;
import static org.jooq.impl.DSL.inline;
import static org.jooq.impl.DSL.name;
import static org.jooq.impl.DSL.notExists;
import static org.jooq.impl.DSL.select;
import static org.jooq.impl.DSL.selectOne;
import static org.jooq.impl.DSL.val;

/**
 * Every SQL statement of retention, in one place. DDL cannot take bind parameters, so partition
 * names are only ever made by {@link #partitionName(LocalDate)} from a date (digits only), rendered
 * as quoted identifiers by jOOQ, and range bounds are rendered as inline literals of formatted
 * instants; nothing read from the catalog or from a caller reaches DDL text unparsed.
 */
final class RetentionStore {

    /** The partitioned hot table and its safety-net partition, as named by the V2 migration. */
    static final String PARENT = "outbox_message";
    static final String DEFAULT_PARTITION = "outbox_message_default";
    private static final String PREFIX = "outbox_message_p";
    private static final Pattern DAILY = Pattern.compile("outbox_message_p(\\d{8})");
    private static final DateTimeFormatter DAY = DateTimeFormatter.BASIC_ISO_DATE;

    /**
     * The queue's autovacuum settings, the same as the partitions the V2 migration creates (a
     * partitioned parent cannot hold storage parameters, so each partition gets them at creation).
     */
    static final String QUEUE_RELOPTIONS = "autovacuum_vacuum_scale_factor = 0.01, autovacuum_vacuum_threshold = 1000, "
            + "autovacuum_vacuum_insert_scale_factor = 0.01, autovacuum_analyze_scale_factor = 0.02, "
            + "autovacuum_vacuum_cost_delay = 0";

    /**
     * Advisory lock serialising partition DDL among maintainers of one database ("MAILROOM" in
     * ASCII). Transaction-scoped, so a maintainer that dies releases it with its session.
     */
    static final long PARTITION_DDL_LOCK = 0x4D41494C524F4F4DL;

    /** Hot-row states that keep a partition: work still to do, or a person still to decide. */
    static final List<String> HELD_STATUSES = List.of(MessageStatus.PENDING.sql(), MessageStatus.RUNNING.sql(),
            MessageStatus.REVIEW.sql());
    /** Finished states whose hot rows and history may go once old enough. */
    static final List<String> GONE_STATUSES = List.of(MessageStatus.DONE.sql(), MessageStatus.FAILED.sql(),
            MessageStatus.CANCELLED.sql(), MessageStatus.CLOSED.sql());

    private final SqlClock clock;

    RetentionStore(SqlClock clock) {
        this.clock = clock;
    }

    // ------------------------------------------------------------------------------------ naming

    /** {@code outbox_message_pYYYYMMDD} for a UTC day. */
    static String partitionName(LocalDate day) {
        String digits = day.format(DAY);
        if (digits.length() != 8 || !digits.chars().allMatch(Character::isDigit)) {
            throw new IllegalArgumentException("no daily partition name for " + day);
        }
        return PREFIX + digits;
    }

    /** The day of a daily partition's name, or empty for any other name (default, foreign tables). */
    static Optional<LocalDate> dayOf(String relname) {
        Matcher m = DAILY.matcher(relname);
        if (!m.matches()) {
            return Optional.empty();
        }
        try {
            return Optional.of(LocalDate.parse(m.group(1), DAY));
        } catch (DateTimeParseException e) {
            return Optional.empty();
        }
    }

    static Instant startOf(LocalDate day) {
        return day.atStartOfDay(ZoneOffset.UTC).toInstant();
    }

    /** A day's partition, qualified with the schema {@code tx} reaches. */
    private static Name quoted(DSLContext tx, LocalDate day) {
        return name(MailroomSchema.of(tx).name(), partitionName(day));
    }

    /** A table of the queue, qualified with the schema {@code tx} reaches. */
    private static Name table(DSLContext tx, String table) {
        return name(MailroomSchema.of(tx).name(), table);
    }

    /** A table's qualified name as text, for {@code to_regclass}. */
    private static String regclass(DSLContext tx, String relation) {
        return MailroomSchema.of(tx).table(relation);
    }

    // ---------------------------------------------------------------------------- session limits

    /** "now" of the clock: the injected one, or the database's. */
    Instant now(DSLContext tx) {
        return tx.select(clock.now()).fetchSingle().value1();
    }

    /** Bounds this transaction's lock waits and statements ({@code SET LOCAL}, so pooled sessions keep theirs). */
    void limitTransaction(DSLContext tx, Duration lockTimeout, Duration statementTimeout) {
        tx.select(DSL.function("set_config", String.class, val("lock_timeout"), val(lockTimeout.toMillis() + "ms"), val(true)),
                DSL.function("set_config", String.class, val("statement_timeout"), val(statementTimeout.toMillis() + "ms"),
                        val(true))).fetch();
    }

    /** Waits (within lock_timeout) until no other maintainer is doing partition DDL in this database. */
    void lockPartitionDdl(DSLContext tx) {
        tx.select(DSL.function("pg_advisory_xact_lock", Object.class, val(PARTITION_DDL_LOCK))).fetch();
    }

    // ------------------------------------------------------------------------------- partitions

    /** An attached daily partition. */
    record Partition(String name, LocalDate day, long xidAge) {
        Instant upperBound() {
            return startOf(day.plusDays(1));
        }
    }

    /** The daily partitions attached to the hot table now, oldest first. */
    List<Partition> attachedDailyPartitions(DSLContext tx) {
        List<Partition> out = new ArrayList<>();
        tx.resultQuery("""
                SELECT c.relname::text AS name, age(c.relfrozenxid)::bigint AS xid_age
                FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid
                WHERE i.inhparent = to_regclass({0})
                """, val(regclass(tx, PARENT))).fetch().forEach(r -> {
            String relname = r.get("name", String.class);
            dayOf(relname).ifPresent(day -> out.add(new Partition(partitionName(day), day, r.get("xid_age", Long.class))));
        });
        out.sort((a, b) -> a.day().compareTo(b.day()));
        return out;
    }

    boolean exists(DSLContext tx, LocalDate day) {
        return tx.select(DSL.field("to_regclass({0}) IS NOT NULL", Boolean.class, val(regclass(tx, partitionName(day)))))
                .fetchSingle().value1();
    }

    boolean isAttached(DSLContext tx, LocalDate day) {
        return tx.fetchSingle("""
                SELECT EXISTS (SELECT 1 FROM pg_inherits WHERE inhrelid = to_regclass({0}) AND inhparent = to_regclass({1}))
                """, val(regclass(tx, partitionName(day))), val(regclass(tx, PARENT))).get(0, Boolean.class);
    }

    /**
     * Creates the partition of one UTC day with the queue's autovacuum settings. Fails with 23514
     * when the default partition holds a row of that day, 42P07 when it exists.
     */
    void createPartition(DSLContext tx, LocalDate day) {
        tx.execute("CREATE TABLE {0} PARTITION OF {1} FOR VALUES FROM ({2}) TO ({3}) WITH (" + QUEUE_RELOPTIONS + ")",
                quoted(tx, day), table(tx, PARENT), inline(startOf(day).toString()), inline(startOf(day.plusDays(1)).toString()));
    }

    /**
     * Rows of an attached partition that keep it, by status ({@link #HELD_STATUSES}). Reads the
     * whole partition under an ACCESS SHARE lock only, so it may take its time without blocking
     * claims or enqueues.
     */
    HeldRows heldRows(DSLContext tx, LocalDate day) {
        var r = tx.resultQuery("""
                SELECT count(*) FILTER (WHERE status = 'pending') AS pending,
                       count(*) FILTER (WHERE status = 'running') AS running,
                       count(*) FILTER (WHERE status = 'review') AS review
                FROM {0} WHERE status IN ('pending', 'running', 'review')
                """, quoted(tx, day)).fetchSingle();
        return new HeldRows(r.get("pending", Long.class), r.get("running", Long.class), r.get("review", Long.class));
    }

    /**
     * The same question asked again while the parent is locked ACCESS EXCLUSIVE, so it must be quick:
     * pending and running rows are counted through the partition's own partial indexes (claim and
     * lease indexes, which stay with the table when it is detached), and review rows through
     * {@code outbox_effect}'s exception index (V29), since the effect mirrors every hot row's status
     * in the same transaction that changes it.
     */
    HeldRows heldRowsQuickly(DSLContext tx, LocalDate day) {
        var e = OUTBOX_EFFECT;
        long pending = tx.fetchSingle("SELECT count(*) FROM {0} WHERE status = 'pending'", quoted(tx, day)).get(0, Long.class);
        long running = tx.fetchSingle("SELECT count(*) FROM {0} WHERE status = 'running'", quoted(tx, day)).get(0, Long.class);
        long review = tx.fetchCount(e, e.EXCEPTION_STATUS.eq(MessageStatus.REVIEW.sql())
                .and(e.MESSAGE_CREATED_AT.ge(startOf(day)))
                .and(e.MESSAGE_CREATED_AT.lt(startOf(day.plusDays(1)))));
        return new HeldRows(pending, running, review);
    }

    /** Rows that keep a partition attached. */
    record HeldRows(long pending, long running, long review) {
        boolean any() {
            return pending + running + review > 0;
        }
    }

    void detach(DSLContext tx, LocalDate day) {
        tx.execute("ALTER TABLE {0} DETACH PARTITION {1}", table(tx, PARENT), quoted(tx, day));
    }

    void drop(DSLContext tx, LocalDate day) {
        tx.execute("DROP TABLE {0}", quoted(tx, day));
    }

    /** {@code VACUUM (FREEZE)} of one partition; must run outside a transaction block. */
    static String freezeStatement(MailroomSchema schema, LocalDate day) {
        return "VACUUM (FREEZE) " + schema.table(partitionName(day));
    }

    /**
     * Deletes up to {@code limit} finished rows created before {@code cutoff} from the default
     * partition: rows that landed there while their day's partition was missing get the same
     * retention as rows in daily partitions, so the safety net does not grow into a second queue.
     */
    int purgeDefaultPartition(DSLContext tx, Instant cutoff, int limit) {
        return tx.execute("""
                DELETE FROM {0} AS d
                WHERE (d.id, d.created_at) IN (
                    SELECT id, created_at FROM {0}
                    WHERE status = ANY({1}::varchar[]) AND created_at < {2}
                    LIMIT {3}
                    FOR UPDATE SKIP LOCKED)
                  AND d.status = ANY({1}::varchar[])
                """, table(tx, DEFAULT_PARTITION), val(GONE_STATUSES.toArray(String[]::new)), val(cutoff), val(limit));
    }

    // ---------------------------------------------------------------------------------- history

    /**
     * Deletes up to {@code limit} attempts that finished before {@code cutoff}, oldest first, except
     * the timeline of an effect that is still pending, running or in review (a person deciding on it
     * reads that timeline).
     */
    int deleteAttempts(DSLContext tx, Instant cutoff, int limit) {
        var a = OUTBOX_ATTEMPT;
        var c = OUTBOX_ATTEMPT.as("c");
        var e = OUTBOX_EFFECT;
        return tx.deleteFrom(a).where(a.ID.in(
                select(c.ID).from(c)
                        .where(c.FINISHED_AT.lt(cutoff))
                        .and(notExists(selectOne().from(e).where(e.IDEMPOTENCY_KEY.eq(c.IDEMPOTENCY_KEY))
                                .and(e.STATUS.in(HELD_STATUSES))))
                        .orderBy(c.FINISHED_AT)
                        .limit(limit)
                        .forUpdate().skipLocked()))
                .execute();
    }

    /**
     * Deletes up to {@code limit} effects finished (done, failed, cancelled, closed) and untouched since
     * before {@code cutoff}, and only once their hot row is gone: while the hot row exists its
     * effect is what makes its idempotency key unique. Pending, running and review effects are never
     * deleted. The status is re-checked on the locked row (READ COMMITTED), so an effect that a
     * person just retried is skipped. Returns the deleted effects, for the owners of their history
     * ({@link RetentionStep#deleteWithEffects}) in the same transaction.
     *
     * <p>Read oldest queued first through the {@code created_at} index (an effect is changed after it
     * is queued, so one untouched since the cutoff was queued before it): no index of the effect
     * holds its status or updated_at (V29). The effects that must stay (waiting, in review, changed
     * lately) are read again by every batch until they go; they are few.
     */
    List<RetentionStep.DeletedEffect> deleteEffects(DSLContext tx, Instant cutoff, int limit) {
        var e = OUTBOX_EFFECT;
        return tx.deleteFrom(e).where(e.IDEMPOTENCY_KEY.in(deletableEffects(tx, cutoff, limit)))
                .and(e.STATUS.in(GONE_STATUSES))
                .returning(e.IDEMPOTENCY_KEY, e.MESSAGE_ID, e.MESSAGE_CREATED_AT)
                .fetch(r -> new RetentionStep.DeletedEffect(r.get(e.IDEMPOTENCY_KEY), r.get(e.MESSAGE_ID),
                        r.get(e.MESSAGE_CREATED_AT)));
    }

    /** The keys {@link #deleteEffects} takes, locked, unexecuted (a test reads its plan). */
    static org.jooq.Select<org.jooq.Record1<String>> deletableEffects(DSLContext tx, Instant cutoff, int limit) {
        var c = OUTBOX_EFFECT.as("c");
        var m = OUTBOX_MESSAGE;
        return select(c.IDEMPOTENCY_KEY).from(c)
                .where(c.CREATED_AT.lt(cutoff))
                .and(c.STATUS.in(GONE_STATUSES))
                .and(c.UPDATED_AT.lt(cutoff))
                .and(c.FINISHED_AT.lt(cutoff))
                .and(notExists(selectOne().from(m)
                        .where(m.ID.eq(c.MESSAGE_ID)).and(m.CREATED_AT.eq(c.MESSAGE_CREATED_AT))))
                .orderBy(c.CREATED_AT)
                .limit(limit)
                .forUpdate().skipLocked();
    }

    /** Deletes up to {@code limit} audit entries older than {@code cutoff}. */
    int deleteAuditEntries(DSLContext tx, Instant cutoff, int limit) {
        var a = AUDIT_LOG;
        var c = AUDIT_LOG.as("c");
        return tx.deleteFrom(a).where(a.ID.in(
                select(c.ID).from(c)
                        .where(c.AT.lt(cutoff))
                        .orderBy(c.AT)
                        .limit(limit)
                        .forUpdate().skipLocked()))
                .execute();
    }
}
