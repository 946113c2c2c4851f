package io.mailroom.outbox.runtime;

import io.mailroom.outbox.Fixtures;
import io.mailroom.outbox.OutboxEnqueuer;
import io.mailroom.outbox.admin.OutboxControl;
import io.mailroom.testing.PostgresExtension;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import java.time.Duration;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * Enqueues to topics this dispatcher does not claim now (another service's, or paused) do not wake
 * it: each claim they would wake walks those topics' pending rows for nothing (issue 28).
 */
class WakeUpListenerTest {

    @RegisterExtension
    static final PostgresExtension pg = new PostgresExtension();

    private final AtomicInteger wakes = new AtomicInteger();
    private WakeUpListener listener;

    @BeforeEach
    void listening() {
        listener = new WakeUpListener(pg.dataSource(), wakes::incrementAndGet, "ours"::equals);
        listener.start();
        // it wakes once when its session is up (a notification sent before could have been missed)
        await().atMost(Duration.ofSeconds(10)).until(() -> wakes.get() >= 1);
        // and is listening once its LISTEN went through: wait for a notification of ours to arrive
        int before = wakes.get();
        notifyTopic("ours");
        await().atMost(Duration.ofSeconds(10)).until(() -> wakes.get() > before);
    }

    @AfterEach
    void stop() {
        listener.stop();
    }

    @Test
    void anotherTopicDoesNotWakeIt() {
        int before = wakes.get();
        notifyTopic("theirs");
        notifyTopic("theirs");
        await().during(Duration.ofMillis(1500)).atMost(Duration.ofSeconds(5)).until(() -> wakes.get() == before);
    }

    @Test
    void itsOwnTopicWakesItEvenAmongOthers() {
        int before = wakes.get();
        pg.dsl().transaction(tx -> {
            tx.dsl().resultQuery("SELECT pg_notify(?, 'theirs'), pg_notify(?, 'ours')", OutboxEnqueuer.CHANNEL,
                    OutboxEnqueuer.CHANNEL).fetch();
        });
        await().atMost(Duration.ofSeconds(10)).until(() -> wakes.get() > before);
    }

    @Test
    void aNotificationWithoutATopicWakesIt() {
        int before = wakes.get();
        notifyTopic("");
        await().atMost(Duration.ofSeconds(10)).until(() -> wakes.get() > before);
        assertThat(wakes.get()).isGreaterThan(before);
    }

    @Test
    void aDispatcherIsWokenForItsOwnTopicsWhileTheyAreNotPaused() {
        DispatcherConfig config = DispatcherConfig.builder().workerId("w-wake").controlPollInterval(Duration.ofMillis(100))
                .build();
        Dispatcher dispatcher = new Dispatcher(pg.dataSource(), config, Map.of(Fixtures.TOPIC, (m, ctx) -> Outcome.done()));
        OutboxControl control = new OutboxControl(pg.dataSource());
        dispatcher.start();
        try {
            assertThat(dispatcher.wakesFor(Fixtures.TOPIC)).isTrue();
            assertThat(dispatcher.wakesFor("another.service")).isFalse();
            control.pause(Fixtures.TOPIC, "test", "ops");
            await().atMost(Duration.ofSeconds(10)).until(() -> !dispatcher.wakesFor(Fixtures.TOPIC));
            control.resume(Fixtures.TOPIC, "ops");
            await().atMost(Duration.ofSeconds(10)).until(() -> dispatcher.wakesFor(Fixtures.TOPIC));
            control.pause(OutboxControl.ALL, "test", "ops");
            await().atMost(Duration.ofSeconds(10)).until(() -> !dispatcher.wakesFor(Fixtures.TOPIC));
            control.resume(OutboxControl.ALL, "ops");
        } finally {
            dispatcher.stop();
        }
    }

    private static void notifyTopic(String topic) {
        pg.dsl().resultQuery("SELECT pg_notify(?, ?)", OutboxEnqueuer.CHANNEL, topic).fetch();
    }
}
