package io.mailroom.outbox.runtime;

import io.mailroom.outbox.NewMessage;
import io.mailroom.outbox.OutboxEnqueuer;
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
import java.util.Map;
import java.util.Set;

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
}
