package io.mailroom.idempotency;

import io.mailroom.db.sql.SqlStates;
import io.mailroom.testing.PostgresExtension;
import org.jooq.DSLContext;
import org.jooq.JSONB;
import org.jooq.SQLDialect;
import org.jooq.exception.DataAccessException;
import org.jooq.impl.DSL;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInfo;
import org.junit.jupiter.api.extension.RegisterExtension;

import java.sql.Connection;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Function;

import static io.mailroom.db.jooq.Tables.IDEMPOTENCY_RECORD;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** One step at a time against real PostgreSQL, with a hand-moved clock. */
class IdempotencyStoreTest {

    @RegisterExtension
    static final PostgresExtension pg = new PostgresExtension();

    private static final Instant T0 = Instant.parse("2030-01-02T03:04:05.123456Z");
    private static final AtomicInteger KEYS = new AtomicInteger();

    private final MutableClock clock = new MutableClock(T0);
    private final IdempotencyStore store = new IdempotencyStore(clock);
    private final Fingerprint fp = Fingerprint.of("to@example.com", "Your order 102", "body", "v1");

    /** A key no other test uses, so tests share the class's database without interfering. */
    private static String newKey(TestInfo info) {
        return "effect-" + info.getTestMethod().orElseThrow().getName() + "-" + KEYS.incrementAndGet();
    }

    private static <T> T inTx(Function<DSLContext, T> work) {
        return pg.dsl().transactionResult(c -> work.apply(c.dsl()));
    }

    /** {@link #inTx} typed, so AssertJ picks one {@code assertThat}. */
    private static Reservation reservation(Function<DSLContext, Reservation> work) {
        return inTx(work);
    }

    private static IdempotencyStore.Release release(Function<DSLContext, IdempotencyStore.Release> work) {
        return inTx(work);
    }

    private Reservation reserve(String key) {
        return inTx(tx -> store.reserve(tx, key, fp, "worker-1", "{\"topic\":\"email.order\"}"));
    }

    private EffectRecord row(String key) {
        return store.find(pg.dsl(), key).orElseThrow();
    }

    @Test
    void newKey_isReservedForTheFirstTime_atTheClocksTime(TestInfo info) {
        String key = newKey(info);

        Reservation r = reserve(key);

        assertThat(r).isEqualTo(new Reservation.Reserved(key, 1, T0, 0));
        assertThat(((Reservation.Reserved) r).firstTime()).isTrue();
        EffectRecord rec = row(key);
        assertThat(rec.state()).isEqualTo(EffectState.RESERVED);
        assertThat(rec.fingerprint()).isEqualTo(fp);
        assertThat(rec.reservations()).isEqualTo(1);
        assertThat(rec.reservedBy()).isEqualTo("worker-1");
        assertThat(rec.firstReservedAt()).isEqualTo(T0);
        assertThat(rec.reservedAt()).isEqualTo(T0);
        assertThat(rec.updatedAt()).isEqualTo(T0);
        assertThat(rec.completedAt()).isNull();
        assertThat(rec.resultRef()).isNull();
        assertThat(rec.descriptorJson()).isEqualTo("{\"topic\": \"email.order\"}");
    }

    @Test
    void withoutAClock_theDatabaseTransactionTimeIsRecorded(TestInfo info) {
        String key = newKey(info);
        IdempotencyStore dbTime = new IdempotencyStore(null);

        Instant[] txNow = new Instant[1];
        Reservation r = inTx(tx -> {
            txNow[0] = tx.select(DSL.field(DSL.raw("now()"), org.jooq.impl.SQLDataType.INSTANT)).fetchOne().value1();
            return dbTime.reserve(tx, key, fp, "worker-1", null);
        });

        assertThat(r).isEqualTo(new Reservation.Reserved(key, 1, txNow[0], 0));
        assertThat(row(key).reservedAt()).isEqualTo(txNow[0]);
    }

    @Test
    void afterSucceeded_theSameRequestIsAlreadySucceeded_withItsResultRef(TestInfo info) {
        String key = newKey(info);
        reserve(key);
        Instant sentAt = clock.advance(Duration.ofSeconds(2));
        EffectRecord done = inTx(tx -> store.recordSucceeded(tx, key, 1, "provider-msg-42"));

        assertThat(done.state()).isEqualTo(EffectState.SUCCEEDED);
        assertThat(done.completedAt()).isEqualTo(sentAt);
        clock.advance(Duration.ofMinutes(5));
        assertThat(reserve(key)).isEqualTo(new Reservation.AlreadySucceeded(key, "provider-msg-42", sentAt));
        assertThat(row(key)).isEqualTo(done);
    }

    @Test
    void reservedButNeverRecorded_isUnrecorded_withWhoAndWhen(TestInfo info) {
        String key = newKey(info);
        reserve(key);
        clock.advance(Duration.ofMinutes(1));

        Reservation again = inTx(tx -> store.reserve(tx, key, fp, "worker-2", null));

        assertThat(again).isEqualTo(new Reservation.Unrecorded(key, T0, "worker-1", 1, T0, 0));
        EffectRecord rec = row(key);
        assertThat(rec.reservations()).isEqualTo(1);
        assertThat(rec.reservedBy()).isEqualTo("worker-1");
    }

    @Test
    void sameKeyDifferentRequest_isFingerprintMismatch_andTheRowIsUnchanged(TestInfo info) {
        String key = newKey(info);
        reserve(key);
        EffectRecord before = row(key);
        Fingerprint other = Fingerprint.of("to@example.com", "Your order 102", "another body", "v1");

        clock.advance(Duration.ofSeconds(1));
        Reservation r = inTx(tx -> store.reserve(tx, key, other, "worker-2", "{\"x\":1}"));

        assertThat(r).isEqualTo(new Reservation.FingerprintMismatch(key, fp, other));
        assertThat(row(key)).isEqualTo(before);

        // Also after success: a mismatch is reported, not hidden behind AlreadySucceeded.
        inTx(tx -> store.recordSucceeded(tx, key, 1, "msg-1"));
        EffectRecord succeeded = row(key);
        assertThat(reservation(tx -> store.reserve(tx, key, other, "worker-2", null)))
                .isInstanceOf(Reservation.FingerprintMismatch.class);
        assertThat(row(key)).isEqualTo(succeeded);
    }

    @Test
    void recordSucceeded_runsInTheCallersTransaction_soARollbackLeavesItReserved(TestInfo info) {
        String key = newKey(info);
        reserve(key);

        assertThatThrownBy(() -> pg.dsl().transaction(c -> {
            EffectRecord inside = store.recordSucceeded(c.dsl(), key, 1, "msg-rolled-back");
            assertThat(inside.state()).isEqualTo(EffectState.SUCCEEDED);
            throw new IllegalStateException("completing the outbox message failed");
        })).isInstanceOf(IllegalStateException.class).hasMessage("completing the outbox message failed");

        EffectRecord rec = row(key);
        assertThat(rec.state()).isEqualTo(EffectState.RESERVED);
        assertThat(rec.resultRef()).isNull();
        assertThat(reserve(key)).isInstanceOf(Reservation.Unrecorded.class);
    }

    @Test
    void recordFailed_boundsTheErrorToTheColumnLimit_withoutSplittingACharacter(TestInfo info) {
        String key = newKey(info);
        reserve(key);
        // The cut falls right after a high surrogate; NUL cannot be stored in PostgreSQL text.
        int cut = IdempotencyStore.MAX_ERROR_LENGTH - " …[truncated]".length();
        String error = "\u0000" + "e".repeat(cut - 2) + "😀" + "x".repeat(3000);
        assertThat(Character.isHighSurrogate(error.charAt(cut - 1))).isTrue();

        Instant failedAt = clock.advance(Duration.ofSeconds(3));
        EffectRecord failed = inTx(tx -> store.recordFailed(tx, key, 1, error));

        assertThat(failed.state()).isEqualTo(EffectState.FAILED);
        assertThat(failed.completedAt()).isEqualTo(failedAt);
        String stored = row(key).lastError();
        assertThat(stored).hasSizeLessThanOrEqualTo(IdempotencyStore.MAX_ERROR_LENGTH)
                .startsWith("\uFFFDeee")
                .endsWith("e …[truncated]")
                .doesNotContain("\u0000");
        assertThat(stored.codePoints().filter(cp -> Character.getType(cp) == Character.SURROGATE).count()).isZero();

        String shortError = "550 5.1.1 mailbox unavailable\nsecond line";
        String other = newKey(info);
        reserve(other);
        assertThat(inTx(tx -> store.recordFailed(tx, other, 1, shortError)).lastError()).isEqualTo(shortError);
    }

    @Test
    void afterFailed_reserveGrantsTheNextReservation_andKeepsTheHistory(TestInfo info) {
        String key = newKey(info);
        reserve(key);
        clock.advance(Duration.ofSeconds(1));
        inTx(tx -> store.recordFailed(tx, key, 1, "503 try later"));

        Instant retryAt = clock.advance(Duration.ofMinutes(2));
        Reservation r = inTx(tx -> store.reserve(tx, key, fp, "worker-2", null));

        assertThat(r).isEqualTo(new Reservation.Reserved(key, 2, T0, 0));
        assertThat(((Reservation.Reserved) r).firstTime()).isFalse();
        EffectRecord rec = row(key);
        assertThat(rec.state()).isEqualTo(EffectState.RESERVED);
        assertThat(rec.reservations()).isEqualTo(2);
        assertThat(rec.reservedBy()).isEqualTo("worker-2");
        assertThat(rec.firstReservedAt()).isEqualTo(T0);
        assertThat(rec.reservedAt()).isEqualTo(retryAt);
        assertThat(rec.completedAt()).isNull();
        assertThat(rec.lastError()).as("the previous attempt's error stays visible").isEqualTo("503 try later");
        assertThat(rec.descriptorJson()).as("a null descriptor keeps the stored one").contains("email.order");
    }

    @Test
    void markAmbiguous_thenReserve_isAmbiguous_withTheReason(TestInfo info) {
        String key = newKey(info);
        reserve(key);
        Instant markedAt = clock.advance(Duration.ofSeconds(30));

        EffectRecord marked = inTx(tx -> store.markAmbiguous(tx, key, 1, "read timeout after the request was sent"));
        clock.advance(Duration.ofMinutes(1));
        Reservation r = inTx(tx -> store.reserve(tx, key, fp, "worker-2", null));

        assertThat(marked.state()).isEqualTo(EffectState.AMBIGUOUS);
        assertThat(marked.completedAt()).isNull();
        assertThat(r).isEqualTo(new Reservation.Ambiguous(key, "read timeout after the request was sent", markedAt,
                T0, "worker-1", 1, T0, 0));
        assertThat(row(key)).isEqualTo(marked);
    }

    @Test
    void confirmSucceeded_closesAnAmbiguousEffect_andRecordsWhoConfirmed(TestInfo info) {
        String key = newKey(info);
        reserve(key);
        inTx(tx -> store.markAmbiguous(tx, key, 1, "SMTP connection lost after DATA"));
        Instant confirmedAt = clock.advance(Duration.ofHours(1));

        EffectRecord confirmed = inTx(tx -> store.confirmSucceeded(tx, key, 1, null, "support:alice"));

        assertThat(confirmed.state()).isEqualTo(EffectState.SUCCEEDED);
        assertThat(confirmed.completedAt()).isEqualTo(confirmedAt);
        assertThat(confirmed.resultRef()).isNull();
        assertThat(confirmed.lastError()).isEqualTo("SMTP connection lost after DATA");
        assertThat(pg.dsl().select(DSL.field("descriptor->>'confirmedBy'", String.class),
                        DSL.field("descriptor->>'topic'", String.class))
                .from(IDEMPOTENCY_RECORD).where(IDEMPOTENCY_RECORD.EFFECT_KEY.eq(key)).fetchOne().intoArray())
                .containsExactly("support:alice", "email.order");
        assertThat(reserve(key)).isEqualTo(new Reservation.AlreadySucceeded(key, null, confirmedAt));

        String withRef = newKey(info);
        inTx(tx -> store.reserve(tx, withRef, fp, "worker-1", null));
        inTx(tx -> store.markAmbiguous(tx, withRef, 1, "timeout"));
        EffectRecord withRefConfirmed = inTx(tx -> store.confirmSucceeded(tx, withRef, 1, "msg-found-in-logs", "bob"));
        assertThat(withRefConfirmed.resultRef()).isEqualTo("msg-found-in-logs");
        assertThat(withRefConfirmed.descriptorJson()).isEqualTo("{\"confirmedBy\": \"bob\"}");
    }

    @Test
    void releaseOfAFirstReservation_forgetsTheKey_soTheNextAttemptIsNew(TestInfo info) {
        String key = newKey(info);
        reserve(key);

        assertThat(release(tx -> store.release(tx, key, 1))).isEqualTo(IdempotencyStore.Release.FORGOTTEN);

        assertThat(store.find(pg.dsl(), key)).isEmpty();
        Instant later = clock.advance(Duration.ofMinutes(1));
        assertThat(reserve(key)).isEqualTo(new Reservation.Reserved(key, 1, later, 0));
    }

    @Test
    void releaseOfALaterReservation_keepsTheHistoryAsFailed(TestInfo info) {
        String key = newKey(info);
        Reservation.Unrecorded seen = (Reservation.Unrecorded) inTx(tx -> {
            store.reserve(tx, key, fp, "worker-1", null);
            return store.reserve(tx, key, fp, "worker-1", null);
        });
        clock.advance(Duration.ofMinutes(10));
        inTx(tx -> store.reserveAgain(tx, seen, fp, "worker-2", null));
        Instant releasedAt = clock.advance(Duration.ofSeconds(1));

        assertThat(release(tx -> store.release(tx, key, 2))).isEqualTo(IdempotencyStore.Release.KEPT_AS_FAILED);

        EffectRecord rec = row(key);
        assertThat(rec.state()).isEqualTo(EffectState.FAILED);
        assertThat(rec.reservations()).isEqualTo(2);
        assertThat(rec.firstReservedAt()).isEqualTo(T0);
        assertThat(rec.completedAt()).isEqualTo(releasedAt);
        assertThat(rec.lastError()).isEqualTo(IdempotencyStore.RELEASED_NOTE);
        assertThat(reserve(key)).isEqualTo(new Reservation.Reserved(key, 3, T0, 1));
    }

    @Test
    void reserveAgain_repeatsAnUnrecordedEffect_onlyFromTheStateItWasDecidedOn(TestInfo info) {
        String key = newKey(info);
        reserve(key);
        Reservation.Unrecorded seen = (Reservation.Unrecorded) reserve(key);
        Instant repeatAt = clock.advance(Duration.ofMinutes(5));

        Reservation repeated = inTx(tx -> store.reserveAgain(tx, seen, fp, "worker-2", "{\"attempt\":2}"));

        assertThat(repeated).isEqualTo(new Reservation.Reserved(key, 2, T0, 1));
        EffectRecord rec = row(key);
        assertThat(rec.reservations()).isEqualTo(2);
        assertThat(rec.reservedBy()).isEqualTo("worker-2");
        assertThat(rec.reservedAt()).isEqualTo(repeatAt);
        assertThat(rec.descriptorJson()).isEqualTo("{\"attempt\": 2}");

        // The same (now stale) answer does not grant a second repeat: the caller sees the new state.
        assertThat(reservation(tx -> store.reserveAgain(tx, seen, fp, "worker-3", null)))
                .isEqualTo(new Reservation.Unrecorded(key, repeatAt, "worker-2", 2, T0, 1));
        // A repeat keeps the fingerprint check.
        Fingerprint other = Fingerprint.of("someone-else@example.com");
        Reservation.Unrecorded current = (Reservation.Unrecorded) reserve(key);
        assertThat(reservation(tx -> store.reserveAgain(tx, current, other, "worker-3", null)))
                .isEqualTo(new Reservation.FingerprintMismatch(key, fp, other));
        assertThat(row(key).reservations()).isEqualTo(2);
    }

    @Test
    void reserveAgain_repeatsAnAmbiguousEffect_butNotOnAnAnswerGivenBeforeItWasMarked(TestInfo info) {
        String key = newKey(info);
        reserve(key);
        Reservation.Unrecorded beforeMarking = (Reservation.Unrecorded) reserve(key);
        inTx(tx -> store.markAmbiguous(tx, key, 1, "timeout"));

        Reservation stale = inTx(tx -> store.reserveAgain(tx, beforeMarking, fp, "worker-2", null));
        assertThat(stale).isInstanceOf(Reservation.Ambiguous.class);
        assertThat(row(key).state()).isEqualTo(EffectState.AMBIGUOUS);

        Reservation repeated = inTx(tx -> store.reserveAgain(tx, (Reservation.Ambiguous) stale, fp, "worker-2", null));
        assertThat(repeated).isEqualTo(new Reservation.Reserved(key, 2, T0, 1));
        assertThat(row(key).state()).isEqualTo(EffectState.RESERVED);
    }

    @Test
    void reserveAgainOnASettledOrVanishedEffect_answersLikeReserve(TestInfo info) {
        String key = newKey(info);
        reserve(key);
        Reservation.Unrecorded seen = (Reservation.Unrecorded) reserve(key);
        inTx(tx -> store.recordSucceeded(tx, key, 1, "msg-7"));
        assertThat(reservation(tx -> store.reserveAgain(tx, seen, fp, "worker-2", null)))
                .isEqualTo(new Reservation.AlreadySucceeded(key, "msg-7", T0));

        String released = newKey(info);
        reserve(released);
        Reservation.Unrecorded seenReleased = (Reservation.Unrecorded) reserve(released);
        inTx(tx -> store.release(tx, released, 1));
        assertThat(reservation(tx -> store.reserveAgain(tx, seenReleased, fp, "worker-2", null)))
                .isEqualTo(new Reservation.Reserved(released, 1, T0, 0));
    }

    @Test
    void guardedTransitions_rejectWrongStates_andChangeNothing(TestInfo info) {
        String succeeded = newKey(info);
        reserve(succeeded);
        inTx(tx -> store.recordSucceeded(tx, succeeded, 1, "msg-1"));
        EffectRecord succeededRow = row(succeeded);

        expectRejected(() -> inTx(tx -> store.recordSucceeded(tx, succeeded, 1, "msg-2")),
                "recordSucceeded", EffectState.SUCCEEDED);
        expectRejected(() -> inTx(tx -> store.recordFailed(tx, succeeded, 1, "late failure")),
                "recordFailed", EffectState.SUCCEEDED);
        expectRejected(() -> inTx(tx -> store.markAmbiguous(tx, succeeded, 1, "late timeout")),
                "markAmbiguous", EffectState.SUCCEEDED);
        expectRejected(() -> inTx(tx -> store.confirmSucceeded(tx, succeeded, 1, null, "alice")),
                "confirmSucceeded", EffectState.SUCCEEDED);
        expectRejected(() -> inTx(tx -> store.release(tx, succeeded, 1)), "release", EffectState.SUCCEEDED);
        assertThat(row(succeeded)).isEqualTo(succeededRow);

        String reserved = newKey(info);
        reserve(reserved);
        expectRejected(() -> inTx(tx -> store.confirmSucceeded(tx, reserved, 1, "msg", "alice")),
                "confirmSucceeded", EffectState.RESERVED);

        String failed = newKey(info);
        reserve(failed);
        inTx(tx -> store.recordFailed(tx, failed, 1, "bounced"));
        expectRejected(() -> inTx(tx -> store.markAmbiguous(tx, failed, 1, "?")), "markAmbiguous", EffectState.FAILED);
        expectRejected(() -> inTx(tx -> store.recordSucceeded(tx, failed, 1, "msg")), "recordSucceeded", EffectState.FAILED);
        expectRejected(() -> inTx(tx -> store.release(tx, failed, 1)), "release", EffectState.FAILED);

        String ambiguous = newKey(info);
        reserve(ambiguous);
        inTx(tx -> store.markAmbiguous(tx, ambiguous, 1, "timeout"));
        expectRejected(() -> inTx(tx -> store.recordSucceeded(tx, ambiguous, 1, "msg")), "recordSucceeded",
                EffectState.AMBIGUOUS);
        expectRejected(() -> inTx(tx -> store.release(tx, ambiguous, 1)), "release", EffectState.AMBIGUOUS);
        assertThat(row(ambiguous).state()).isEqualTo(EffectState.AMBIGUOUS);

        String absent = newKey(info);
        assertThatThrownBy(() -> inTx(tx -> store.recordFailed(tx, absent, 1, "x")))
                .isInstanceOfSatisfying(TransitionRejectedException.class, e -> {
                    assertThat(e.effectKey()).isEqualTo(absent);
                    assertThat(e.current()).isEmpty();
                    assertThat(e).hasMessageContaining("no record");
                });
        assertThat(store.find(pg.dsl(), absent)).isEmpty();
    }

    @Test
    void aStaleHoldersRelease_afterItsClaimWasLost_leavesTheNewHoldersReservationAlone(TestInfo info) {
        String key = newKey(info);
        // Holder A reserves, then stalls; its claim is lost and holder B takes the message over.
        Reservation.Reserved a = (Reservation.Reserved) reservation(tx -> store.reserve(tx, key, fp, "worker-a", null));
        clock.advance(Duration.ofMinutes(5));
        Reservation.Unrecorded seenByB = (Reservation.Unrecorded) reservation(tx -> store.reserve(tx, key, fp, "worker-b", null));
        Reservation.Reserved b = (Reservation.Reserved) reservation(tx -> store.reserveAgain(tx, seenByB, fp, "worker-b", null));
        assertThat(b.reservationNumber()).isEqualTo(2);

        // A learns that its claim is lost and gives back what it holds: reservation 1, not B's.
        assertThatThrownBy(() -> inTx(tx -> store.release(tx, key, a.reservationNumber())))
                .isInstanceOfSatisfying(TransitionRejectedException.class, e -> {
                    assertThat(e.expectedReservation()).isEqualTo(1);
                    assertThat(e.supersededByAnotherReservation()).isTrue();
                    assertThat(e).hasMessageContaining("at reservation 2");
                });
        EffectRecord afterStaleRelease = row(key);
        assertThat(afterStaleRelease.state()).isEqualTo(EffectState.RESERVED);
        assertThat(afterStaleRelease.reservations()).isEqualTo(2);
        assertThat(afterStaleRelease.reservedBy()).isEqualTo("worker-b");

        // B sends and dies before recording: the next attempt must see an unknown outcome, not a
        // known failure it could simply send again.
        assertThat(reservation(tx -> store.reserve(tx, key, fp, "worker-c", null)))
                .isInstanceOf(Reservation.Unrecorded.class)
                .extracting(r -> ((Reservation.Unrecorded) r).reservations()).isEqualTo(2);
    }

    @Test
    void everyTransition_isFencedByTheReservationTheCallerHolds(TestInfo info) {
        String key = newKey(info);
        reserve(key);
        Reservation.Unrecorded seen = (Reservation.Unrecorded) reserve(key);
        inTx(tx -> store.reserveAgain(tx, seen, fp, "worker-2", null));
        EffectRecord held = row(key);

        for (Runnable stale : List.<Runnable>of(
                () -> inTx(tx -> store.recordSucceeded(tx, key, 1, "msg-stale")),
                () -> inTx(tx -> store.recordFailed(tx, key, 1, "421 stale")),
                () -> inTx(tx -> store.markAmbiguous(tx, key, 1, "stale timeout")),
                () -> inTx(tx -> store.release(tx, key, 1)),
                () -> inTx(tx -> store.release(tx, key, 3)))) {
            assertThatThrownBy(stale::run).isInstanceOf(TransitionRejectedException.class);
        }
        assertThat(row(key)).isEqualTo(held);

        inTx(tx -> store.markAmbiguous(tx, key, 2, "timeout after DATA"));
        EffectRecord ambiguous = row(key);
        assertThatThrownBy(() -> inTx(tx -> store.confirmSucceeded(tx, key, 1, null, "alice")))
                .isInstanceOf(TransitionRejectedException.class);
        assertThat(row(key)).isEqualTo(ambiguous);
        assertThat(inTx(tx -> store.confirmSucceeded(tx, key, 2, null, "alice")).state()).isEqualTo(EffectState.SUCCEEDED);
    }

    @Test
    void reserveAgain_countsRepeatsOfAnUnknownOutcome_butNotReservationsAfterAKnownFailure(TestInfo info) {
        String key = newKey(info);
        reserve(key);
        inTx(tx -> store.recordFailed(tx, key, 1, "421 try later"));
        Reservation.Reserved second = (Reservation.Reserved) reserve(key);
        assertThat(second.repeats()).as("a known failure is not a repeat").isZero();
        inTx(tx -> store.markAmbiguous(tx, key, 2, "timeout after DATA"));

        Reservation.Ambiguous unknown = (Reservation.Ambiguous) reserve(key);
        assertThat(unknown.repeats()).isZero();
        Reservation.Reserved repeat = (Reservation.Reserved) reservation(tx -> store.reserveAgain(tx, unknown, fp, "w", null));
        assertThat(repeat.reservationNumber()).isEqualTo(3);
        assertThat(repeat.repeats()).isEqualTo(1);
        inTx(tx -> store.markAmbiguous(tx, key, 3, "timeout after DATA again"));
        assertThat(((Reservation.Ambiguous) reserve(key)).repeats()).isEqualTo(1);
        assertThat(row(key).repeats()).isEqualTo(1);
    }

    @Test
    void aRejectedTransition_leavesTheCallersTransactionUsable(TestInfo info) {
        String key = newKey(info);
        reserve(key);
        inTx(tx -> store.recordSucceeded(tx, key, 1, "msg-1"));

        String other = newKey(info);
        Reservation r = inTx(tx -> {
            assertThatThrownBy(() -> store.recordSucceeded(tx, key, 1, "msg-2"))
                    .isInstanceOf(TransitionRejectedException.class);
            return store.reserve(tx, other, fp, "worker-1", null);
        });
        assertThat(r).isInstanceOf(Reservation.Reserved.class);
    }

    private static void expectRejected(Runnable call, String transition, EffectState found) {
        assertThatThrownBy(call::run).isInstanceOfSatisfying(TransitionRejectedException.class, e -> {
            assertThat(e.transition()).isEqualTo(transition);
            assertThat(e.current()).map(EffectRecord::state).contains(found);
        });
    }

    @Test
    void findUnfinished_listsReservedAndAmbiguousOlderThanTheCutoff_oldestFirst(TestInfo info) {
        MutableClock past = new MutableClock(Instant.parse("1999-01-01T00:00:00Z"));
        IdempotencyStore old = new IdempotencyStore(past);
        String reserved = newKey(info);
        String ambiguous = newKey(info);
        String succeeded = newKey(info);
        String failed = newKey(info);
        String recent = newKey(info);
        inTx(tx -> old.reserve(tx, ambiguous, fp, "w", null));
        past.advance(Duration.ofMinutes(1));
        for (String k : List.of(reserved, succeeded, failed)) {
            inTx(tx -> old.reserve(tx, k, fp, "w", null));
        }
        inTx(tx -> old.markAmbiguous(tx, ambiguous, 1, "timeout"));
        inTx(tx -> old.recordSucceeded(tx, succeeded, 1, "m"));
        inTx(tx -> old.recordFailed(tx, failed, 1, "e"));
        past.advance(Duration.ofHours(2));
        inTx(tx -> old.reserve(tx, recent, fp, "w", null));

        Instant cutoff = Instant.parse("1999-01-01T01:00:00Z");
        assertThat(store.findUnfinished(pg.dsl(), cutoff, 10)).extracting(EffectRecord::effectKey)
                .containsExactly(ambiguous, reserved);
        assertThat(store.findUnfinished(pg.dsl(), cutoff, 1)).extracting(EffectRecord::effectKey)
                .containsExactly(ambiguous);
        assertThatThrownBy(() -> store.findUnfinished(pg.dsl(), cutoff, 0))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("limit");
    }

    @Test
    void badArguments_areRejectedBeforeTouchingTheDatabase_namingTheArgument(TestInfo info) {
        DSLContext dsl = pg.dsl();
        String key = newKey(info);
        for (String bad : new String[]{null, "", "   ", "k".repeat(201), "email-order\n102", "tab\there"}) {
            assertThatThrownBy(() -> store.reserve(dsl, bad, fp, "w", null))
                    .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("effectKey");
            assertThatThrownBy(() -> store.recordSucceeded(dsl, bad, 1, "m"))
                    .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("effectKey");
            assertThatThrownBy(() -> store.find(dsl, bad))
                    .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("effectKey");
        }
        assertThat(store.find(dsl, "k".repeat(200))).isEmpty();
        assertThatThrownBy(() -> store.reserve(dsl, key, null, "w", null))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("fingerprint");
        assertThatThrownBy(() -> store.reserve(dsl, key, fp, " ", null))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("reservedBy");
        assertThatThrownBy(() -> store.reserve(dsl, key, fp, "w", "[1,2]"))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("descriptorJson");
        assertThatThrownBy(() -> store.reserveAgain(dsl, null, fp, "w", null))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("seen");
        assertThatThrownBy(() -> store.recordSucceeded(dsl, key, 1, null))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("resultRef");
        assertThatThrownBy(() -> store.recordSucceeded(dsl, key, 1, "r".repeat(1001)))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("resultRef");
        assertThatThrownBy(() -> store.recordFailed(dsl, key, 1, " "))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("error");
        assertThatThrownBy(() -> store.markAmbiguous(dsl, key, 1, null))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("reason");
        assertThatThrownBy(() -> store.confirmSucceeded(dsl, key, 1, null, ""))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("actor");
        assertThatThrownBy(() -> store.confirmSucceeded(dsl, key, 1, "ref\r\n", "alice"))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("resultRef");
        assertThat(store.find(dsl, key)).isEmpty();
    }

    @Test
    void aDescriptorThatIsNotJson_isAnIllegalArgument(TestInfo info) {
        String key = newKey(info);
        assertThatThrownBy(() -> inTx(tx -> store.reserve(tx, key, fp, "w", "{not json")))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("descriptorJson");
        assertThat(store.find(pg.dsl(), key)).isEmpty();
    }

    @Test
    void underRepeatableRead_aKeyCommittedAfterTheSnapshot_isAReservationConflict(TestInfo info) throws Exception {
        String key = newKey(info);
        try (Connection conn = pg.newConnection()) {
            conn.setAutoCommit(false);
            conn.setTransactionIsolation(Connection.TRANSACTION_REPEATABLE_READ);
            DSLContext rr = DSL.using(conn, SQLDialect.POSTGRES);
            rr.selectOne().fetch(); // takes the snapshot

            reserve(key); // committed by another transaction after the snapshot

            assertThatThrownBy(() -> store.reserve(rr, key, fp, "worker-rr", null))
                    .isInstanceOfSatisfying(ReservationConflictException.class, e -> {
                        assertThat(e.sqlState()).isEqualTo("40001");
                        assertThat(e.effectKey()).isEqualTo(key);
                    });
            conn.rollback();
        }
        assertThat(row(key).reservations()).isEqualTo(1);
    }

    @Test
    void uniqueViolations_areClassifiedBySqlStateAndConstraintName(TestInfo info) {
        String key = newKey(info);
        reserve(key);
        var r = IDEMPOTENCY_RECORD;
        // A plain INSERT (what ON CONFLICT spares the store) of an existing key.
        DataAccessException duplicate = org.junit.jupiter.api.Assertions.assertThrows(DataAccessException.class,
                () -> pg.dsl().insertInto(r, r.EFFECT_KEY, r.FINGERPRINT, r.STATE, r.FIRST_RESERVED_AT, r.RESERVED_AT,
                        r.DESCRIPTOR).values(key, fp.hex(), "reserved", T0, T0, JSONB.valueOf("{}")).execute());

        assertThat(SqlStates.sqlState(duplicate)).isEqualTo("23505");
        assertThat(SqlStates.isUniqueViolation(duplicate, IdempotencyStore.PKEY)).isTrue();
        assertThat(SqlStates.isUniqueViolation(duplicate, "outbox_effect_pkey")).isFalse();
        assertThat(SqlStates.isUniqueViolation(new IllegalStateException("23505"), IdempotencyStore.PKEY)).isFalse();
        assertThat(Optional.ofNullable(SqlStates.sqlState(new RuntimeException()))).isEmpty();
    }
}
