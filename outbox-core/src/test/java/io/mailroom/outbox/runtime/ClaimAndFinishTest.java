package io.mailroom.outbox.runtime;

import io.mailroom.outbox.DispatcherSessions;
import io.mailroom.outbox.Fixtures;
import io.mailroom.outbox.JdbcUrls;
import io.mailroom.outbox.MutableClock;
import io.mailroom.outbox.NewMessage;
import io.mailroom.testing.PostgresExtension;
import org.jooq.Record;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicReference;

import static io.mailroom.db.jooq.Tables.OUTBOX_ATTEMPT;
import static io.mailroom.db.jooq.Tables.OUTBOX_EFFECT;
import static io.mailroom.db.jooq.Tables.OUTBOX_MESSAGE;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** Single deterministic steps of the dispatcher, driven by an injected clock: no sleeping. */
class ClaimAndFinishTest {

    @RegisterExtension
    static final PostgresExtension pg = new PostgresExtension();

    private final MutableClock clock = MutableClock.at("2030-01-01T00:00:00Z");

    @BeforeEach
    void clean() {
        pg.dsl().execute("TRUNCATE outbox_message, outbox_effect, outbox_effect_term, outbox_attempt");
    }

    private Dispatcher dispatcher(MessageHandler handler, Backoff backoff) {
        DispatcherConfig config = DispatcherConfig.builder()
                .workerId("w1").batchSize(10).lease(Duration.ofSeconds(30)).backoff(backoff).clock(clock).build();
        return new Dispatcher(pg.dataSource(), config, Map.of(Fixtures.TOPIC, handler));
    }

    @Test
    void claimMarksRunningWithLeaseVersionAndAttempt() {
        var msg = Fixtures.enqueueOne(pg.dsl(), clock, Fixtures.message("k1"));
        AtomicReference<ClaimedMessage> seen = new AtomicReference<>();
        int claimed = dispatcher((m, ctx) -> {
            seen.set(m);
            Record row = Fixtures.row(pg.dsl(), m.id());
            assertThat(row.get(OUTBOX_MESSAGE.STATUS)).isEqualTo("running");
            assertThat(row.get(OUTBOX_MESSAGE.CLAIMED_BY)).isEqualTo("w1");
            assertThat(row.get(OUTBOX_MESSAGE.CLAIMED_AT)).isEqualTo(clock.instant());
            assertThat(row.get(OUTBOX_MESSAGE.LEASE_UNTIL)).isEqualTo(clock.instant().plusSeconds(30));
            return Outcome.done();
        }, Backoff.DEFAULT).runOnce();

        assertThat(claimed).isEqualTo(1);
        assertThat(seen.get().id()).isEqualTo(msg.id());
        assertThat(seen.get().claimVersion()).isEqualTo(1);
        assertThat(seen.get().attempt()).isEqualTo(1);
        assertThat(seen.get().payloadJson()).contains("\"key\": \"k1\"");
        Record row = Fixtures.row(pg.dsl(), msg.id());
        assertThat(row.get(OUTBOX_MESSAGE.STATUS)).isEqualTo("done");
        assertThat(row.get(OUTBOX_MESSAGE.LEASE_UNTIL)).isNull();
        assertThat(row.get(OUTBOX_MESSAGE.FINISHED_AT)).isEqualTo(clock.instant());
        assertThat(pg.dsl().fetchSingle(OUTBOX_EFFECT, OUTBOX_EFFECT.IDEMPOTENCY_KEY.eq("k1")).getStatus()).isEqualTo("done");
        assertThat(pg.dsl().fetch(OUTBOX_ATTEMPT)).singleElement()
                .satisfies(a -> assertThat(a.getOutcome()).isEqualTo("done"));
    }

    @Test
    void aMessageIsNotClaimedBeforeItsAvailableAt() {
        Fixtures.enqueueOne(pg.dsl(), clock, Fixtures.message("later").withAvailableAt(clock.instant().plusSeconds(60)));
        Dispatcher d = dispatcher((m, ctx) -> Outcome.done(), Backoff.DEFAULT);
        assertThat(d.runOnce()).isZero();
        clock.advance(Duration.ofSeconds(61));
        assertThat(d.runOnce()).isEqualTo(1);
    }

    @Test
    void transientFailureGoesBackToPendingWithExponentialBackoff() {
        var msg = Fixtures.enqueueOne(pg.dsl(), clock, Fixtures.message("flaky"));
        Backoff noJitter = new Backoff(Duration.ofSeconds(10), Duration.ofMinutes(5), 2.0, 0.0);
        Dispatcher d = dispatcher((m, ctx) -> Outcome.retryLater("provider said 503"), noJitter);

        List<Duration> delays = new ArrayList<>();
        for (int i = 0; i < 4; i++) {
            assertThat(d.runOnce()).isEqualTo(1);
            Record row = Fixtures.row(pg.dsl(), msg.id());
            assertThat(row.get(OUTBOX_MESSAGE.STATUS)).isEqualTo("pending");
            assertThat(row.get(OUTBOX_MESSAGE.LAST_ERROR)).isEqualTo("provider said 503");
            Duration delay = Duration.between(clock.instant(), row.get(OUTBOX_MESSAGE.AVAILABLE_AT));
            delays.add(delay);
            assertThat(d.runOnce()).as("not available during its backoff").isZero();
            clock.advance(delay);
        }
        assertThat(delays).containsExactly(Duration.ofSeconds(10), Duration.ofSeconds(20), Duration.ofSeconds(40),
                Duration.ofSeconds(80));
    }

    @Test
    void backoffIsCappedAndJittered() {
        Backoff b = new Backoff(Duration.ofSeconds(1), Duration.ofSeconds(60), 2.0, 0.5);
        assertThat(b.delay(1, () -> 0.0)).isEqualTo(Duration.ofSeconds(1));
        assertThat(b.delay(3, () -> 0.0)).isEqualTo(Duration.ofSeconds(4));
        assertThat(b.delay(30, () -> 0.0)).isEqualTo(Duration.ofSeconds(60));
        assertThat(b.delay(30, () -> 0.999)).isBetween(Duration.ofSeconds(30), Duration.ofSeconds(31));
        assertThat(b.delay(3, () -> 0.5)).isEqualTo(Duration.ofSeconds(3));
        assertThatThrownBy(() -> new Backoff(Duration.ofSeconds(10), Duration.ofSeconds(1), 2, 0))
                .hasMessageContaining("cap");
        assertThatThrownBy(() -> new Backoff(Duration.ofSeconds(1), Duration.ofSeconds(10), 2, 1.5))
                .hasMessageContaining("jitter");
    }

    @Test
    void aCallerSuppliedRetryAfterOverridesTheBackoff() {
        var msg = Fixtures.enqueueOne(pg.dsl(), clock, Fixtures.message("rate-limited"));
        dispatcher((m, ctx) -> Outcome.retryLater("429", Duration.ofSeconds(30)), Backoff.DEFAULT).runOnce();
        assertThat(Fixtures.row(pg.dsl(), msg.id()).get(OUTBOX_MESSAGE.AVAILABLE_AT))
                .isEqualTo(clock.instant().plusSeconds(30));
    }

    @Test
    void theLastFailedAttemptFailsTheMessageAndKeepsABoundedError() {
        var msg = Fixtures.enqueueOne(pg.dsl(), clock, Fixtures.message("poison").withMaxAttempts(3));
        String longError = "x".repeat(5000);
        Dispatcher d = dispatcher((m, ctx) -> Outcome.retryLater(longError, Duration.ofSeconds(1)), Backoff.DEFAULT);
        for (int i = 0; i < 3; i++) {
            assertThat(d.runOnce()).isEqualTo(1);
            clock.advance(Duration.ofSeconds(1));
        }
        Record row = Fixtures.row(pg.dsl(), msg.id());
        assertThat(row.get(OUTBOX_MESSAGE.STATUS)).isEqualTo("failed");
        assertThat(row.get(OUTBOX_MESSAGE.ATTEMPTS)).isEqualTo(3);
        assertThat(row.get(OUTBOX_MESSAGE.LAST_ERROR)).hasSizeLessThanOrEqualTo(2000).startsWith("xxx");
        assertThat(d.runOnce()).isZero();
        assertThat(pg.dsl().fetch(OUTBOX_ATTEMPT).getValues(OUTBOX_ATTEMPT.OUTCOME))
                .containsExactlyInAnyOrder("retry", "retry", "failed");
        assertThat(pg.dsl().fetchSingle(OUTBOX_EFFECT).getStatus()).isEqualTo("failed");
    }

    @Test
    void aPermanentFailureFailsAtOnceAndReviewParks() {
        var bad = Fixtures.enqueueOne(pg.dsl(), clock, Fixtures.message("bad-address"));
        var unsure = Fixtures.enqueueOne(pg.dsl(), clock, Fixtures.message("unsure"));
        dispatcher((m, ctx) -> m.idempotencyKey().equals("bad-address")
                ? Outcome.failed("550 no such user") : Outcome.review("timeout after DATA"), Backoff.DEFAULT).runOnce();
        assertThat(Fixtures.row(pg.dsl(), bad.id()).get(OUTBOX_MESSAGE.STATUS)).isEqualTo("failed");
        assertThat(Fixtures.row(pg.dsl(), bad.id()).get(OUTBOX_MESSAGE.ATTEMPTS)).isEqualTo(1);
        assertThat(Fixtures.row(pg.dsl(), unsure.id()).get(OUTBOX_MESSAGE.STATUS)).isEqualTo("review");
        assertThat(Fixtures.row(pg.dsl(), unsure.id()).get(OUTBOX_MESSAGE.LAST_ERROR)).isEqualTo("timeout after DATA");
    }

    @Test
    void aHandlerExceptionIsATransientFailure() {
        var msg = Fixtures.enqueueOne(pg.dsl(), clock, Fixtures.message("throws"));
        dispatcher((m, ctx) -> {
            throw new IllegalStateException("boom");
        }, Backoff.DEFAULT).runOnce();
        Record row = Fixtures.row(pg.dsl(), msg.id());
        assertThat(row.get(OUTBOX_MESSAGE.STATUS)).isEqualTo("pending");
        assertThat(row.get(OUTBOX_MESSAGE.LAST_ERROR)).contains("IllegalStateException").contains("boom");
    }

    @Test
    void theOutcomeStepRunsInTheCompletionTransactionOnlyWhileTheClaimHolds() {
        pg.dsl().execute("CREATE TABLE IF NOT EXISTS side_record (k varchar PRIMARY KEY)");
        var held = Fixtures.enqueueOne(pg.dsl(), clock, Fixtures.message("held"));
        var stolen = Fixtures.enqueueOne(pg.dsl(), clock, Fixtures.message("stolen"));
        dispatcher((m, ctx) -> {
            if (m.idempotencyKey().equals("stolen")) {
                // another worker took it over meanwhile
                pg.dsl().execute("UPDATE outbox_message SET claim_version = claim_version + 1 WHERE id = " + m.id());
            }
            return Outcome.done(null, tx -> tx.execute("INSERT INTO side_record VALUES (?)", m.idempotencyKey()));
        }, Backoff.DEFAULT).runOnce();

        assertThat(pg.dsl().fetch("SELECT k FROM side_record").getValues(0, String.class)).containsExactly("held");
        assertThat(Fixtures.status(pg.dsl(), held.id())).isEqualTo("done");
        assertThat(Fixtures.status(pg.dsl(), stolen.id())).isEqualTo("running");
        assertThat(pg.dsl().fetch(OUTBOX_ATTEMPT).getValues(OUTBOX_ATTEMPT.OUTCOME))
                .containsExactlyInAnyOrder("done", "claim_lost");
    }

    @Test
    void aFailingOutcomeStepDoesNotHoldBackTheOthersInItsBatch() {
        var ok = Fixtures.enqueueOne(pg.dsl(), clock, Fixtures.message("ok"));
        var broken = Fixtures.enqueueOne(pg.dsl(), clock, Fixtures.message("broken"));
        Dispatcher d = dispatcher((m, ctx) -> Outcome.done(null, m.idempotencyKey().equals("broken")
                ? tx -> tx.execute("SELECT * FROM no_such_table") : null), Backoff.DEFAULT);
        d.runOnce();
        assertThat(Fixtures.status(pg.dsl(), ok.id())).isEqualTo("done");
        Record row = Fixtures.row(pg.dsl(), broken.id());
        assertThat(row.get(OUTBOX_MESSAGE.STATUS)).isEqualTo("pending");
        assertThat(row.get(OUTBOX_MESSAGE.LAST_ERROR)).contains("could not record the outcome").contains("42P01");
    }

    @Test
    void onlyTopicsWithAHandlerAreClaimed() {
        var other = Fixtures.enqueueOne(pg.dsl(), clock, NewMessage.of("no.handler", "order", "1", "nh-1", "{}"));
        assertThat(dispatcher((m, ctx) -> Outcome.done(), Backoff.DEFAULT).runOnce()).isZero();
        assertThat(Fixtures.status(pg.dsl(), other.id())).isEqualTo("pending");
    }

    @Test
    void idleInTransactionTimeoutIsNeverLongerThanTheLease() {
        // a dispatcher cut off mid-transaction holds its row locks until this timeout ends its session
        // (the partition run waited 30 s for a rescue against an 8 s lease before this)
        assertThat(DispatcherConfig.builder().build().idleInTransactionTimeout())
                .isEqualTo(DispatcherConfig.DEFAULT_IDLE_IN_TRANSACTION_TIMEOUT);
        assertThat(DispatcherConfig.builder().lease(Duration.ofSeconds(8)).build().idleInTransactionTimeout())
                .isEqualTo(Duration.ofSeconds(8));
        assertThat(DispatcherConfig.builder().lease(Duration.ofSeconds(8)).idleInTransactionTimeout(Duration.ofSeconds(5)).build()
                .idleInTransactionTimeout()).isEqualTo(Duration.ofSeconds(5));
        assertThat(DispatcherConfig.builder().lease(Duration.ofSeconds(8)).idleInTransactionTimeout(null).build()
                .idleInTransactionTimeout()).isNull();
        assertThatThrownBy(() -> DispatcherConfig.builder().lease(Duration.ofSeconds(8))
                .idleInTransactionTimeout(Duration.ofSeconds(30)).build())
                .hasMessageStartingWith("idleInTransactionTimeout (PT30S) must not be longer than lease (PT8S)");
    }

    @Test
    void configurationRejectsBadValuesNamingTheSetting() {
        assertThatThrownBy(() -> DispatcherConfig.builder().batchSize(0).build()).hasMessageContaining("batchSize");
        assertThatThrownBy(() -> DispatcherConfig.builder().concurrency(-1).build()).hasMessageContaining("concurrency");
        assertThatThrownBy(() -> DispatcherConfig.builder().claimers(0).build())
                .hasMessage("claimers must be 1..16, got 0");
        assertThatThrownBy(() -> DispatcherConfig.builder().claimers(17).build())
                .hasMessage("claimers must be 1..16, got 17");
        assertThatThrownBy(() -> DispatcherConfig.builder().lease(Duration.ofSeconds(10))
                .heartbeatInterval(Duration.ofSeconds(10)).build()).hasMessageContaining("heartbeatInterval");
        assertThatThrownBy(() -> DispatcherConfig.builder().pollInterval(Duration.ZERO).build())
                .hasMessageContaining("pollInterval");
        assertThatThrownBy(() -> DispatcherConfig.builder().pollJitter(2).build()).hasMessageContaining("pollJitter");
        assertThat(DispatcherConfig.builder().lease(Duration.ofSeconds(9)).build().heartbeatInterval())
                .isEqualTo(Duration.ofSeconds(3));
    }

    @Test
    void dispatcherUrlsGetTcpKeepAlive() {
        assertThat(JdbcUrls.withKeepAlive("jdbc:postgresql://h/db")).isEqualTo("jdbc:postgresql://h/db?tcpKeepAlive=true");
        assertThat(JdbcUrls.withKeepAlive("jdbc:postgresql://h/db?user=u")).isEqualTo("jdbc:postgresql://h/db?user=u&tcpKeepAlive=true");
        assertThat(JdbcUrls.withKeepAlive("jdbc:postgresql://h/db?tcpKeepAlive=false")).endsWith("tcpKeepAlive=false");
        assertThatThrownBy(() -> JdbcUrls.withKeepAlive("jdbc:mysql://h/db")).hasMessageContaining("PostgreSQL");
    }

    @Test
    void dispatcherSessionsCarryTheirTimeouts() {
        var sessions = new DispatcherSessions(pg.dataSource(), Duration.ofSeconds(7), Duration.ofSeconds(11));
        String settings = sessions.inTransaction(tx -> tx.fetchSingle(
                "SELECT current_setting('statement_timeout') || ' ' || current_setting('idle_in_transaction_session_timeout')"
                        + " || ' ' || current_setting('transaction_isolation')").get(0, String.class));
        assertThat(settings).isEqualTo("7s 11s read committed");
    }

    @Test
    void notAttemptedHandsTheMessageBackWithoutCountingTheAttempt() {
        var msg = Fixtures.enqueueOne(pg.dsl(), clock, Fixtures.message("breaker-open").withMaxAttempts(1));
        Dispatcher d = dispatcher((m, ctx) -> Outcome.notAttempted("circuit breaker open", Duration.ofSeconds(15)),
                Backoff.DEFAULT);
        for (int i = 0; i < 3; i++) {
            assertThat(d.runOnce()).isEqualTo(1);
            Record row = Fixtures.row(pg.dsl(), msg.id());
            assertThat(row.get(OUTBOX_MESSAGE.STATUS)).as("never failed, though max attempts is 1").isEqualTo("pending");
            assertThat(row.get(OUTBOX_MESSAGE.ATTEMPTS)).isZero();
            assertThat(row.get(OUTBOX_MESSAGE.AVAILABLE_AT)).isEqualTo(clock.instant().plusSeconds(15));
            clock.advance(Duration.ofSeconds(15));
        }
        assertThat(pg.dsl().fetch(OUTBOX_ATTEMPT).getValues(OUTBOX_ATTEMPT.OUTCOME)).containsOnly("released");
        assertThat(pg.dsl().fetch("SELECT detail->>'release' FROM outbox_attempt").getValues(0, String.class)).containsOnly("not_attempted");
    }

    @Test
    void theAttemptHistorySaysByCodeWhyAClaimWentBackOrFailed() {
        Fixtures.enqueueOne(pg.dsl(), clock, Fixtures.message("held-back"));
        Fixtures.enqueueOne(pg.dsl(), clock, Fixtures.message("refused"));
        Fixtures.enqueueOne(pg.dsl(), clock, Fixtures.message("tries-used-up").withMaxAttempts(1));
        dispatcher((m, ctx) -> switch (m.idempotencyKey()) {
            case "held-back" -> new Outcome.NotAttempted("breaker open", Duration.ofSeconds(5), "{\"transport\": \"smtp\"}", null);
            case "refused" -> new Outcome.Failed("550 no such mailbox", "{\"code\":\"smtp-550\",\"permanent\":false}", null);
            default -> Outcome.retryLater("451 try later");
        }, Backoff.DEFAULT).runOnce();
        Map<String, String> details = new java.util.HashMap<>();
        pg.dsl().select(OUTBOX_ATTEMPT.IDEMPOTENCY_KEY, OUTBOX_ATTEMPT.DETAIL).from(OUTBOX_ATTEMPT)
                .forEach(r -> details.put(r.value1(), r.value2() == null ? null : r.value2().data()));
        assertThat(details.get("held-back")).contains("\"release\": \"not_attempted\"").contains("\"transport\": \"smtp\"");
        // the dispatcher's fact wins over a key of the same name the handler chose
        assertThat(details.get("refused")).contains("\"permanent\": true").contains("\"code\": \"smtp-550\"");
        assertThat(details.get("tries-used-up")).isNull();
        assertThat(AttemptDetail.with("{ }", "k", "1")).isEqualTo("{\"k\":1}");
        assertThat(AttemptDetail.with("[1]", "k", "1")).isEqualTo("[1]");
    }
}
