package io.mailroom.email.dispatch;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.read.ListAppender;
import io.mailroom.outbox.runtime.ClaimGate;
import io.mailroom.outbox.runtime.Dispatcher;
import io.mailroom.outbox.runtime.DispatcherConfig;
import io.mailroom.outbox.runtime.MessageHandler;
import io.mailroom.outbox.NewMessage;
import io.mailroom.outbox.OutboxEnqueuer;
import io.mailroom.outbox.runtime.Outcome;
import io.mailroom.testing.PostgresExtension;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.slf4j.LoggerFactory;

import java.util.List;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;

/** Every email that ends failed or in review leaves one log line naming it, with its recipient masked. */
class EndedEmailLogTest {

    @RegisterExtension
    static final PostgresExtension pg = new PostgresExtension();

    private final ListAppender<ILoggingEvent> logs = new ListAppender<>();
    private final Logger logger = (Logger) LoggerFactory.getLogger(EndedEmailLog.class);

    @BeforeEach
    void capture() {
        pg.dsl().execute("TRUNCATE outbox_message, outbox_effect, outbox_effect_term, outbox_attempt");
        logs.start();
        logger.addAppender(logs);
    }

    @AfterEach
    void release() {
        logger.detachAppender(logs);
    }

    private static String envelope(String address) {
        return "{\"v\":1,\"template\":\"t\",\"to\":{\"address\":\"" + address + "\"},\"data\":{}}";
    }

    @Test
    void failedRetriesUsedUpAndReviewEachLogOneLine_theAddressMasked() {
        new OutboxEnqueuer().enqueueAll(pg.dsl(), List.of(
                NewMessage.of("t.failed", "order", "1", "key-failed", envelope("alice@example.com")),
                NewMessage.of("t.retry", "order", "2", "key-retry", envelope("bob@example.org")).withMaxAttempts(1),
                NewMessage.of("t.review", "order", "3", "key-review", "{\"customerEmail\":\"carol@example.net\"}"),
                NewMessage.of("t.done", "order", "4", "key-done", envelope("dave@example.com"))));
        Map<String, MessageHandler> handlers = Map.of(
                "t.failed", (m, ctx) -> Outcome.failed("smtp 550 5.1.1 user unknown"),
                "t.retry", (m, ctx) -> Outcome.retryLater("smtp-timeout"),
                "t.review", (m, ctx) -> Outcome.review("outcome unknown: connection lost after DATA"),
                "t.done", (m, ctx) -> Outcome.done());
        Dispatcher d = new Dispatcher(pg.dataSource(), DispatcherConfig.builder().workerId("w1").batchSize(10).build(),
                handlers, ClaimGate.OPEN, new EndedEmailLog());
        assertThat(d.runOnce()).isEqualTo(4);

        assertThat(logs.list).extracting(ILoggingEvent::getFormattedMessage).containsExactlyInAnyOrder(
                "Email key-failed on t.failed to a***@example.com failed: smtp 550 5.1.1 user unknown",
                "Email key-retry on t.retry to b***@example.org failed: smtp-timeout",
                "Email key-review on t.review to c***@example.net parked in review: outcome unknown: connection lost after DATA");
        assertThat(logs.list).filteredOn(e -> e.getFormattedMessage().contains("failed:"))
                .extracting(ILoggingEvent::getLevel).containsOnly(Level.WARN);
        assertThat(logs.list).extracting(ILoggingEvent::getFormattedMessage).noneMatch(m -> m.contains("alice@"));
    }

    @Test
    void aPayloadWithoutAReadableAddressIsNeverQuoted() {
        assertThat(EndedEmailLog.recipient("{\"to\":{\"address\":\"not an address\"}}")).isEqualTo("an unreadable address");
        assertThat(EndedEmailLog.recipient("not json")).isEqualTo("an unreadable address");
        assertThat(EndedEmailLog.recipient(null)).isEqualTo("an unreadable address");
    }
}
