package io.mailroom.orders;

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

import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

/** A bind that other machines can reach is said once, with where to read about TLS; a loopback bind is not. */
class BindWarningTest {

    @RegisterExtension
    static final PostgresExtension pg = new PostgresExtension();

    private final Logger logger = (Logger) LoggerFactory.getLogger(OrderServer.class);
    private final ListAppender<ILoggingEvent> logged = new ListAppender<>();

    @BeforeEach
    void capture() {
        logged.start();
        logger.addAppender(logged);
    }

    @AfterEach
    void release() {
        logger.detachAppender(logged);
    }

    @Test
    void aWildcardBindIsWarnedAboutOnceWithAPointerToTheTlsDocs() {
        try (OrderServer server = OrderServer.start(pg.dataSource(), HttpSettings.of("0.0.0.0", 0))) {
            assertThat(server.localAddress().getAddress().isAnyLocalAddress()).isTrue();
        }

        List<String> warnings = warnings();
        assertThat(warnings).hasSize(1);
        assertThat(warnings.getFirst()).contains("0.0.0.0").contains("TLS").contains("docs/OPERATIONS.md")
                .contains(OrderServiceConfig.ENV_HOST);
    }

    @Test
    void aLoopbackBindIsNotWarnedAbout() {
        try (OrderServer server = OrderServer.start(pg.dataSource(), HttpSettings.of("127.0.0.1", 0))) {
            assertThat(server.localAddress().getAddress().isLoopbackAddress()).isTrue();
        }

        assertThat(warnings()).isEmpty();
    }

    private List<String> warnings() {
        return logged.list.stream().filter(e -> e.getLevel() == Level.WARN).map(ILoggingEvent::getFormattedMessage).toList();
    }
}
