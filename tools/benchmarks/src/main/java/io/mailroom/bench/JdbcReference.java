package io.mailroom.bench;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Instant;
import java.time.OffsetDateTime;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.atomic.AtomicIntegerArray;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Scenario 2: the reference limit. The runtime's own claim and completion statements
 * ({@link ReferenceSql}), driven by the least Java that can drive them: {@code threads} sessions, each
 * looping "claim a batch, commit; complete that batch (message update, effect update, attempt
 * insert), commit", with prepared statements and nothing else: no pool, no jOOQ, no handler
 * threads, no listener. Same batch size and statements as the runtime; same database state.
 */
final class JdbcReference {

    private static final String WORKER = "bench-reference";
    private static final String INCARNATION = java.util.UUID.randomUUID().toString();
    private static final double LEASE_SECONDS = 60.0;

    private JdbcReference() {
    }

    static DrainResult run(BenchDb db, QueueLoader.Loaded loaded, int batch, int threads, boolean recordAttempts)
            throws Exception {
        int n = loaded.count();
        AtomicIntegerArray seen = new AtomicIntegerArray(n);
        AtomicLong handled = new AtomicLong();
        AtomicLong duplicates = new AtomicLong();
        List<Connection> sessions = new ArrayList<>();
        ExecutorService pool = Executors.newFixedThreadPool(threads);
        try (Connection monitor = db.connect()) {
            for (int i = 0; i < threads; i++) {
                Connection c = db.connect();
                try (Statement st = c.createStatement()) {
                    st.execute("SET SESSION CHARACTERISTICS AS TRANSACTION ISOLATION LEVEL READ COMMITTED");
                }
                c.setAutoCommit(false);
                sessions.add(c);
            }
            CpuMeter meter = new CpuMeter(monitor, true);
            CpuMeter.Sample before = meter.sample(List.of());
            long t0 = System.nanoTime();
            List<Future<?>> workers = new ArrayList<>();
            for (Connection c : sessions) {
                workers.add(pool.submit(() -> {
                    loop(c, batch, recordAttempts, n, loaded.firstId(), seen, handled, duplicates);
                    return null;
                }));
            }
            String error = null;
            for (Future<?> w : workers) {
                try {
                    w.get();
                } catch (java.util.concurrent.ExecutionException e) {
                    error = "reference worker failed: " + e.getCause();
                }
            }
            long t1 = System.nanoTime();
            CpuMeter.Sample after = meter.sample(List.of());
            return new DrainResult(n, handled.get(), duplicates.get(), t1 - t0, meter.between(before, after),
                    QueueLoader.counts(monitor), error);
        } finally {
            pool.shutdownNow();
            for (Connection c : sessions) {
                c.close();
            }
        }
    }

    private static void loop(Connection c, int batch, boolean recordAttempts, int n, long firstId,
                             AtomicIntegerArray seen, AtomicLong handled, AtomicLong duplicates) throws SQLException {
        try (PreparedStatement orderedPick = c.prepareStatement(ReferenceSql.ORDERED_PICK);
             PreparedStatement claim = c.prepareStatement(ReferenceSql.claim(batch));
             PreparedStatement finish = c.prepareStatement(ReferenceSql.FINISH);
             PreparedStatement effects = c.prepareStatement(ReferenceSql.EFFECTS);
             PreparedStatement attempts = c.prepareStatement(ReferenceSql.ATTEMPTS)) {
            while (handled.get() < n) {
                // claim, in its own transaction
                orderedPick.execute();
                claim.setString(1, QueueLoader.TOPIC);
                claim.setString(2, WORKER);
                claim.setString(3, INCARNATION);
                claim.setDouble(4, LEASE_SECONDS);
                List<Long> ids = new ArrayList<>(batch);
                List<String> createdAts = new ArrayList<>(batch);
                List<Long> versions = new ArrayList<>(batch);
                List<String> claimedAts = new ArrayList<>(batch);
                List<Integer> attemptNumbers = new ArrayList<>(batch);
                List<String> keys = new ArrayList<>(batch);
                try (ResultSet rs = claim.executeQuery()) {
                    while (rs.next()) {
                        ids.add(rs.getLong(1));
                        createdAts.add(rs.getObject(2, OffsetDateTime.class).toInstant().toString());
                        rs.getString(3); // topic, aggregate type and id: read as the runtime reads them
                        rs.getString(4);
                        rs.getString(5);
                        keys.add(rs.getString(6));
                        rs.getString(7);
                        rs.getString(8); // payload
                        attemptNumbers.add(rs.getInt(9));
                        rs.getInt(10);
                        versions.add(rs.getLong(11));
                        claimedAts.add(rs.getObject(12, OffsetDateTime.class).toInstant().toString());
                        rs.getObject(13, OffsetDateTime.class);
                    }
                }
                c.commit();
                int k = ids.size();
                if (k == 0) {
                    // the rest is locked by the other sessions: wait for them without hammering the server
                    Thread.onSpinWait();
                    sleepQuietly();
                    continue;
                }
                for (long id : ids) {
                    if (seen.getAndIncrement((int) (id - firstId)) > 0) {
                        duplicates.incrementAndGet();
                    }
                }

                // complete, in one transaction: fenced message update, effects, attempt history
                String[] kinds = new String[k];
                java.util.Arrays.fill(kinds, "done");
                finish.setArray(1, c.createArrayOf("bigint", ids.toArray(Long[]::new)));
                finish.setArray(2, c.createArrayOf("varchar", createdAts.toArray(String[]::new)));
                finish.setArray(3, c.createArrayOf("bigint", versions.toArray(Long[]::new)));
                finish.setArray(4, c.createArrayOf("varchar", kinds));
                finish.setArray(5, c.createArrayOf("varchar", new String[k]));
                finish.setArray(6, c.createArrayOf("bigint", new Long[k]));
                finish.setArray(7, c.createArrayOf("varchar", new String[k]));
                List<String> eKeys = new ArrayList<>(k);
                List<Long> eIds = new ArrayList<>(k);
                List<String> eStatus = new ArrayList<>(k);
                List<Integer> eAttempts = new ArrayList<>(k);
                List<String> eErrors = new ArrayList<>(k);
                try (ResultSet rs = finish.executeQuery()) {
                    while (rs.next()) {
                        eIds.add(rs.getLong(1));
                        rs.getObject(2, OffsetDateTime.class);
                        eKeys.add(rs.getString(3));
                        eStatus.add(rs.getString(4));
                        eAttempts.add(rs.getInt(5));
                        rs.getInt(6);
                        rs.getLong(7);
                        rs.getString(8);
                        rs.getObject(9, OffsetDateTime.class);
                        eErrors.add(rs.getString(10));
                    }
                }
                effects.setArray(1, c.createArrayOf("varchar", eKeys.toArray(String[]::new)));
                effects.setArray(2, c.createArrayOf("bigint", eIds.toArray(Long[]::new)));
                effects.setArray(3, c.createArrayOf("varchar", eStatus.toArray(String[]::new)));
                effects.setArray(4, c.createArrayOf("integer", eAttempts.toArray(Integer[]::new)));
                effects.setArray(5, c.createArrayOf("varchar", eErrors.toArray(String[]::new)));
                effects.executeUpdate();
                if (recordAttempts) {
                    String finishedAt = Instant.now().toString();
                    String[] workers = new String[k];
                    String[] finished = new String[k];
                    String[] outcomes = new String[k];
                    java.util.Arrays.fill(workers, WORKER);
                    java.util.Arrays.fill(finished, finishedAt);
                    java.util.Arrays.fill(outcomes, "done");
                    attempts.setArray(1, c.createArrayOf("varchar", keys.toArray(String[]::new)));
                    attempts.setArray(2, c.createArrayOf("bigint", ids.toArray(Long[]::new)));
                    attempts.setArray(3, c.createArrayOf("integer", attemptNumbers.toArray(Integer[]::new)));
                    attempts.setArray(4, c.createArrayOf("bigint", versions.toArray(Long[]::new)));
                    attempts.setArray(5, c.createArrayOf("varchar", workers));
                    attempts.setArray(6, c.createArrayOf("varchar", claimedAts.toArray(String[]::new)));
                    attempts.setArray(7, c.createArrayOf("varchar", finished));
                    attempts.setArray(8, c.createArrayOf("varchar", outcomes));
                    attempts.setArray(9, c.createArrayOf("varchar", new String[k]));
                    attempts.setArray(10, c.createArrayOf("varchar", new String[k]));
                    attempts.executeUpdate();
                }
                c.commit();
                handled.addAndGet(eIds.size());
            }
        } catch (SQLException | RuntimeException e) {
            c.rollback();
            throw e;
        }
    }

    private static void sleepQuietly() {
        try {
            Thread.sleep(1);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
