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
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

/** Per-key FIFO: a message waits while an earlier one of its ordering key is pending or running. */
class OrderingKeyTest {

    @RegisterExtension
    static final PostgresExtension pg = new PostgresExtension();

    private final MutableClock clock = MutableClock.at("2030-01-01T00:00:00Z");
    private final OutboxStore store = new OutboxStore(SqlClock.of(clock), Backoff.DEFAULT);
    private DispatcherSessions sessions;

    @BeforeEach
    void clean() {
        pg.dsl().execute("TRUNCATE outbox_message, outbox_effect, outbox_effect_term, outbox_attempt");
        sessions = new DispatcherSessions(pg.dataSource(), null, null);
    }

    private List<ClaimedMessage> claim(String worker, int n) {
        return sessions.inTransaction(tx -> store.claims().claim(tx, worker, n, List.of(Fixtures.TOPIC), Duration.ofMinutes(1)));
    }

    private void finish(ClaimedMessage m, CompletionStore.Finish.Kind kind) {
        sessions.inTransaction(tx -> store.completions().finish(tx, List.of(new CompletionStore.Finish(m, kind,
                kind == CompletionStore.Finish.Kind.DONE ? null : "err",
                Duration.ofSeconds(5), null, clock.instant()))));
    }

    @Test
    void a2NeverRunsWhileA1IsPendingOrRunningAndB1Flows() {
        var a1 = Fixtures.enqueueOne(pg.dsl(), clock, Fixtures.message("a1").withOrderingKey("order-A"));
        var a2 = Fixtures.enqueueOne(pg.dsl(), clock, Fixtures.message("a2").withOrderingKey("order-A"));
        var b1 = Fixtures.enqueueOne(pg.dsl(), clock, Fixtures.message("b1").withOrderingKey("order-B"));

        // worker 1 takes everything it may: A1 and B1, never A2 in the same batch
        List<ClaimedMessage> w1 = claim("w1", 10);
        assertThat(w1).extracting(ClaimedMessage::id).containsExactlyInAnyOrder(a1.id(), b1.id());
        // worker 2 finds A2 blocked while A1 runs
        assertThat(claim("w2", 10)).isEmpty();

        // A1 fails transiently: back to pending with backoff, and A2 still waits behind it
        ClaimedMessage claimedA1 = w1.stream().filter(m -> m.id() == a1.id()).findFirst().orElseThrow();
        finish(claimedA1, CompletionStore.Finish.Kind.RETRY);
        assertThat(claim("w2", 10)).isEmpty();

        clock.advance(Duration.ofSeconds(5));
        List<ClaimedMessage> again = claim("w2", 10);
        assertThat(again).extracting(ClaimedMessage::id).containsExactly(a1.id());
        finish(again.getFirst(), CompletionStore.Finish.Kind.DONE);

        assertThat(claim("w1", 10)).extracting(ClaimedMessage::id).containsExactly(a2.id());
    }

    @Test
    void aFailedHeadNoLongerBlocksItsKey() {
        var a1 = Fixtures.enqueueOne(pg.dsl(), clock, Fixtures.message("h1").withOrderingKey("order-H"));
        var a2 = Fixtures.enqueueOne(pg.dsl(), clock, Fixtures.message("h2").withOrderingKey("order-H"));
        ClaimedMessage head = claim("w1", 10).getFirst();
        assertThat(head.id()).isEqualTo(a1.id());
        finish(head, CompletionStore.Finish.Kind.FAILED);
        assertThat(claim("w1", 10)).extracting(ClaimedMessage::id).containsExactly(a2.id());
    }

    @Test
    void messagesWithoutAKeyAreUnaffected() {
        Fixtures.enqueueOne(pg.dsl(), clock, Fixtures.message("k1").withOrderingKey("order-K"));
        Fixtures.enqueueOne(pg.dsl(), clock, Fixtures.message("k2").withOrderingKey("order-K"));
        Fixtures.enqueue(pg.dsl(), clock, "free", 3);
        assertThat(claim("w1", 10)).hasSize(4);
    }
}
