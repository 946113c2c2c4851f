package io.mailroom.outbox;

import io.mailroom.outbox.runtime.Dispatcher;
import io.mailroom.outbox.runtime.DispatcherConfig;
import io.mailroom.outbox.runtime.Outcome;
import io.mailroom.testing.PostgresExtension;
import org.jooq.Record;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.stream.Stream;

import static io.mailroom.db.jooq.Tables.OUTBOX_MESSAGE;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * Bad input at the outbox's own edges, email-agnostic: payloads PostgreSQL would refuse or silently
 * alter, an error text the database cannot store, and a topic no dispatcher handles. Each ends in a
 * clear error (refused at enqueue, naming the field, nothing written; or a stored, readable error)
 * or a visible wait, and good messages enqueued alongside keep flowing.
 */
class BadInputCatalogueTest {

    @RegisterExtension
    static final PostgresExtension pg = new PostgresExtension();

    private final OutboxEnqueuer enqueuer = new OutboxEnqueuer(null, false);

    @BeforeEach
    void clean() {
        pg.dsl().execute("TRUNCATE outbox_message, outbox_effect, outbox_effect_term, outbox_attempt");
    }

    static Stream<Arguments> unstorablePayloads() {
        return Stream.of(
                Arguments.of("not JSON at all", "{not json"),
                Arguments.of("a JSON \\u0000 escape (jsonb cannot hold NUL)", "{\"name\":\"Ann\\u0000\"}"),
                Arguments.of("a raw NUL character", "{\"name\":\"Ann\u0000\"}"),
                Arguments.of("an escaped lone surrogate", "{\"name\":\"Ann\\ud800\"}"),
                // The driver would encode it as '?' and store a different payload without a word.
                Arguments.of("a raw lone surrogate", "{\"name\":\"Ann\uD800\"}"),
                Arguments.of("a raw lone low surrogate", "{\"name\":\"\uDC00Ann\"}"));
    }

    @ParameterizedTest(name = "[{index}] {0}")
    @MethodSource("unstorablePayloads")
    void aPayloadPostgresqlCannotStoreAsGivenIsRefusedAtEnqueueAndTheOthersStillGoIn(String what, String payload) {
        assertThatThrownBy(() -> pg.dsl().transaction(cfg -> enqueuer.enqueueAll(cfg.dsl(), List.of(
                Fixtures.message("good-before"),
                NewMessage.of(Fixtures.TOPIC, "order", "1", "bad", payload)))))
                .as(what)
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageStartingWith("payloadJson ");
        assertThat(pg.dsl().fetchCount(OUTBOX_MESSAGE)).as("the whole transaction rolled back").isZero();

        Fixtures.enqueueOne(pg.dsl(), null, Fixtures.message("good-after"));
        Dispatcher d = new Dispatcher(pg.dataSource(), DispatcherConfig.builder().workerId("bad-input").build(),
                Map.of(Fixtures.TOPIC, (m, ctx) -> Outcome.done()));
        assertThat(d.runOnce()).isEqualTo(1);
        assertThat(Fixtures.countByStatus(pg.dsl(), "done")).isEqualTo(1);
    }

    @Test
    void validUnicodeThatIsNotAsciiIsStoredUnchanged() {
        // (the BEL goes in as a JSON escape: raw control characters are not valid JSON)
        String payload = "{\"name\":\"Zoë 😀 \u0627\u0644\u0639\u0631\u0628\u064A\u0629 \\u0007\"}";
        EnqueuedMessage m = Fixtures.enqueueOne(pg.dsl(), null, NewMessage.of(Fixtures.TOPIC, "order", "1", "unicode", payload));
        String stored = Fixtures.row(pg.dsl(), m.id()).get(OUTBOX_MESSAGE.PAYLOAD).data();
        assertThat(stored).contains("Zoë 😀 \u0627\u0644\u0639\u0631\u0628\u064A\u0629").contains("\\u0007");
    }

    @Test
    void aHandlerErrorTextWithNulAndLoneSurrogatesIsStoredReadablyAndTheMessageIsRetried() {
        Fixtures.enqueueOne(pg.dsl(), null, Fixtures.message("poison"));
        Fixtures.enqueueOne(pg.dsl(), null, Fixtures.message("good"));
        Dispatcher d = new Dispatcher(pg.dataSource(), DispatcherConfig.builder().workerId("bad-input")
                .lease(Duration.ofMinutes(5)).build(), Map.of(Fixtures.TOPIC, (m, ctx) -> {
                    if (m.idempotencyKey().equals("poison")) {
                        // e.g. a parser quoting the byte it choked on; PostgreSQL text cannot hold U+0000
                        throw new IllegalStateException("unexpected byte \u0000 after \uD800 in the provider's answer");
                    }
                    return Outcome.done();
                }));

        assertThat(d.runOnce()).isEqualTo(2);

        Record poison = pg.dsl().selectFrom(OUTBOX_MESSAGE).where(OUTBOX_MESSAGE.IDEMPOTENCY_KEY.eq("poison")).fetchSingle();
        assertThat(poison.get(OUTBOX_MESSAGE.STATUS)).as("retried, not left running until its lease expires").isEqualTo("pending");
        assertThat(poison.get(OUTBOX_MESSAGE.LAST_ERROR)).contains("unexpected byte").contains("IllegalStateException")
                .doesNotContain("\u0000");
        assertThat(pg.dsl().fetchCount(pg.dsl().selectFrom("outbox_attempt").where("idempotency_key = 'poison' AND outcome = 'retry'")))
                .isEqualTo(1);
        assertThat(pg.dsl().selectFrom(OUTBOX_MESSAGE).where(OUTBOX_MESSAGE.IDEMPOTENCY_KEY.eq("good")).fetchSingle()
                .get(OUTBOX_MESSAGE.STATUS)).isEqualTo("done");
    }

    @Test
    void anOutcomeDetailWithAnEscapedNulIsStoredAndTheMessageIsDone() {
        Fixtures.enqueueOne(pg.dsl(), null, Fixtures.message("detail"));
        // A JSON library escapes U+0000 from a provider's answer as \u0000, which jsonb refuses.
        Dispatcher d = new Dispatcher(pg.dataSource(), DispatcherConfig.builder().workerId("bad-input")
                .lease(Duration.ofMinutes(5)).build(), Map.of(Fixtures.TOPIC, (m, ctx) ->
                new Outcome.Done("{\"reply\":\"queued\\u0000 as 42\",\"path\":\"C:\\\\u0000dir\"}", null)));

        assertThat(d.runOnce()).isEqualTo(1);

        assertThat(Fixtures.countByStatus(pg.dsl(), "done")).as("done, not left running until its lease expires").isEqualTo(1);
        Record attempt = pg.dsl().fetchSingle("SELECT detail->>'reply' AS reply, detail->>'path' AS path FROM outbox_attempt");
        assertThat(attempt.get("reply", String.class)).isEqualTo("queued\uFFFD as 42");
        assertThat(attempt.get("path", String.class)).as("an escaped backslash is not an escape").isEqualTo("C:\\u0000dir");
    }

    @Test
    void aTopicWithoutAHandlerWaitsVisiblyAndTheOtherTopicsKeepFlowing() {
        // There is no setting that fails unknown topics: a message for a topic no running dispatcher
        // handles stays pending, unclaimed and unattempted, until a dispatcher with a handler for it
        // starts (a rolling deploy that adds a topic must not lose its first messages). It is
        // countable by topic, which is what an operator's alert on the oldest pending row sees.
        for (int i = 1; i <= 3; i++) {
            Fixtures.enqueueOne(pg.dsl(), null, NewMessage.of("email.not_yet_handled", "order", "u" + i, "unknown-" + i, "{}"));
        }
        Fixtures.enqueue(pg.dsl(), null, "known", 20);
        Map<String, Integer> handled = new ConcurrentHashMap<>();
        Dispatcher d = new Dispatcher(pg.dataSource(), DispatcherConfig.builder().workerId("bad-input").build(),
                Map.of(Fixtures.TOPIC, (m, ctx) -> {
                    handled.merge(m.topic(), 1, Integer::sum);
                    return Outcome.done();
                }));

        while (d.runOnce() > 0) {
            // drain what this dispatcher handles
        }

        assertThat(handled).isEqualTo(Map.of(Fixtures.TOPIC, 20));
        assertThat(Fixtures.countByStatus(pg.dsl(), "done")).isEqualTo(20);
        var waiting = pg.dsl().fetch("""
                SELECT topic, count(*) AS n, max(attempts) AS attempts FROM outbox_message
                WHERE status = 'pending' GROUP BY topic""");
        assertThat(waiting).hasSize(1);
        assertThat(waiting.getFirst().get("topic", String.class)).isEqualTo("email.not_yet_handled");
        assertThat(waiting.getFirst().get("n", Integer.class)).isEqualTo(3);
        assertThat(waiting.getFirst().get("attempts", Integer.class)).as("never claimed").isZero();

        // A dispatcher that knows the topic picks them up.
        Dispatcher later = new Dispatcher(pg.dataSource(), DispatcherConfig.builder().workerId("later").build(),
                Map.of("email.not_yet_handled", (m, ctx) -> Outcome.done()));
        assertThat(later.runOnce()).isEqualTo(3);
        assertThat(Fixtures.countByStatus(pg.dsl(), "pending")).isZero();
    }
}
