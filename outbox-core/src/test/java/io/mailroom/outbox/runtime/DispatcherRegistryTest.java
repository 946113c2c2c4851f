package io.mailroom.outbox.runtime;

import io.mailroom.outbox.NewMessage;
import io.mailroom.outbox.OutboxEnqueuer;
import io.mailroom.outbox.admin.Dispatchers;
import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.read.ListAppender;
import io.mailroom.testing.PostgresExtension;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.slf4j.LoggerFactory;

import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

import static io.mailroom.db.jooq.Tables.OUTBOX_DISPATCHER;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/** Running dispatchers say what they serve; emails on a topic none serves are found and logged. */
class DispatcherRegistryTest {

    @RegisterExtension
    static final PostgresExtension pg = new PostgresExtension();

    private final ListAppender<ILoggingEvent> logs = new ListAppender<>();
    private final Logger logger = (Logger) LoggerFactory.getLogger(Registration.class);

    @BeforeEach
    void clean() {
        pg.dsl().execute("TRUNCATE outbox_message, outbox_effect, outbox_effect_term, outbox_attempt, outbox_dispatcher");
        logs.start();
        logger.addAppender(logs);
    }

    @AfterEach
    void release() {
        logger.detachAppender(logs);
    }

    private static NewMessage dueSince(String topic, String key, Duration ago) {
        return NewMessage.of(topic, "order", key, key, "{}").withAvailableAt(Instant.now().minus(ago));
    }

    @Test
    void aRunningDispatcherRegistersWhatItServes_logsTheTopicNobodyServes_andLeavesWhenItStops() {
        new OutboxEnqueuer().enqueueAll(pg.dsl(), java.util.List.of(
                dueSince("email.forgotten", "f-1", Duration.ofMinutes(5)),
                dueSince("email.forgotten", "f-2", Duration.ofMinutes(2)),
                dueSince("email.forgotten", "f-new", Duration.ofSeconds(1)))); // just enqueued: not yet "unserved"
        MessageHandler never = (m, ctx) -> Outcome.done();
        Dispatcher d = new Dispatcher(pg.dataSource(), DispatcherConfig.builder().workerId("w-registry").build(),
                Map.of("email.served", never));
        d.start();
        try {
            await().atMost(Duration.ofSeconds(20)).until(() -> logs.list.stream()
                    .anyMatch(e -> e.getLevel() == Level.WARN && e.getFormattedMessage().contains("email.forgotten")));
            var row = pg.dsl().fetchSingle(OUTBOX_DISPATCHER, OUTBOX_DISPATCHER.WORKER_ID.eq("w-registry"));
            assertThat(row.getIncarnation()).isEqualTo(d.incarnation());
            assertThat(row.getTopics()).containsExactly("email.served");
            assertThat(row.getHost()).isNotBlank();
            assertThat(row.getExpiresAt()).isAfter(row.getHeartbeatAt());
            assertThat(logs.list).extracting(ILoggingEvent::getFormattedMessage).filteredOn(m -> m.contains("email.forgotten"))
                    .containsExactly("2 emails on topic email.forgotten have waited more than 1m and no running dispatcher"
                            + " serves it (this one, w-registry, serves [email.served]): start one that does (its template in"
                            + " MAILROOM_TEMPLATES_DIR, or a line in MAILROOM_TOPICS), or cancel them");
            assertThat(DispatcherRegistry.unservedTopics(pg.dsl())).isEqualTo(Map.of("email.forgotten", 2L));
        } finally {
            d.stop();
        }
        assertThat(pg.dsl().fetchCount(OUTBOX_DISPATCHER)).as("a graceful stop removes its row").isZero();
    }

    @Test
    void aTopicServedByAnotherLiveDispatcherIsNotUnserved_oneWhoseDispatcherExpiredIs() {
        new OutboxEnqueuer(Clock.systemUTC(), false).enqueueAll(pg.dsl(), java.util.List.of(
                dueSince("email.a", "a-1", Duration.ofMinutes(5)), dueSince("email.b", "b-1", Duration.ofMinutes(5))));
        DispatcherRegistry.beat(pg.dsl(), "alive", "i-1", "h", "v", Set.of("email.a"), Duration.ofMinutes(1));
        DispatcherRegistry.beat(pg.dsl(), "dead", "i-2", "h", "v", Set.of("email.b"), Duration.ofMinutes(1));
        assertThat(DispatcherRegistry.unservedTopics(pg.dsl())).isEmpty();

        pg.dsl().execute("UPDATE outbox_dispatcher SET expires_at = now() - interval '1 second' WHERE worker_id = 'dead'");
        assertThat(DispatcherRegistry.unservedTopics(pg.dsl())).isEqualTo(Map.of("email.b", 1L));

        DispatcherRegistry.beat(pg.dsl(), "dead", "i-3", "h", "v", Set.of("email.b"), Duration.ofMinutes(1));
        assertThat(DispatcherRegistry.unservedTopics(pg.dsl())).as("restarted under the same id: its row replaced").isEmpty();
        assertThat(pg.dsl().fetchCount(OUTBOX_DISPATCHER)).isEqualTo(2);
    }

    @Test
    void aRunningDispatchersRowCarriesItsClaimsInFlightAndTheDetailsItsProcessReports() {
        new OutboxEnqueuer().enqueueAll(pg.dsl(), List.of(dueSince("email.slow", "s-1", Duration.ZERO),
                dueSince("email.slow", "s-2", Duration.ZERO)));
        CountDownLatch release = new CountDownLatch(1);
        MessageHandler slow = (m, ctx) -> {
            release.await(30, TimeUnit.SECONDS);
            return Outcome.done();
        };
        String[] breaker = {"closed"};
        Dispatcher d = new Dispatcher(pg.dataSource(), DispatcherConfig.builder().workerId("w-busy").lease(Duration.ofSeconds(3))
                .heartbeatInterval(Duration.ofMillis(200)).pollInterval(Duration.ofMillis(100)).build(), Map.of("email.slow", slow))
                .registrationDetails(() -> "{\"transports\": [{\"name\": \"http\", \"breaker\": \"" + breaker[0] + "\"}]}");
        d.start();
        try {
            await().atMost(Duration.ofSeconds(20)).untilAsserted(() -> assertThat(entry("w-busy").claimsInFlight()).isEqualTo(2));
            Dispatchers.Entry busy = entry("w-busy");
            assertThat(busy.live()).isTrue();
            assertThat(busy.incarnation()).isEqualTo(d.incarnation());
            assertThat(busy.topics()).containsExactly("email.slow");
            assertThat(busy.details()).isEqualTo("{\"transports\": [{\"name\": \"http\", \"breaker\": \"closed\"}]}");

            breaker[0] = "open"; // read again at every beat
            release.countDown();
            await().atMost(Duration.ofSeconds(20)).untilAsserted(() -> {
                Dispatchers.Entry now = entry("w-busy");
                assertThat(now.claimsInFlight()).isZero();
                assertThat(now.details()).contains("\"open\"");
            });
        } finally {
            release.countDown();
            d.stop();
        }
    }

    @Test
    void detailsThatCannotBeStoredAreLeftOutOfTheRow_withOneWarning_andTheRowIsStillWritten() {
        Registration r = new Registration(new io.mailroom.outbox.DispatcherSessions(pg.dataSource(), null, null),
                DispatcherConfig.builder().workerId("w-odd").build(), Set.of("email.any"), "i-odd", () -> 3);
        for (String bad : List.of("not json", "[1, 2]", "{\"big\": \"" + "x".repeat(Registration.MAX_DETAILS_BYTES) + "\"}")) {
            r.details(() -> bad);
            r.beat();
            Dispatchers.Entry row = entry("w-odd");
            assertThat(row.details()).as(bad.substring(0, Math.min(20, bad.length()))).isNull();
            assertThat(row.claimsInFlight()).isEqualTo(3);
        }
        r.details(() -> {
            throw new IllegalStateException("breakers unreadable");
        });
        r.beat();
        assertThat(entry("w-odd").details()).isNull();
        r.details(() -> "{\"ok\": true}");
        r.beat();
        assertThat(entry("w-odd").details()).isEqualTo("{\"ok\": true}");
        assertThat(logs.list).filteredOn(e -> e.getLevel() == Level.WARN && e.getFormattedMessage().contains("details"))
                .singleElement().extracting(ILoggingEvent::getFormattedMessage).asString()
                .contains("w-odd").contains("left out of its row");
    }

    @Test
    void theListShowsEveryRow_liveOnesFirst_andOneWhoseDispatcherStoppedWithoutSayingSoIsNotLiveOnceItExpires() {
        new OutboxEnqueuer(Clock.systemUTC(), false).enqueueAll(pg.dsl(), List.of(dueSince("email.b", "b-1", Duration.ofMinutes(5))));
        DispatcherRegistry.beat(pg.dsl(), "a-first", "i-1", "h1", "1.0", Set.of("email.b"), Duration.ofSeconds(1), 0, null);
        DispatcherRegistry.beat(pg.dsl(), "z-last", "i-2", "h2", "1.0", Set.of("email.a", "email.c"), Duration.ofMinutes(1), 4,
                "{\"transports\": []}");
        Dispatchers.Snapshot both = pg.dsl().transactionResult(cfg -> Dispatchers.list(cfg.dsl()));
        assertThat(both.dispatchers()).extracting(Dispatchers.Entry::workerId).containsExactly("a-first", "z-last");
        assertThat(both.liveCount()).isEqualTo(2);
        assertThat(both.dispatchers().get(1).topics()).containsExactly("email.a", "email.c");
        assertThat(both.dispatchers().get(1).claimsInFlight()).isEqualTo(4);
        assertThat(Dispatchers.unservedTopics(pg.dsl())).isEmpty();

        // a-first beats every second and is live for three of them: it stopped without removing its row
        await().atMost(Duration.ofSeconds(15)).until(() -> !Dispatchers.list(pg.dsl()).dispatchers().getLast().live());
        Dispatchers.Snapshot later = Dispatchers.list(pg.dsl());
        assertThat(later.dispatchers()).extracting(Dispatchers.Entry::workerId).containsExactly("z-last", "a-first");
        assertThat(later.dispatchers().getLast().expiresAt()).isBefore(later.at());
        assertThat(later.liveCount()).isEqualTo(1);
        assertThat(Dispatchers.unservedTopics(pg.dsl())).isEqualTo(Map.of("email.b", 1L));
    }

    private static Dispatchers.Entry entry(String workerId) {
        return Dispatchers.list(pg.dsl()).dispatchers().stream().filter(e -> e.workerId().equals(workerId)).findFirst()
                .orElseThrow(() -> new AssertionError("no row of " + workerId));
    }
}
