package io.mailroom.outbox.maintenance;

import io.mailroom.db.MailroomSchema;
import io.mailroom.outbox.DispatcherSessions;
import io.mailroom.outbox.OutboxException;
import io.mailroom.outbox.SessionSettings;
import io.mailroom.outbox.admin.MessageActions;
import io.mailroom.db.sql.SqlClock;
import io.mailroom.db.sql.SqlStates;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import javax.sql.DataSource;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Instant;
import java.time.LocalDate;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.function.Consumer;

/**
 * Keeps the hot queue small: {@code outbox_message} is partitioned by UTC day of {@code created_at}
 * ({@code outbox_message_pYYYYMMDD}, plus the default partition as a safety net). This maintainer
 * creates the daily partitions ahead of time and drops a day once it is older than the hot
 * retention, with {@code DETACH PARTITION} + {@code DROP TABLE} instead of a mass {@code DELETE}
 * that would leave as many dead tuples behind as it removed rows.
 *
 * <p><b>Invariant: no row that is pending, running or in review is ever dropped.</b> A partition is
 * detached, checked and dropped in one transaction: the check runs after {@code DETACH} has taken
 * the ACCESS EXCLUSIVE lock, so no transaction can change a row of it between the check and the
 * drop, and if any such row is there the transaction rolls back and the partition stays attached
 * until a later run. Pending and running rows are work still to do; a review row waits for a person
 * ({@link MessageActions#confirmDone} and {@link MessageActions#closeReview} need the hot row), so
 * it keeps its partition too. The finished rows that go (done, failed, cancelled, closed) lose no support
 * history: the runtime records every outcome in {@code outbox_effect} and {@code outbox_attempt} in
 * the same transaction, and those tables (with {@code email_rendering}, what each email was rendered
 * to) have their own, longer retention ({@link HistoryCleaner}).
 * A failed message whose partition has gone can no longer be retried in place; support resends it
 * under a new key.
 *
 * <p>Locks: creating or detaching a partition takes ACCESS EXCLUSIVE on {@code outbox_message}
 * (and on its default partition), so every claim and enqueue waits behind it. All DDL runs with a
 * short {@code lock_timeout}: a maintainer that cannot get the lock quickly (SQLSTATE 55P03) gives
 * up for this run instead of stalling the queue. The unhurried work (the full check of a partition
 * before it is detached) runs under an ACCESS SHARE lock only; under the exclusive lock the check is
 * repeated through indexes. Maintainers on several dispatcher instances serialise their DDL with a
 * transaction-scoped advisory lock, so they never fail each other.
 *
 * <p>The default partition must stay empty: a row lands there only when its day's partition is
 * missing (the maintainer was down longer than {@code partitionsAhead} days), and while it holds a
 * row of a day, that day's partition cannot be created (SQLSTATE 23514). This is reported as a
 * conflict and logged as a warning: the rows stay where they are, none is moved or lost; finished
 * ones leave the default partition after the hot retention by small batched deletes.
 *
 * <p>Wraparound: a partition kept long (held by a forgotten pending or review row) is hardly written
 * any more, but its tuples must still be frozen before {@code age(relfrozenxid)} reaches
 * {@code autovacuum_freeze_max_age} (200 million transactions by default), or autovacuum runs an
 * anti-wraparound VACUUM on it at a time of its choosing, and at about two billion the server stops
 * assigning transaction ids. Autovacuum does freeze these partitions; {@link #freezeOldPartitions()}
 * does it early and calmly. Watch {@code SELECT relname, age(relfrozenxid) FROM pg_class WHERE relname
 * LIKE 'outbox_message_p%'} and {@code age(datfrozenxid)} of the database, and alert well before
 * 200 million. The same applies to every table; long-running transactions on this database hold back
 * both vacuum and freezing.
 */
public final class PartitionMaintainer {

    private static final Logger log = LoggerFactory.getLogger(PartitionMaintainer.class);

    static final String DUPLICATE_TABLE = "42P07";
    static final String CHECK_VIOLATION = "23514";
    static final String UNDEFINED_TABLE = "42P01";

    /** What {@link #ensurePartitions()} found and did, by UTC day. */
    public record EnsureReport(List<LocalDate> created, List<LocalDate> present, List<LocalDate> conflicting,
                               List<LocalDate> busy) {
        public EnsureReport {
            created = List.copyOf(created);
            present = List.copyOf(present);
            conflicting = List.copyOf(conflicting);
            busy = List.copyOf(busy);
        }

        /** Whether every day of the window now has its partition. */
        public boolean complete() {
            return conflicting.isEmpty() && busy.isEmpty();
        }
    }

    /** A partition past the hot retention that stays, and the rows that hold it. */
    public record Kept(String partition, LocalDate day, long pending, long running, long review) {
    }

    /**
     * What {@link #dropExpiredPartitions()} did: partitions dropped, kept (with the rows that hold
     * them), skipped because the lock was busy, and finished rows deleted from the default partition.
     */
    public record DropReport(List<String> dropped, List<Kept> kept, List<String> busy, int defaultRowsDeleted) {
        public DropReport {
            dropped = List.copyOf(dropped);
            kept = List.copyOf(kept);
            busy = List.copyOf(busy);
        }
    }

    /** Partitions {@link #freezeOldPartitions()} froze, and those it skipped because they were busy. */
    public record FreezeReport(List<String> frozen, List<String> busy) {
        public FreezeReport {
            frozen = List.copyOf(frozen);
            busy = List.copyOf(busy);
        }
    }

    /** One {@link #maintain()} pass. */
    public record Report(EnsureReport ensured, DropReport dropped, FreezeReport frozen) {
    }

    private final DataSource dataSource;
    private final RetentionConfig config;
    private final DispatcherSessions sessions;
    private final RetentionStore store;
    private volatile Consumer<String> beforeDetach = name -> { };
    private final boolean setsSessionLimits;

    public PartitionMaintainer(DataSource dataSource, RetentionConfig config) {
        this(dataSource, config, SessionSettings.SESSION);
    }

    /**
     * @param settings anything but {@link SessionSettings#SESSION} means the sessions may come
     *                 through a transaction-mode pooler: the freeze's VACUUM (which cannot run in a
     *                 transaction, so cannot take {@code SET LOCAL}) then runs under the server's or
     *                 role's timeouts instead of setting session ones that would stay behind on
     *                 whichever server session the pooler gave
     */
    public PartitionMaintainer(DataSource dataSource, RetentionConfig config, SessionSettings settings) {
        this.dataSource = Objects.requireNonNull(dataSource, "dataSource");
        this.config = Objects.requireNonNull(config, "config");
        this.setsSessionLimits = Objects.requireNonNull(settings, "settings") == SessionSettings.SESSION;
        // No session-level timeouts: every retention transaction sets its own with SET LOCAL.
        this.sessions = new DispatcherSessions(dataSource, null, null, settings);
        this.store = new RetentionStore(SqlClock.of(config.clock()));
    }

    public RetentionConfig config() {
        return config;
    }

    /** Creates missing partitions, drops expired ones, freezes old kept ones; in that order. */
    public Report maintain() {
        EnsureReport ensured = ensurePartitions();
        DropReport dropped = dropExpiredPartitions();
        FreezeReport frozen = freezeOldPartitions();
        return new Report(ensured, dropped, frozen);
    }

    // ----------------------------------------------------------------------------------- ensure

    /**
     * Creates the missing daily partitions from yesterday to {@code partitionsAhead} days after today
     * (UTC), each with the queue's autovacuum settings. Idempotent and safe to run from several
     * instances at once. A day whose rows already sit in the default partition is skipped with a
     * warning ({@link EnsureReport#conflicting()}); a day whose DDL lock was busy is left for the next
     * run ({@link EnsureReport#busy()}).
     */
    public EnsureReport ensurePartitions() {
        LocalDate today = LocalDate.ofInstant(now(), ZoneOffset.UTC);
        List<LocalDate> window = today.minusDays(1).datesUntil(today.plusDays(config.partitionsAhead() + 1L)).toList();
        List<LocalDate> created = new ArrayList<>();
        List<LocalDate> present = new ArrayList<>();
        List<LocalDate> conflicting = new ArrayList<>();
        List<LocalDate> busy = new ArrayList<>();
        // Looked up without any lock: in the steady state everything exists and no DDL lock is ever asked for.
        List<LocalDate> missing = sessions.inTransaction(tx -> window.stream().filter(d -> !store.exists(tx, d)).toList());
        present.addAll(window.stream().filter(d -> !missing.contains(d)).toList());
        for (int i = 0; i < missing.size(); i++) {
            LocalDate d = missing.get(i);
            try {
                boolean made = sessions.inTransaction(tx -> {
                    store.limitTransaction(tx, config.lockTimeout(), config.statementTimeout());
                    store.lockPartitionDdl(tx);
                    // another maintainer may have made it while we waited for the lock
                    if (store.exists(tx, d)) {
                        return false;
                    }
                    store.createPartition(tx, d);
                    return true;
                });
                if (made) {
                    created.add(d);
                    log.info("Created partition {} for {} (UTC)", RetentionStore.partitionName(d), d);
                } else {
                    present.add(d);
                }
            } catch (RuntimeException e) {
                String state = SqlStates.sqlState(e);
                if (DUPLICATE_TABLE.equals(state)) {
                    present.add(d);
                } else if (CHECK_VIOLATION.equals(state)) {
                    conflicting.add(d);
                    log.warn("Partition {} cannot be created: the default partition {} already holds rows of {} "
                                    + "(UTC). Those rows stay there and are not lost, but new rows of that day keep "
                                    + "landing in the default partition; this is an alert condition.",
                            RetentionStore.partitionName(d), RetentionStore.DEFAULT_PARTITION, d);
                } else if (SqlStates.LOCK_NOT_AVAILABLE.equals(state)) {
                    // Every further attempt would stall claims for another lockTimeout: leave the rest to the next run.
                    busy.addAll(missing.subList(i, missing.size()));
                    log.info("Partitions {} not created: outbox_message was locked longer than {}; retrying next run",
                            busy.stream().map(RetentionStore::partitionName).toList(), config.lockTimeout());
                    break;
                } else {
                    throw e;
                }
            }
        }
        present.sort(null);
        return new EnsureReport(created, present, conflicting, busy);
    }

    // ------------------------------------------------------------------------------------- drop

    /**
     * Drops every daily partition whose day ended more than the hot retention ago and that holds no
     * pending, running or review row (see the class comment for how that is made certain); reports
     * the others as kept with their counts, or as busy when the DDL lock was not granted within
     * {@code lockTimeout}. Then deletes, in bounded batches, finished rows older than the same
     * retention from the default partition.
     */
    public DropReport dropExpiredPartitions() {
        Instant now = now();
        Instant cutoff = now.minus(config.hotRetention());
        List<String> dropped = new ArrayList<>();
        List<Kept> kept = new ArrayList<>();
        List<String> busy = new ArrayList<>();

        List<RetentionStore.Partition> expired = sessions.inTransaction(tx -> store.attachedDailyPartitions(tx))
                .stream().filter(p -> !p.upperBound().isAfter(cutoff)).toList();
        for (int i = 0; i < expired.size(); i++) {
            RetentionStore.Partition p = expired.get(i);
            try {
                dropIfFinished(p, dropped, kept);
            } catch (RuntimeException e) {
                String state = SqlStates.sqlState(e);
                if (SqlStates.LOCK_NOT_AVAILABLE.equals(state)) {
                    // Every further attempt would stall claims for another lockTimeout: leave the rest to the next run.
                    expired.subList(i, expired.size()).forEach(rest -> busy.add(rest.name()));
                    log.info("Partitions {} not dropped: outbox_message or a partition was locked longer than {}; "
                            + "retrying next run", busy, config.lockTimeout());
                    break;
                } else if (!UNDEFINED_TABLE.equals(state)) { // another maintainer dropped it meanwhile
                    throw e;
                }
            }
        }
        int purged = purgeDefaultPartition(cutoff);
        return new DropReport(dropped, kept, busy, purged);
    }

    /** Drops one expired partition, or adds it to {@code kept} with the rows that hold it. */
    private void dropIfFinished(RetentionStore.Partition p, List<String> dropped, List<Kept> kept) {
        LocalDate day = p.day();
        // Unhurried full check first, under ACCESS SHARE only: a held partition is never locked exclusively.
        RetentionStore.HeldRows held = sessions.inTransaction(tx -> {
            store.limitTransaction(tx, config.lockTimeout(), config.statementTimeout());
            return store.heldRows(tx, day);
        });
        if (held.any()) {
            log.info("Keeping partition {} past the hot retention: {} pending, {} running, {} in review",
                    p.name(), held.pending(), held.running(), held.review());
            kept.add(kept(p, held));
            return;
        }
        beforeDetach.accept(p.name());
        try {
            boolean gone = sessions.inTransaction(tx -> {
                store.limitTransaction(tx, config.lockTimeout(), config.statementTimeout());
                store.lockPartitionDdl(tx);
                if (!store.isAttached(tx, day)) {
                    return false; // another maintainer dropped it meanwhile
                }
                store.detach(tx, day);
                // Re-checked under the ACCESS EXCLUSIVE lock DETACH took: no transaction can change it now.
                RetentionStore.HeldRows again = store.heldRowsQuickly(tx, day);
                if (again.any()) {
                    throw new HeldAfterDetach(again);
                }
                store.drop(tx, day);
                return true;
            });
            if (gone) {
                dropped.add(p.name());
                log.info("Dropped partition {}: its rows were created before {} and all were finished",
                        p.name(), p.upperBound());
            }
        } catch (HeldAfterDetach h) {
            log.info("Keeping partition {}: rows became unfinished before it was detached ({} pending, {} running, "
                    + "{} in review); rolled back, it stays attached", p.name(), h.rows.pending(), h.rows.running(),
                    h.rows.review());
            kept.add(kept(p, h.rows));
        }
    }

    private int purgeDefaultPartition(Instant cutoff) {
        int total = 0;
        for (int batch = 0; batch < config.historyMaxBatchesPerRun(); batch++) {
            int n;
            try {
                n = sessions.inTransaction(tx -> {
                    store.limitTransaction(tx, config.lockTimeout(), config.statementTimeout());
                    return store.purgeDefaultPartition(tx, cutoff, config.historyBatchSize());
                });
            } catch (RuntimeException e) {
                if (!SqlStates.is(e, SqlStates.LOCK_NOT_AVAILABLE)) {
                    throw e;
                }
                log.info("Default partition {} was locked longer than {}; purging it again next run",
                        RetentionStore.DEFAULT_PARTITION, config.lockTimeout());
                break;
            }
            total += n;
            if (n < config.historyBatchSize()) {
                break;
            }
        }
        if (total > 0) {
            log.info("Deleted {} finished rows created before {} from the default partition {}", total, cutoff,
                    RetentionStore.DEFAULT_PARTITION);
        }
        return total;
    }

    private static Kept kept(RetentionStore.Partition p, RetentionStore.HeldRows held) {
        return new Kept(p.name(), p.day(), held.pending(), held.running(), held.review());
    }

    /** Rolls the detach back: the partition still holds rows that must not be dropped. */
    private static final class HeldAfterDetach extends RuntimeException {
        final transient RetentionStore.HeldRows rows;

        HeldAfterDetach(RetentionStore.HeldRows rows) {
            super(null, null, false, false);
            this.rows = rows;
        }
    }

    // ----------------------------------------------------------------------------------- freeze

    /**
     * Runs {@code VACUUM (FREEZE)} on every attached daily partition kept past the hot retention
     * whose {@code age(relfrozenxid)} exceeds {@code freezeMinXidAge}, so that partitions held for a
     * long time are frozen before autovacuum has to do it against the wraparound clock. VACUUM takes
     * SHARE UPDATE EXCLUSIVE, which claims and enqueues do not conflict with. A partition whose lock
     * is not granted within {@code lockTimeout} (autovacuum or another maintainer is on it) is skipped.
     */
    public FreezeReport freezeOldPartitions() {
        Instant cutoff = now().minus(config.hotRetention());
        List<RetentionStore.Partition> candidates = sessions.inTransaction(tx -> store.attachedDailyPartitions(tx))
                .stream()
                .filter(p -> !p.upperBound().isAfter(cutoff) && p.xidAge() > config.freezeMinXidAge())
                .toList();
        List<String> frozen = new ArrayList<>();
        List<String> busy = new ArrayList<>();
        if (candidates.isEmpty()) {
            return new FreezeReport(frozen, busy);
        }
        try (Connection c = dataSource.getConnection()) {
            boolean autoCommit = c.getAutoCommit();
            c.setAutoCommit(true); // VACUUM cannot run inside a transaction block
            String[] previous = setsSessionLimits ? sessionLimits(c, config.lockTimeout().toMillis() + "ms",
                    config.statementTimeout().toMillis() + "ms") : null;
            try (Statement st = c.createStatement()) {
                for (RetentionStore.Partition p : candidates) {
                    try {
                        st.execute(RetentionStore.freezeStatement(MailroomSchema.of(dataSource), p.day()));
                        frozen.add(p.name());
                        log.info("Froze partition {} (age(relfrozenxid) was {})", p.name(), p.xidAge());
                    } catch (SQLException e) {
                        if (SqlStates.LOCK_NOT_AVAILABLE.equals(e.getSQLState())) {
                            busy.add(p.name());
                            log.info("Partition {} not frozen: it was locked longer than {}; retrying next run",
                                    p.name(), config.lockTimeout());
                        } else if (!UNDEFINED_TABLE.equals(e.getSQLState())) { // dropped meanwhile: nothing to freeze
                            throw e;
                        }
                    }
                }
            } finally {
                if (previous != null) {
                    sessionLimits(c, previous[0], previous[1]);
                }
                c.setAutoCommit(autoCommit);
            }
        } catch (SQLException e) {
            throw new OutboxException("freezing old partitions failed (SQLSTATE " + e.getSQLState() + ")", e);
        }
        return new FreezeReport(frozen, busy);
    }

    /** Sets lock_timeout and statement_timeout of the session; returns the values they had. */
    private static String[] sessionLimits(Connection c, String lockTimeout, String statementTimeout) throws SQLException {
        String[] previous = new String[2];
        try (Statement st = c.createStatement();
             ResultSet rs = st.executeQuery("SELECT current_setting('lock_timeout'), current_setting('statement_timeout')")) {
            rs.next();
            previous[0] = rs.getString(1);
            previous[1] = rs.getString(2);
        }
        try (PreparedStatement ps = c.prepareStatement(
                "SELECT set_config('lock_timeout', ?, false), set_config('statement_timeout', ?, false)")) {
            ps.setString(1, lockTimeout);
            ps.setString(2, statementTimeout);
            ps.executeQuery().close();
        }
        return previous;
    }

    // ---------------------------------------------------------------------------------- helpers

    private Instant now() {
        return sessions.inTransaction(store::now);
    }

    /** Test hook: runs between the unlocked check of a partition and its detach. */
    void beforeDetach(Consumer<String> hook) {
        this.beforeDetach = hook == null ? name -> { } : hook;
    }
}
