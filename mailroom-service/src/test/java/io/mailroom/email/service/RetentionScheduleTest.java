package io.mailroom.email.service;

import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.read.ListAppender;
import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import io.mailroom.outbox.maintenance.RetentionConfig;
import io.mailroom.testing.PostgresExtension;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.slf4j.LoggerFactory;

import java.time.Duration;
import java.time.LocalDate;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatCode;
import static org.awaitility.Awaitility.await;

/**
 * Retention on a dispatcher while its database is away: at start-up (it used to throw out of the
 * constructor and take the dispatcher down) and at run time (it used to wait for the next interval,
 * an hour by default). Both are retried within seconds and logged with the SQLSTATE. The database is
 * taken away by a {@link TcpGate} in front of it, so the pool sees refused and cut connections.
 */
class RetentionScheduleTest {

    @RegisterExtension
    static final PostgresExtension pg = new PostgresExtension();

    /** The interval is an hour: anything that happens within seconds is a retry, not the schedule. */
    private static final Duration INTERVAL = Duration.ofHours(1);
    private static final Duration RETRY_FIRST = Duration.ofMillis(200);
    private static final Duration RETRY_MAX = Duration.ofSeconds(1);

    private TcpGate gate;
    private HikariDataSource pool;
    private final ListAppender<ILoggingEvent> logs = new ListAppender<>();
    private final Logger logger = (Logger) LoggerFactory.getLogger(RetentionSchedule.class);
    /** A day the migration did not create and the maintainer (7 days ahead by default) does. */
    private final String lastPartition = "outbox_message_p"
            + LocalDate.now(ZoneOffset.UTC).plusDays(RetentionConfig.DEFAULT_PARTITIONS_AHEAD).format(DateTimeFormatter.BASIC_ISO_DATE);

    @BeforeEach
    void setUp() throws Exception {
        gate = TcpGate.inFrontOf(pg.jdbcUrl());
        HikariConfig c = new HikariConfig();
        c.setJdbcUrl(gate.jdbcUrl(pg.jdbcUrl()));
        c.setUsername(pg.database().user());
        c.setPassword(pg.database().password());
        c.setMaximumPoolSize(3);
        c.setConnectionTimeout(1_000);
        c.setInitializationFailTimeout(-1);
        c.setPoolName("retention-test");
        pool = new HikariDataSource(c);
        logs.start();
        logger.addAppender(logs);
        dropLastPartition();
    }

    @AfterEach
    void tearDown() throws Exception {
        logger.detachAppender(logs);
        pool.close();
        gate.close();
    }

    @Test
    void aDatabaseDownAtStartIsRetriedWithinSecondsAndThePartitionsAreMadeOnceItAnswers() throws Exception {
        gate.shut();
        RetentionSchedule[] schedule = new RetentionSchedule[1];
        assertThatCode(() -> schedule[0] = new RetentionSchedule(pool, RetentionConfig.defaults(), INTERVAL, RETRY_FIRST, RETRY_MAX))
                .as("the constructor survives the outage").doesNotThrowAnyException();
        try (RetentionSchedule s = schedule[0]) {
            assertThat(s.consecutiveFailures()).isEqualTo(1);
            assertThat(lastPartitionExists()).isFalse();
            // it tries again by itself, well before the interval
            await().atMost(Duration.ofSeconds(15)).until(() -> s.consecutiveFailures() >= 2);
            assertThat(warnings()).anySatisfy(m -> assertThat(m)
                    .startsWith("Outbox partitions could not be ensured at start: database unavailable (SQLSTATE 08")
                    .contains("retrying in 200ms"));
            assertThat(warnings()).anySatisfy(m -> assertThat(m).startsWith("Retention run failed: database unavailable (SQLSTATE 08"));

            gate.open();
            await().atMost(Duration.ofSeconds(20)).until(() -> lastPartitionExists() && s.consecutiveFailures() == 0);
        }
    }

    @Test
    void aRunThatFailsAtRunTimeIsRetriedWithinSecondsNotAtTheNextInterval() throws Exception {
        try (RetentionSchedule s = new RetentionSchedule(pool, RetentionConfig.defaults(), INTERVAL, RETRY_FIRST, RETRY_MAX)) {
            assertThat(lastPartitionExists()).as("ensured at start").isTrue();
            assertThat(s.consecutiveFailures()).isZero();

            gate.shut();
            s.runNow();
            await().atMost(Duration.ofSeconds(15)).until(() -> s.consecutiveFailures() >= 3);
            assertThat(warnings()).anySatisfy(m -> assertThat(m).startsWith("Retention run failed: database unavailable (SQLSTATE 08"));

            dropLastPartition(); // directly, not through the gate: only a successful run brings it back
            gate.open();
            await().atMost(Duration.ofSeconds(20)).until(() -> lastPartitionExists() && s.consecutiveFailures() == 0);
        }
    }

    private java.util.List<String> warnings() {
        return logs.list.stream().filter(e -> e.getLevel() == ch.qos.logback.classic.Level.WARN)
                .map(ILoggingEvent::getFormattedMessage).toList();
    }

    private void dropLastPartition() {
        pg.dsl().execute("DROP TABLE IF EXISTS " + lastPartition);
    }

    private boolean lastPartitionExists() {
        return pg.dsl().fetchExists(pg.dsl().selectOne().from("pg_class").where("relname = ?", lastPartition));
    }
}
