package io.mailroom.outbox.maintenance;

import io.mailroom.db.sql.SqlClock;
import io.mailroom.outbox.DispatcherSessions;
import io.mailroom.outbox.admin.TopicRollup;
import io.mailroom.outbox.admin.TopicRollup.Resolution;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import javax.sql.DataSource;
import java.time.Duration;
import java.time.Instant;
import java.util.HashSet;
import java.util.List;
import java.util.Objects;
import java.util.Set;

/**
 * The maintenance role that keeps {@code outbox_rollup}, the counts behind the charts by topic
 * ({@link TopicRollup} reads them): run every half minute or so by every dispatcher; one does the
 * work at a time, the others find the mark locked and return.
 *
 * <p>A run does three things, each in short transactions of its own:
 * <ol>
 *   <li><b>Fold.</b> The attempts that finished in the closed minutes since the mark (a minute is
 *       closed {@code settle} after it ends) are counted by minute, topic and outcome and added to the
 *       minute and hour buckets, and the mark moves past them, in one transaction that holds the mark
 *       row ({@code FOR UPDATE SKIP LOCKED}). So each attempt is counted exactly once, however many
 *       dispatchers run the role and whenever one dies: a fold that rolls back moved nothing, and the
 *       next run starts from the same mark (restarts included: the mark is in the database). A backlog
 *       (the first run, a long stop) is folded {@code foldChunk} or {@code chunkAttempts} at a time,
 *       whichever is less, at most {@code maxChunksPerRun} chunks per run; minutes older than the hour
 *       retention are skipped.</li>
 *   <li><b>Sample.</b> Once a minute, the emails waiting per topic (pending rows of the hot queue)
 *       are written into the current minute and hour buckets, keeping the most seen: the history of
 *       the queue depth, which no log of attempts can tell exactly (retries, cancels, resends).</li>
 *   <li><b>Forget.</b> Minute buckets past {@code minuteRetention} and hour buckets past
 *       {@code hourRetention} are deleted, the same for the other owners' rollups ({@link RollupStep}).</li>
 * </ol>
 *
 * <p>Cost: each attempt row is read once, by the {@code finished_at} index, with one primary-key
 * lookup of its effect for the topic, in one grouped statement per chunk; nothing is written per
 * email. Each fold writes one minute and one hour row per topic and minute with traffic. Measured at
 * 10 M emails: a minute of 300,000 attempts (5,000 a second) folds in 1.4 s, about 5 µs an email,
 * while its effects are still cached; a cold backlog read from disk is slower (about 160 µs an
 * attempt), which {@code chunkAttempts} keeps within the statement timeout.
 *
 * <p>What it cannot count: an attempt stored more than {@code settle} after its {@code finished_at}
 * (a completion retried after a database outage, a worker whose clock lags) lands in a minute
 * already folded and is left out of the charts; the email's own history still has it.
 */
public final class StatsRollup {

    private static final Logger log = LoggerFactory.getLogger(StatsRollup.class);

    /** Topics with traffic or a backlog in this window get a sample of 0 when none of their emails wait. */
    static final Duration KNOWN_TOPICS = Duration.ofDays(7);

    /**
     * What one {@link #run()} did.
     *
     * @param skipped     another dispatcher held the mark: it is folding, this run did nothing
     * @param chunks      transactions that folded attempts
     * @param attempts    attempts folded
     * @param foldedUntil the mark after the run (every attempt that finished before it is counted); null when skipped
     * @param caughtUp    every closed minute is folded (false: more chunks remain for the next run)
     * @param sampled     the emails waiting were sampled in this run
     * @param deleted     old buckets deleted, this rollup's and the steps'
     */
    public record Report(boolean skipped, int chunks, long attempts, Instant foldedUntil, boolean caughtUp,
                         boolean sampled, long deleted) {
    }

    private record Chunk(Instant until, boolean folded, long attempts, boolean caughtUp) {
    }

    private record Upkeep(boolean sampled, long deleted) {
    }

    private final RollupConfig config;
    private final DispatcherSessions sessions;
    private final RollupStore store;
    private final List<RollupStep> steps;

    /** A rollup of outbox-core's attempts only. */
    public StatsRollup(DataSource dataSource, RollupConfig config) {
        this(dataSource, config, List.of());
    }

    /** A rollup that also forgets the old buckets of the other owners' rollups ({@code steps}). */
    public StatsRollup(DataSource dataSource, RollupConfig config, List<RollupStep> steps) {
        Objects.requireNonNull(dataSource, "dataSource");
        this.config = Objects.requireNonNull(config, "config");
        this.steps = List.copyOf(Objects.requireNonNull(steps, "steps"));
        Set<String> tables = new HashSet<>();
        for (RollupStep step : this.steps) {
            if (!tables.add(step.table())) {
                throw new IllegalArgumentException("steps: two rollup steps for " + step.table());
            }
        }
        this.sessions = new DispatcherSessions(dataSource, null, null);
        this.store = new RollupStore(SqlClock.of(config.clock()));
    }

    public RollupConfig config() {
        return config;
    }

    /** One bounded run: fold, sample, forget (see the class comment). */
    public Report run() {
        Instant now = sessions.inTransaction(store::now);
        Instant closed = Resolution.MINUTE.floor(now.minus(config.settle()));
        // nothing older than this is kept, so a mark left far behind (a long stop) jumps to it
        Instant oldestKept = Resolution.HOUR.floor(now.minus(config.hourRetention())).plus(Resolution.HOUR.size());
        sessions.inTransaction(tx -> {
            store.createMark(tx, Resolution.HOUR.floor(now.minus(config.backfill())));
            return null;
        });
        int chunks = 0;
        long attempts = 0;
        Instant until = null;
        boolean caughtUp = false;
        while (chunks < config.maxChunksPerRun()) {
            Chunk chunk = sessions.inTransaction(tx -> {
                store.limitTransaction(tx, config.lockTimeout(), config.statementTimeout());
                TopicRollup.Mark mark = store.lockMark(tx);
                if (mark == null) {
                    return null;
                }
                Instant from = mark.foldedUntil().isBefore(oldestKept) ? oldestKept : mark.foldedUntil();
                if (!from.isBefore(closed)) {
                    return new Chunk(mark.foldedUntil(), false, 0, true);
                }
                Instant to = from.plus(config.foldChunk());
                to = to.isBefore(closed) ? to : closed;
                // at most chunkAttempts attempts, cut at a minute (the first minute is folded whole)
                Instant nth = store.nthFinished(tx, from, to, config.chunkAttempts());
                if (nth != null) {
                    Instant cut = Resolution.MINUTE.floor(nth);
                    to = cut.isAfter(from) ? cut : from.plus(Resolution.MINUTE.size());
                }
                long n = store.fold(tx, from, to);
                store.advance(tx, to);
                return new Chunk(to, true, n, !to.isBefore(closed));
            });
            if (chunk == null) {
                log.debug("Stats rollup: another dispatcher is folding; skipped");
                return new Report(true, chunks, attempts, until, false, false, 0);
            }
            until = chunk.until();
            attempts += chunk.attempts();
            chunks += chunk.folded() ? 1 : 0;
            if (chunk.caughtUp()) {
                caughtUp = true;
                break;
            }
        }
        Upkeep upkeep = sessions.inTransaction(tx -> {
            store.limitTransaction(tx, config.lockTimeout(), config.statementTimeout());
            TopicRollup.Mark mark = store.lockMark(tx);
            if (mark == null) {
                return new Upkeep(false, 0);
            }
            Instant at = store.now(tx);
            boolean sample = mark.sampledAt() == null
                    || Resolution.MINUTE.floor(mark.sampledAt()).isBefore(Resolution.MINUTE.floor(at));
            if (sample) {
                store.sample(tx, at, at.minus(KNOWN_TOPICS));
                store.sampled(tx, at);
            }
            Instant minutesBefore = at.minus(config.minuteRetention());
            Instant hoursBefore = at.minus(config.hourRetention());
            long deleted = store.deleteOld(tx, minutesBefore, hoursBefore);
            for (RollupStep step : steps) {
                deleted += step.deleteBefore(tx, minutesBefore, hoursBefore);
            }
            return new Upkeep(sample, deleted);
        });
        Report report = new Report(false, chunks, attempts, until, caughtUp, upkeep.sampled(), upkeep.deleted());
        if (chunks > 1 || !caughtUp) {
            log.info("Stats rollup: folded {} attempts in {} chunks up to {}{}", attempts, chunks, until,
                    caughtUp ? "" : "; more remain for the next run");
        } else {
            log.debug("Stats rollup: {}", report);
        }
        return report;
    }
}
