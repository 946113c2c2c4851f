package io.mailroom.outbox.runtime;

import io.mailroom.db.sql.SqlClock;
import io.mailroom.outbox.EnqueuedMessage;
import io.mailroom.outbox.Fixtures;
import io.mailroom.outbox.MutableClock;
import io.mailroom.outbox.admin.EffectHistory;
import io.mailroom.testing.PostgresExtension;
import org.jooq.DSLContext;
import org.jooq.Record2;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import java.time.Duration;
import java.util.List;

import static io.mailroom.db.jooq.Tables.OUTBOX_EFFECT;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * An email's outcome is written into its effect row in place (V29): the completion's effect update
 * changes no indexed column, so PostgreSQL keeps the new row version on its page and adds no index
 * entry (a HOT update), while the emails that did not go through stay listed and counted through the
 * exception index.
 */
class EffectOutcomeInPlaceTest {

    @RegisterExtension
    static final PostgresExtension pg = new PostgresExtension();

    private final MutableClock clock = MutableClock.at("2030-01-01T00:00:00Z");
    private final HistoryStore history = new HistoryStore(SqlClock.database());

    @BeforeEach
    void clean() {
        pg.dsl().execute("TRUNCATE outbox_message, outbox_effect, outbox_effect_term, outbox_attempt");
    }

    private static ChangedRow outcome(EnqueuedMessage m, String status, String error) {
        return new ChangedRow(m.id(), m.createdAt(), m.idempotencyKey(), status, 1, 10, 1, "w1", null, error,
                Fixtures.TOPIC, null);
    }

    /**
     * Updates and in-place (HOT) updates of outbox_effect this backend counted and has not reported
     * yet (PostgreSQL 15 may still hold an earlier transaction's here: compare two readings).
     */
    private static Record2<Long, Long> effectUpdates(DSLContext tx) {
        return tx.resultQuery("""
                SELECT n_tup_upd, n_tup_hot_upd FROM pg_stat_xact_user_tables
                WHERE relname = 'outbox_effect'""")
                .coerce(org.jooq.impl.DSL.field("n_tup_upd", Long.class), org.jooq.impl.DSL.field("n_tup_hot_upd", Long.class))
                .fetchSingle();
    }

    @Test
    void aSentOutcomeIsWrittenInPlace() {
        List<EnqueuedMessage> sent = Fixtures.enqueue(pg.dsl(), clock, "sent", 20);
        List<EnqueuedMessage> retried = Fixtures.enqueue(pg.dsl(), clock, "retried", 5);

        long[] counts = pg.dsl().transactionResult(cfg -> {
            Record2<Long, Long> before = effectUpdates(cfg.dsl());
            history.updateEffects(cfg.dsl(), sent.stream().map(m -> outcome(m, "done", null)).toList());
            history.updateEffects(cfg.dsl(), retried.stream().map(m -> outcome(m, "pending", "HTTP 503")).toList());
            Record2<Long, Long> after = effectUpdates(cfg.dsl());
            return new long[] {after.value1() - before.value1(), after.value2() - before.value2()};
        });

        // The 20 sent: in place, since no index of the effect mentions status or updated_at and the
        // page kept room for the new versions (fillfactor); with the status index of V2 none was.
        // The 5 retries wrote an error, which the error words index holds: not in place.
        assertThat(counts[0]).isEqualTo(25);
        assertThat(counts[1]).isEqualTo(20);
        assertThat(pg.dsl().fetchCount(OUTBOX_EFFECT, OUTBOX_EFFECT.STATUS.eq("done"))).isEqualTo(20);
        assertThat(pg.dsl().fetchCount(OUTBOX_EFFECT, OUTBOX_EFFECT.EXCEPTION_STATUS.isNotNull())).isZero();
    }

    @Test
    void theEmailsThatDidNotGoThroughAreListedAndCountedThroughTheExceptionIndex() {
        List<EnqueuedMessage> m = Fixtures.enqueue(pg.dsl(), clock, "k", 6);
        pg.dsl().transaction(cfg -> history.updateEffects(cfg.dsl(), List.of(
                outcome(m.get(0), "failed", "HTTP 422"), outcome(m.get(1), "review", "ambiguous"),
                outcome(m.get(2), "cancelled", null), outcome(m.get(3), "done", null))));
        pg.dsl().transaction(cfg -> history.updateEffects(cfg.dsl(), List.of(outcome(m.get(4), "failed", "HTTP 422"))));

        var effects = pg.dsl().fetch(OUTBOX_EFFECT);
        assertThat(effects).allSatisfy(e -> {
            boolean exception = EffectHistory.EXCEPTION_STATUSES.contains(e.getStatus());
            assertThat(e.getExceptionStatus()).isEqualTo(exception ? e.getStatus() : null);
            assertThat(e.getExceptionAt()).isEqualTo(exception ? e.getUpdatedAt() : null);
        });

        List<EffectHistory.Effect> failed = pg.dsl().transactionResult(cfg -> EffectHistory.byStatus(cfg.dsl(),
                new EffectHistory.StatusPage("failed", null, null, null, null, null, null, 10)));
        assertThat(failed).extracting(EffectHistory.Effect::key).containsExactly("k-5", "k-1");
        assertThat(EffectHistory.pageTime("failed")).isEqualTo(EffectHistory.PageTime.CHANGED);
        java.util.Map<String, Long> counts = pg.dsl().transactionResult(cfg ->
                EffectHistory.countByStatus(cfg.dsl(), List.of("failed", "review", "closed")));
        assertThat(counts).containsEntry("failed", 2L).containsEntry("review", 1L).containsEntry("closed", 0L);
        assertThatThrownBy(() -> EffectHistory.countByStatus(pg.dsl(), List.of("done")))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("done");

        // a failed email retried by a person leaves the list (its exception columns go back to NULL)
        pg.dsl().transaction(cfg -> history.updateEffects(cfg.dsl(), List.of(outcome(m.get(0), "pending", null))));
        assertThat(pg.dsl().fetchSingle(OUTBOX_EFFECT, OUTBOX_EFFECT.IDEMPOTENCY_KEY.eq("k-1")).getExceptionStatus()).isNull();
    }

    @Test
    void waitingEmailsAreListedThroughTheQueueAndSentOnesNewestQueuedFirst() {
        List<EnqueuedMessage> first = Fixtures.enqueue(pg.dsl(), clock, "early", 3);
        clock.advance(Duration.ofMinutes(1));
        List<EnqueuedMessage> later = Fixtures.enqueue(pg.dsl(), clock, "late", 3);
        pg.dsl().transaction(cfg -> history.updateEffects(cfg.dsl(), List.of(outcome(first.get(0), "done", null),
                outcome(later.get(0), "done", null))));

        List<EffectHistory.Effect> pending = pg.dsl().transactionResult(cfg -> EffectHistory.byStatus(cfg.dsl(),
                new EffectHistory.StatusPage("pending", null, null, null, null, null, null, 10)));
        assertThat(pending).extracting(EffectHistory.Effect::key)
                .containsExactlyInAnyOrder("early-2", "early-3", "late-2", "late-3");

        List<EffectHistory.Effect> sent = pg.dsl().transactionResult(cfg -> EffectHistory.byStatus(cfg.dsl(),
                new EffectHistory.StatusPage("done", null, null, null, null, null, null, 10)));
        assertThat(sent).extracting(EffectHistory.Effect::key).containsExactly("late-1", "early-1");
        assertThat(EffectHistory.pageTime("done")).isEqualTo(EffectHistory.PageTime.QUEUED);
        // since bounds the time a sent email was queued
        List<EffectHistory.Effect> sentLater = pg.dsl().transactionResult(cfg -> EffectHistory.byStatus(cfg.dsl(),
                new EffectHistory.StatusPage("done", null, clock.instant(), null, null, null, null, 10)));
        assertThat(sentLater).extracting(EffectHistory.Effect::key).containsExactly("late-1");
    }
}
