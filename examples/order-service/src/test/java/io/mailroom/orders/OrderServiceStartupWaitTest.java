package io.mailroom.orders;

import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.read.ListAppender;
import io.mailroom.outbox.DatabaseWait;
import io.mailroom.testing.FaultyForwarder;
import io.mailroom.testing.PostgresExtension;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.slf4j.LoggerFactory;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

/**
 * The order service's start-up while its database is not there (a pooler or server restarting):
 * it waits, one log line per attempt naming where, as the dispatcher does, and comes up when the
 * database answers; past {@code MAILROOM_DB_STARTUP_TIMEOUT} it gives up with one clear message.
 * It used to exit within a second on HikariCP's PoolInitializationException.
 */
class OrderServiceStartupWaitTest {

    @RegisterExtension
    static final PostgresExtension pg = new PostgresExtension();

    private final ListAppender<ILoggingEvent> logs = new ListAppender<>();
    private final Logger appLogger = (Logger) LoggerFactory.getLogger(OrderServiceApp.class);
    private FaultyForwarder network;

    @BeforeEach
    void setUp() throws Exception {
        URI db = URI.create(pg.jdbcUrl().substring("jdbc:".length()));
        network = FaultyForwarder.to(db.getHost(), db.getPort() < 0 ? 5432 : db.getPort(), FaultyForwarder.Mode.REFUSE);
        logs.start();
        appLogger.addAppender(logs);
    }

    @AfterEach
    void tearDown() {
        appLogger.detachAppender(logs);
        network.close();
    }

    private OrderServiceConfig config() {
        return new OrderServiceConfig(network.jdbcUrl(pg.database().jdbcUrl()) + "&password=s3cret", pg.database().user(),
                pg.database().password(), false, true, 2, HttpSettings.of("127.0.0.1", 0));
    }

    private long waitLines() {
        return logs.list.stream().map(ILoggingEvent::getFormattedMessage)
                .filter(m -> m.contains("127.0.0.1:" + network.port()) && m.contains("unavailable (SQLSTATE 08")).count();
    }

    @Test
    void waitsForADatabaseThatRefusesAndStartsOnceItAnswers() throws Exception {
        CompletableFuture<OrderServiceApp> starting = CompletableFuture.supplyAsync(() -> OrderServiceApp.start(config()));
        try {
            await().atMost(Duration.ofSeconds(30)).until(() -> waitLines() >= 2);
            assertThat(starting).isNotDone();
            assertThat(logs.list).map(ILoggingEvent::getFormattedMessage)
                    .anySatisfy(m -> assertThat(m).contains("Connecting to the database at jdbc:postgresql://127.0.0.1:" + network.port())
                            .contains("password=****").doesNotContain("s3cret"));

            network.mode(FaultyForwarder.Mode.RELAY);
            try (OrderServiceApp app = starting.get(30, TimeUnit.SECONDS)) {
                HttpResponse<String> health = HttpClient.newHttpClient().send(HttpRequest.newBuilder(
                        app.server().baseUri().resolve("/orders/does-not-exist")).GET().build(), HttpResponse.BodyHandlers.ofString());
                assertThat(health.statusCode()).isIn(400, 404); // up, answering from a migrated database
            }
        } finally {
            starting.thenAccept(OrderServiceApp::close);
        }
    }

    @Test
    void givesUpAfterTheStartupTimeoutNamingTheUrlAndTheSetting() {
        OrderServiceConfig config = config().withDbStartupTimeout(Duration.ofSeconds(3));
        long started = System.nanoTime();

        assertThatThrownBy(() -> OrderServiceApp.start(config)).isInstanceOf(DatabaseWait.Failed.class)
                .hasMessageContaining("127.0.0.1:" + network.port()).hasMessageContaining("did not answer within 3s")
                .hasMessageContaining(OrderServiceConfig.ENV_DB_STARTUP_TIMEOUT).hasMessageNotContaining("s3cret");
        assertThat(Duration.ofNanos(System.nanoTime() - started)).isLessThan(Duration.ofSeconds(15));
    }
}
