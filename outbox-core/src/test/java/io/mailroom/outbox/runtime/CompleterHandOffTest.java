package io.mailroom.outbox.runtime;

import io.mailroom.outbox.DispatcherSessions;
import io.mailroom.outbox.Fixtures;
import io.mailroom.outbox.MutableClock;
import io.mailroom.db.sql.SqlClock;
import io.mailroom.testing.PostgresExtension;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

import static io.mailroom.db.jooq.Tables.OUTBOX_ATTEMPT;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * The completion hand-off a claimer short of slots uses: queued outcomes are written on the
 * caller's thread, a whole batch in one transaction, settled once per batch (so its slots come
 * back together), each outcome by exactly one writer. No completer thread is started here.
 */
class CompleterHandOffTest {

    @RegisterExtension
    static final PostgresExtension pg = new PostgresExtension();

    private static final Duration LEASE = Duration.ofSeconds(30);

    private final MutableClock clock = MutableClock.at("2030-01-01T00:00:00Z");
    private final OutboxStore store = new OutboxStore(SqlClock.of(clock), Backoff.DEFAULT);
    private final List<List<Completer.Pending>> settledBatches = new ArrayList<>();
    private final List<Completer.Pending> givenUp = new ArrayList<>();

    @BeforeEach
    void clean() {
        pg.dsl().execute("TRUNCATE outbox_message, outbox_effect, outbox_effect_term, outbox_attempt");
    }

    private Completer completer(int completionBatchSize, DispatcherSessions sessions) {
        DispatcherConfig config = DispatcherConfig.builder().workerId("w1").lease(LEASE).clock(clock)
                .completionBatchSize(completionBatchSize).build();
        return new Completer(sessions, store, config, DispatcherListener.NONE, new Completer.Settlement() {
            @Override
            public void written(List<Completer.Pending> batch) {
                settledBatches.add(List.copyOf(batch));
            }

            @Override
            public void givenUp(Completer.Pending pending) {
                givenUp.add(pending);
            }
        });
    }

    private List<Completer.Pending> claimDone(DispatcherSessions sessions, int n) {
        Fixtures.enqueue(pg.dsl(), clock, "h", n);
        List<ClaimedMessage> claimed = sessions.inTransaction(tx ->
                store.claims().claim(tx, "w1", n, List.of(Fixtures.TOPIC), LEASE));
        assertThat(claimed).hasSize(n);
        List<Completer.Pending> out = new ArrayList<>();
        for (ClaimedMessage m : claimed) {
            InFlight f = new InFlight(m);
            assertThat(f.startCompleting()).isTrue();
            out.add(new Completer.Pending(new CompletionStore.Finish(m, CompletionStore.Finish.Kind.DONE, null, null, null, clock.instant()), null,
                    f, "done", Duration.ZERO));
        }
        return out;
    }

    @Test
    void queuedOutcomesAreWrittenOnTheCallersThreadAndSettledAsOneBatch() {
        DispatcherSessions sessions = new DispatcherSessions(pg.dataSource(), null, null);
        Completer completer = completer(500, sessions);
        List<Completer.Pending> pending = claimDone(sessions, 5);
        pending.forEach(completer::submit);
        assertThat(completer.queued()).isEqualTo(5);

        assertThat(completer.writeQueued()).isTrue();

        assertThat(settledBatches).singleElement().satisfies(b -> assertThat(b).containsExactlyElementsOf(pending));
        assertThat(completer.queued()).isZero();
        assertThat(Fixtures.countByStatus(pg.dsl(), "done")).isEqualTo(5);
        assertThat(pg.dsl().fetchCount(OUTBOX_ATTEMPT)).isEqualTo(5);
        assertThat(givenUp).isEmpty();
        // nothing left: a second writer finds nothing and writes nothing
        assertThat(completer.writeQueued()).isFalse();
        assertThat(settledBatches).hasSize(1);
        assertThat(pg.dsl().fetchCount(OUTBOX_ATTEMPT)).isEqualTo(5);
    }

    @Test
    void aWriterTakesAtMostOneCompletionBatch() {
        DispatcherSessions sessions = new DispatcherSessions(pg.dataSource(), null, null);
        Completer completer = completer(2, sessions);
        List<Completer.Pending> pending = claimDone(sessions, 3);
        pending.forEach(completer::submit);

        assertThat(completer.writeQueued()).isTrue();
        assertThat(settledBatches).singleElement().satisfies(b -> assertThat(b).hasSize(2));
        assertThat(completer.queued()).isEqualTo(1);
        assertThat(Fixtures.countByStatus(pg.dsl(), "done")).isEqualTo(2);

        assertThat(completer.writeQueued()).isTrue();
        assertThat(settledBatches).hasSize(2);
        assertThat(settledBatches.get(1)).containsExactly(pending.get(2));
        assertThat(Fixtures.countByStatus(pg.dsl(), "done")).isEqualTo(3);
    }

    @Test
    void aClaimLostBeforeCompletionIsSettledAndItsRowLeftAlone() {
        DispatcherSessions sessions = new DispatcherSessions(pg.dataSource(), null, null);
        Completer completer = completer(500, sessions);
        List<Completer.Pending> pending = claimDone(sessions, 2);
        long lostId = pending.get(0).finish().message().id();
        pg.dsl().execute("UPDATE outbox_message SET claim_version = claim_version + 1 WHERE id = " + lostId);
        pending.forEach(completer::submit);

        assertThat(completer.writeQueued()).isTrue();

        // both claims are over (slots back), but only the one still held changed its row
        assertThat(settledBatches).singleElement().satisfies(b -> assertThat(b).hasSize(2));
        assertThat(Fixtures.status(pg.dsl(), lostId)).isEqualTo("running");
        assertThat(Fixtures.status(pg.dsl(), pending.get(1).finish().message().id())).isEqualTo("done");
    }

    @Test
    void theClaimSizeIsTheBatchOrAPowerOfTwoThatFitsTheFreeSlots() {
        assertThat(Producer.claimSize(1000, 1000)).isEqualTo(1000);
        assertThat(Producer.claimSize(4000, 1000)).isEqualTo(1000);
        assertThat(Producer.claimSize(999, 1000)).isEqualTo(512);
        assertThat(Producer.claimSize(300, 1000)).isEqualTo(256);
        assertThat(Producer.claimSize(1, 1000)).isEqualTo(1);
        assertThat(Producer.claimSize(32, 50)).isEqualTo(32);
        assertThat(Producer.claimSize(50, 50)).isEqualTo(50);
        java.util.Set<Integer> limits = new java.util.HashSet<>();
        for (int free = 1; free <= 5000; free++) {
            int size = Producer.claimSize(free, 1000);
            assertThat(size).isBetween(1, Math.min(free, 1000));
            limits.add(size);
        }
        assertThat(limits).hasSize(11);
    }
}
