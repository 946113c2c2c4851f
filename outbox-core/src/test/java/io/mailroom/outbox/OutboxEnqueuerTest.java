package io.mailroom.outbox;

import io.mailroom.db.sql.SqlStates;
import io.mailroom.testing.PostgresExtension;
import org.jooq.DSLContext;
import org.jooq.JSONB;
import org.jooq.impl.DSL;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInfo;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;
import org.postgresql.PGConnection;
import org.postgresql.PGNotification;
import org.postgresql.util.PSQLException;

import java.sql.Connection;
import java.sql.SQLException;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Supplier;
import java.util.stream.Stream;

import static io.mailroom.db.jooq.Tables.OUTBOX_EFFECT;
import static io.mailroom.db.jooq.Tables.OUTBOX_MESSAGE;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * {@link OutboxEnqueuer} against a real, migrated PostgreSQL: the rows it writes, that they share
 * the caller's transaction (commit keeps them, rollback removes them), the duplicate-key contract
 * (SQLSTATE 23505 on {@code outbox_effect_pkey}), argument checks, and the commit-only wake-up.
 *
 * <p>All tests share one database; each uses its own idempotency keys (derived from the test name),
 * and the "nothing written" checks compare table counts before and after.
 */
class OutboxEnqueuerTest {

    @RegisterExtension
    static final PostgresExtension pg = new PostgresExtension();

    private static final String TOPIC = "test.enqueue";

    private final OutboxEnqueuer enqueuer = new OutboxEnqueuer();

    @Test
    void committedEnqueueWritesOnePendingMessageAndOneEffect(TestInfo test) {
        String key = key(test, "1");
        // key order and spacing differ from what jsonb stores: equality must be semantic
        String payload = "{\"b\": [1, 2, {\"c\": null}], \"a\": \"x\u00e9\\n\"}";
        NewMessage msg = NewMessage.of(TOPIC, "order", "42", key, payload);

        EnqueuedMessage enqueued = pg.dsl().transactionResult(cfg -> enqueuer.enqueue(cfg.dsl(), msg));

        var m = OUTBOX_MESSAGE;
        var rows = pg.dsl().selectFrom(m).where(m.IDEMPOTENCY_KEY.eq(key)).fetch();
        assertThat(rows).hasSize(1);
        var row = rows.getFirst();
        assertThat(row.getId()).isEqualTo(enqueued.id());
        assertThat(row.getCreatedAt()).isEqualTo(enqueued.createdAt());
        assertThat(enqueued.idempotencyKey()).isEqualTo(key);
        assertThat(row.getStatus()).isEqualTo("pending");
        assertThat(row.getAttempts()).isZero();
        assertThat(row.getClaimVersion()).isZero();
        assertThat(row.getMaxAttempts()).isEqualTo(NewMessage.DEFAULT_MAX_ATTEMPTS);
        assertThat(row.getTopic()).isEqualTo(TOPIC);
        assertThat(row.getAggregateType()).isEqualTo("order");
        assertThat(row.getAggregateId()).isEqualTo("42");
        assertThat(row.getOrderingKey()).isNull();
        assertThat(row.getLeaseUntil()).isNull();
        assertThat(row.getClaimedBy()).isNull();
        assertThat(pg.dsl().fetchExists(m, m.IDEMPOTENCY_KEY.eq(key).and(m.PAYLOAD.eq(JSONB.valueOf(payload)))))
                .as("stored payload equals the given document as jsonb").isTrue();
        assertThat(pg.dsl().fetchExists(m, m.IDEMPOTENCY_KEY.eq(key)
                .and(m.PAYLOAD.eq(JSONB.valueOf("{\"a\": \"other\", \"b\": [1, 2, {\"c\": null}]}")))))
                .as("the jsonb comparison can fail").isFalse();

        var e = OUTBOX_EFFECT;
        var effects = pg.dsl().selectFrom(e).where(e.IDEMPOTENCY_KEY.eq(key)).fetch();
        assertThat(effects).hasSize(1);
        var effect = effects.getFirst();
        assertThat(effect.getMessageId()).isEqualTo(enqueued.id());
        assertThat(effect.getMessageCreatedAt()).isEqualTo(enqueued.createdAt());
        assertThat(effect.getStatus()).isEqualTo("pending");
        assertThat(effect.getAttempts()).isZero();
        assertThat(effect.getMaxAttempts()).isEqualTo(NewMessage.DEFAULT_MAX_ATTEMPTS);
        assertThat(effect.getTopic()).isEqualTo(TOPIC);
        assertThat(effect.getAggregateType()).isEqualTo("order");
        assertThat(effect.getAggregateId()).isEqualTo("42");
        assertThat(effect.getResendOf()).isNull();
    }

    @Test
    void rollbackAfterEnqueueLeavesNothing(TestInfo test) {
        String key = key(test, "1");
        Counts before = counts();

        assertThatThrownBy(() -> pg.dsl().transaction(cfg -> {
            enqueuer.enqueue(cfg.dsl(), NewMessage.of(TOPIC, "order", "7", key, "{}"));
            // the row is visible inside the caller's transaction before it rolls back
            assertThat(cfg.dsl().fetchCount(OUTBOX_MESSAGE, OUTBOX_MESSAGE.IDEMPOTENCY_KEY.eq(key))).isEqualTo(1);
            throw new BusinessFailure();
        })).isInstanceOf(BusinessFailure.class);

        assertThat(pg.dsl().fetchCount(OUTBOX_MESSAGE, OUTBOX_MESSAGE.IDEMPOTENCY_KEY.eq(key))).isZero();
        assertThat(pg.dsl().fetchCount(OUTBOX_EFFECT, OUTBOX_EFFECT.IDEMPOTENCY_KEY.eq(key))).isZero();
        assertThat(counts()).isEqualTo(before);
    }

    @Test
    void secondEnqueueOfTheSameKeyIsRejectedAsUniqueViolationAndWritesNothing(TestInfo test) {
        String key = key(test, "1");
        pg.dsl().transaction(cfg -> enqueuer.enqueue(cfg.dsl(), NewMessage.of(TOPIC, "order", "1", key, "{\"n\":1}")));
        Counts before = counts();

        assertThatThrownBy(() -> pg.dsl().transaction(cfg ->
                enqueuer.enqueue(cfg.dsl(), NewMessage.of("other.topic", "order", "2", key, "{\"n\":2}"))))
                .isInstanceOfSatisfying(DuplicateIdempotencyKeyException.class, e -> {
                    assertThat(e.idempotencyKey()).isEqualTo(key);
                    assertThat(e.getCause()).isNotNull();
                    assertThat(SqlStates.sqlState(e.getCause())).isEqualTo(SqlStates.UNIQUE_VIOLATION);
                    assertThat(SqlStates.sqlException(e.getCause())).get()
                            .isInstanceOfSatisfying(PSQLException.class, p -> {
                                assertThat(p.getServerErrorMessage()).isNotNull();
                                assertThat(p.getServerErrorMessage().getConstraint()).isEqualTo("outbox_effect_pkey");
                            });
                    assertThat(SqlStates.isUniqueViolation(e, "outbox_effect_pkey")).isTrue();
                });

        // the second transaction's outbox_message insert went with its rollback
        assertThat(counts()).isEqualTo(before);
        var m = OUTBOX_MESSAGE;
        assertThat(pg.dsl().fetchExists(m, m.IDEMPOTENCY_KEY.eq(key).and(m.PAYLOAD.eq(JSONB.valueOf("{\"n\":1}")))))
                .as("the first message is untouched").isTrue();
    }

    @Test
    void duplicateKeyInsideOneBatchIsRejectedAndWritesNothing(TestInfo test) {
        String key = key(test, "1");
        Counts before = counts();

        assertThatThrownBy(() -> pg.dsl().transaction(cfg -> enqueuer.enqueueAll(cfg.dsl(), List.of(
                NewMessage.of(TOPIC, "order", "1", key(test, "0"), "{}"),
                NewMessage.of(TOPIC, "order", "1", key, "{}"),
                NewMessage.of(TOPIC, "order", "1", key, "{}")))))
                .isInstanceOfSatisfying(DuplicateIdempotencyKeyException.class, e -> {
                    assertThat(e.idempotencyKey()).isEqualTo(key);
                    assertThat(SqlStates.sqlState(e)).isEqualTo(SqlStates.UNIQUE_VIOLATION);
                    assertThat(SqlStates.constraint(e)).contains("outbox_effect_pkey");
                });

        assertThat(counts()).isEqualTo(before);
    }

    @Test
    void enqueueAllWritesEveryMessageInOrder(TestInfo test) {
        Instant later = Instant.now().plus(1, ChronoUnit.HOURS).truncatedTo(ChronoUnit.MICROS);
        List<NewMessage> messages = List.of(
                NewMessage.of(TOPIC, "order", "1", key(test, "a"), "{\"i\":0}"),
                NewMessage.of("other.topic", "order", "1", key(test, "b"), "{\"i\":1}").withOrderingKey("order-1"),
                NewMessage.of(TOPIC, "customer", "c-9", key(test, "c"), "[1,2,3]")
                        .withAvailableAt(later).withMaxAttempts(3));
        Counts before = counts();

        List<EnqueuedMessage> enqueued = pg.dsl().transactionResult(cfg -> enqueuer.enqueueAll(cfg.dsl(), messages));

        assertThat(enqueued).extracting(EnqueuedMessage::idempotencyKey)
                .containsExactly(key(test, "a"), key(test, "b"), key(test, "c"));
        assertThat(enqueued).extracting(EnqueuedMessage::id).doesNotHaveDuplicates();
        assertThat(counts()).isEqualTo(new Counts(before.messages() + 3, before.effects() + 3));

        var m = OUTBOX_MESSAGE;
        for (int i = 0; i < messages.size(); i++) {
            NewMessage msg = messages.get(i);
            var row = pg.dsl().selectFrom(m).where(m.IDEMPOTENCY_KEY.eq(msg.idempotencyKey())).fetchSingle();
            assertThat(row.getId()).isEqualTo(enqueued.get(i).id());
            assertThat(row.getTopic()).isEqualTo(msg.topic());
            assertThat(row.getAggregateType()).isEqualTo(msg.aggregateType());
            assertThat(row.getAggregateId()).isEqualTo(msg.aggregateId());
            assertThat(row.getOrderingKey()).isEqualTo(msg.orderingKey());
            assertThat(row.getMaxAttempts()).isEqualTo(msg.maxAttempts());
            assertThat(row.getStatus()).isEqualTo("pending");
            assertThat(pg.dsl().fetchExists(m, m.ID.eq(row.getId()).and(m.PAYLOAD.eq(JSONB.valueOf(msg.payloadJson())))))
                    .isTrue();
            var effect = pg.dsl().selectFrom(OUTBOX_EFFECT)
                    .where(OUTBOX_EFFECT.IDEMPOTENCY_KEY.eq(msg.idempotencyKey())).fetchSingle();
            assertThat(effect.getMessageId()).isEqualTo(row.getId());
            assertThat(effect.getMaxAttempts()).isEqualTo(msg.maxAttempts());
        }
        var delayed = pg.dsl().selectFrom(m).where(m.IDEMPOTENCY_KEY.eq(key(test, "c"))).fetchSingle();
        assertThat(delayed.getAvailableAt()).isEqualTo(later);
        var immediate = pg.dsl().selectFrom(m).where(m.IDEMPOTENCY_KEY.eq(key(test, "a"))).fetchSingle();
        assertThat(immediate.getAvailableAt()).isEqualTo(immediate.getCreatedAt());
    }

    @Test
    void enqueueAllOfNothingWritesNothing() {
        Counts before = counts();
        List<EnqueuedMessage> none = pg.dsl().transactionResult(cfg -> enqueuer.enqueueAll(cfg.dsl(), List.of()));
        assertThat(none).isEmpty();
        assertThat(counts()).isEqualTo(before);
    }

    static Stream<Arguments> invalidMessages() {
        String longText = "k".repeat(NewMessage.MAX_KEY_LENGTH + 1);
        return Stream.of(
                Arguments.of("topic", (Supplier<NewMessage>) () -> NewMessage.of(null, "order", "1", "k", "{}")),
                Arguments.of("topic", (Supplier<NewMessage>) () -> NewMessage.of(" ", "order", "1", "k", "{}")),
                Arguments.of("topic", (Supplier<NewMessage>) () -> NewMessage.of(longText, "order", "1", "k", "{}")),
                Arguments.of("aggregateType", (Supplier<NewMessage>) () -> NewMessage.of(TOPIC, "", "1", "k", "{}")),
                Arguments.of("aggregateId", (Supplier<NewMessage>) () -> NewMessage.of(TOPIC, "order", null, "k", "{}")),
                Arguments.of("idempotencyKey", (Supplier<NewMessage>) () -> NewMessage.of(TOPIC, "order", "1", null, "{}")),
                Arguments.of("idempotencyKey", (Supplier<NewMessage>) () -> NewMessage.of(TOPIC, "order", "1", "a\r\nb", "{}")),
                Arguments.of("idempotencyKey", (Supplier<NewMessage>) () -> NewMessage.of(TOPIC, "order", "1", longText, "{}")),
                Arguments.of("orderingKey", (Supplier<NewMessage>) () -> NewMessage.of(TOPIC, "order", "1", "k", "{}").withOrderingKey(" ")),
                Arguments.of("payloadJson", (Supplier<NewMessage>) () -> NewMessage.of(TOPIC, "order", "1", "k", null)),
                Arguments.of("payloadJson", (Supplier<NewMessage>) () -> NewMessage.of(TOPIC, "order", "1", "k", "  ")),
                Arguments.of("maxAttempts", (Supplier<NewMessage>) () -> NewMessage.of(TOPIC, "order", "1", "k", "{}").withMaxAttempts(0)),
                Arguments.of("maxAttempts", (Supplier<NewMessage>) () -> NewMessage.of(TOPIC, "order", "1", "k", "{}").withMaxAttempts(1001)));
    }

    @ParameterizedTest(name = "[{index}] {0}")
    @MethodSource("invalidMessages")
    void invalidArgumentsAreRejectedNamingTheField(String field, Supplier<NewMessage> invalid) {
        assertThatThrownBy(invalid::get)
                .isInstanceOfAny(IllegalArgumentException.class, NullPointerException.class)
                .hasMessageStartingWith(field + " ");
    }

    @Test
    void payloadThatIsNotJsonIsRejectedAndWritesNothing(TestInfo test) {
        Counts before = counts();

        assertThatThrownBy(() -> pg.dsl().transaction(cfg ->
                enqueuer.enqueue(cfg.dsl(), NewMessage.of(TOPIC, "order", "1", key(test, "1"), "{not json"))))
                .isInstanceOfSatisfying(IllegalArgumentException.class, e -> {
                    assertThat(e).hasMessageStartingWith("payloadJson ");
                    assertThat(SqlStates.sqlState(e.getCause())).isEqualTo(SqlStates.INVALID_TEXT_REPRESENTATION);
                });

        assertThat(counts()).isEqualTo(before);
    }

    @Test
    void notificationIsDeliveredOnCommitWithTheTopic(TestInfo test) throws SQLException {
        try (Connection listener = Fixtures.listen(pg)) {
            pg.dsl().transaction(cfg -> enqueuer.enqueueAll(cfg.dsl(), List.of(
                    NewMessage.of(TOPIC, "order", "1", key(test, "1"), "{}"),
                    NewMessage.of(TOPIC, "order", "2", key(test, "2"), "{}"),
                    NewMessage.of("other.topic", "order", "3", key(test, "3"), "{}"))));
            notifyMarker();

            // one notification per topic (PostgreSQL folds identical ones within a transaction)
            assertThat(notificationsUpToMarker(listener)).containsExactly(TOPIC, "other.topic");
        }
    }

    @Test
    void noNotificationOnRollback(TestInfo test) throws SQLException {
        try (Connection listener = Fixtures.listen(pg)) {
            assertThatThrownBy(() -> pg.dsl().transaction(cfg -> {
                enqueuer.enqueue(cfg.dsl(), NewMessage.of(TOPIC, "order", "1", key(test, "1"), "{}"));
                throw new BusinessFailure();
            })).isInstanceOf(BusinessFailure.class);
            // Notifications arrive in commit order: had the rolled-back transaction notified, its
            // notification would arrive before the marker committed after it. No sleep needed.
            notifyMarker();

            assertThat(notificationsUpToMarker(listener)).isEmpty();
        }
    }

    @Test
    void noNotificationWhenDisabled(TestInfo test) throws SQLException {
        OutboxEnqueuer quiet = new OutboxEnqueuer(null, false);
        try (Connection listener = Fixtures.listen(pg)) {
            pg.dsl().transaction(cfg -> quiet.enqueue(cfg.dsl(), NewMessage.of(TOPIC, "order", "1", key(test, "1"), "{}")));
            notifyMarker();

            assertThat(notificationsUpToMarker(listener)).isEmpty();
            assertThat(pg.dsl().fetchCount(OUTBOX_MESSAGE, OUTBOX_MESSAGE.IDEMPOTENCY_KEY.eq(key(test, "1")))).isEqualTo(1);
        }
    }

    // --- helpers ---

    private static final String MARKER = "test-marker";
    private static final int NOTIFY_TIMEOUT_MILLIS = 10_000;

    private static void notifyMarker() {
        pg.dsl().transaction(cfg -> cfg.dsl()
                .select(DSL.function("pg_notify", Object.class, DSL.val(OutboxEnqueuer.CHANNEL), DSL.val(MARKER)))
                .fetch());
    }

    /** Payloads received on the channel before the marker; fails if the marker does not arrive in time. */
    private static List<String> notificationsUpToMarker(Connection listener) throws SQLException {
        PGConnection pgc = listener.unwrap(PGConnection.class);
        List<String> payloads = new ArrayList<>();
        long deadline = System.nanoTime() + NOTIFY_TIMEOUT_MILLIS * 1_000_000L;
        while (true) {
            long left = (deadline - System.nanoTime()) / 1_000_000L;
            if (left <= 0) {
                throw new AssertionError("marker notification not received within " + NOTIFY_TIMEOUT_MILLIS
                        + " ms; received " + payloads);
            }
            PGNotification[] batch = pgc.getNotifications((int) left);
            if (batch == null) {
                continue;
            }
            for (PGNotification n : batch) {
                assertThat(n.getName()).isEqualTo(OutboxEnqueuer.CHANNEL);
                if (MARKER.equals(n.getParameter())) {
                    return payloads;
                }
                payloads.add(n.getParameter());
            }
        }
    }

    private static String key(TestInfo test, String suffix) {
        return "test-" + test.getTestMethod().orElseThrow().getName() + "-" + suffix;
    }

    private record Counts(int messages, int effects) {
    }

    private static Counts counts() {
        DSLContext dsl = pg.dsl();
        return new Counts(dsl.fetchCount(OUTBOX_MESSAGE), dsl.fetchCount(OUTBOX_EFFECT));
    }

    /** Stands for any business error that makes the caller roll back. */
    private static final class BusinessFailure extends RuntimeException {
        BusinessFailure() {
            super("business failure after enqueue");
        }
    }
}
