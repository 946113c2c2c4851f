package io.mailroom.email.service;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.read.ListAppender;
import com.icegreen.greenmail.junit5.GreenMailExtension;
import com.icegreen.greenmail.util.ServerSetupTest;
import io.mailroom.testing.PostgresExtension;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.net.ConnectException;
import java.net.ServerSocket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

/**
 * The dispatcher service while its database is away: at start-up it waits (live, not ready, one log
 * line per attempt) instead of exiting, or gives up after {@code MAILROOM_DB_STARTUP_TIMEOUT} with a
 * message naming the URL; a database that refuses it fails start-up at once; at run time
 * {@code /health/ready} says DOWN within a couple of seconds instead of ten. The database is taken
 * away by a {@link TcpGate} in front of it.
 */
class DatabaseOutageTest {

    @RegisterExtension
    static final PostgresExtension pg = new PostgresExtension();

    @RegisterExtension
    static final GreenMailExtension greenMail = new GreenMailExtension(ServerSetupTest.SMTP.dynamicPort());

    /** What an answer of /health/ready may take while the database is down: generous, but well under the old 10 s. */
    private static final Duration READY_ANSWER_BOUND = Duration.ofSeconds(4);

    private final HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(2)).build();
    private final ListAppender<ILoggingEvent> startupLogs = new ListAppender<>();
    private final Logger startupLogger = (Logger) LoggerFactory.getLogger(DatabaseStartup.class);
    private TcpGate gate;

    @BeforeEach
    void setUp() throws IOException {
        gate = TcpGate.inFrontOf(pg.jdbcUrl());
        startupLogs.start();
        startupLogger.addAppender(startupLogs);
    }

    @AfterEach
    void tearDown() throws IOException {
        startupLogger.detachAppender(startupLogs);
        gate.close();
    }

    private Map<String, String> env(String dbUrl, int port) {
        Map<String, String> env = ServiceEnv.smtp(dbUrl, greenMail.getSmtp().getPort());
        env.put("MAILROOM_DISPATCHER_PORT", String.valueOf(port));
        return env;
    }

    /** The test database's URL with credentials, through the gate, with a password to be masked. */
    private String gatedUrl() {
        String url = gate.jdbcUrl(pg.database().jdbcUrlWithCredentials());
        return url + (url.contains("?") ? "&" : "?") + "ApplicationName=outage-test";
    }

    private HttpResponse<String> get(int port, String path) throws Exception {
        return http.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + path))
                .timeout(Duration.ofSeconds(30)).GET().build(), HttpResponse.BodyHandlers.ofString());
    }

    private static int freePort() throws IOException {
        try (ServerSocket s = new ServerSocket(0)) {
            return s.getLocalPort();
        }
    }

    private long unavailableWarnings() {
        return startupLogs.list.stream().filter(e -> e.getLevel() == Level.WARN)
                .filter(e -> e.getFormattedMessage().contains("unavailable (SQLSTATE 08")).count();
    }

    @Test
    void startUpWaitsForADatabaseThatIsDownServingLiveButNotReadyAndStartsWhenItAnswers() throws Exception {
        gate.shut();
        int port = freePort();
        CompletableFuture<DispatcherService> starting = CompletableFuture.supplyAsync(
                () -> DispatcherService.start(ServiceConfig.fromEnv(env(gatedUrl(), port))));
        try {
            await().atMost(Duration.ofSeconds(20)).ignoreExceptionsInstanceOf(ConnectException.class)
                    .until(() -> get(port, "/health/live").statusCode() == 200);
            HttpResponse<String> ready = get(port, "/health/ready");
            assertThat(ready.statusCode()).isEqualTo(503);
            assertThat(ready.body()).contains("\"status\":\"STARTING\"").contains("\"database\":\"DOWN\"");
            // it keeps trying, and says so each time, instead of exiting
            await().atMost(Duration.ofSeconds(40)).until(() -> unavailableWarnings() >= 2);
            assertThat(starting).isNotDone();
            assertThat(startupLogs.list).map(ILoggingEvent::getFormattedMessage)
                    .anySatisfy(m -> assertThat(m).contains("127.0.0.1:" + gate.port()).contains("attempt 2"));

            gate.open();
            try (DispatcherService service = starting.get(60, TimeUnit.SECONDS)) {
                assertThat(service.port()).isEqualTo(port);
                HttpResponse<String> up = get(port, "/health/ready");
                assertThat(up.statusCode()).isEqualTo(200);
                assertThat(up.body()).contains("\"database\":\"UP\"");
            }
        } finally {
            starting.thenAccept(DispatcherService::close);
        }
    }

    @Test
    void startUpGivesUpAfterTheConfiguredTimeoutNamingTheUrlWithThePasswordMasked() throws Exception {
        gate.shut();
        int port = freePort();
        Map<String, String> env = env(gatedUrl() + "&password=never-printed", port);
        env.put("MAILROOM_DB_STARTUP_TIMEOUT", "3s");
        assertThatThrownBy(() -> DispatcherService.start(ServiceConfig.fromEnv(env)))
                .isInstanceOf(DatabaseStartupException.class)
                .hasMessageStartingWith("database at jdbc:postgresql://127.0.0.1:" + gate.port() + "/")
                .hasMessageContaining("did not answer within 3s")
                .hasMessageContaining("SQLSTATE 08")
                .hasMessageContaining("password=****")
                .satisfies(e -> assertThat(e.getMessage()).doesNotContain("never-printed"));
        // what was started is stopped again: the health port is free
        assertThatThrownBy(() -> get(port, "/health/live")).isInstanceOf(ConnectException.class);
        // and the command line says it in one line, exit status 1
        var err = new java.io.StringWriter();
        var cli = MailroomCli.commandLine();
        cli.setErr(new java.io.PrintWriter(err));
        assertThat(cli.getExecutionExceptionHandler().handleExecutionException(
                new DatabaseStartupException("database at jdbc:postgresql://h:1/d did not answer within 3s", null),
                cli, null)).isEqualTo(1);
        assertThat(err.toString().trim()).isEqualTo("mailroom: database at jdbc:postgresql://h:1/d did not answer within 3s");
    }

    @Test
    @Timeout(value = 60, unit = TimeUnit.SECONDS) // waiting would be forever here: no start-up timeout is set
    void aDatabaseThatRefusesTheDispatcherFailsStartUpAtOnce() throws Exception {
        String noSuchDatabase = pg.database().jdbcUrlWithCredentials().replace("/" + pg.database().name(), "/no_such_database_here");
        assertThatThrownBy(() -> DispatcherService.start(ServiceConfig.fromEnv(env(noSuchDatabase, 0))))
                .isInstanceOf(DatabaseStartupException.class)
                .hasMessageContaining("refused the dispatcher (SQLSTATE 3D000)")
                .hasMessageContaining("no_such_database_here");
    }

    @Test
    void readinessAnswersDownWithinSecondsWhileTheDatabaseIsDownAndUpAgainAfter() throws Exception {
        try (DispatcherService service = DispatcherService.start(ServiceConfig.fromEnv(env(gatedUrl(), 0)))) {
            int port = service.port();
            assertThat(get(port, "/health/ready").statusCode()).isEqualTo(200);

            gate.shut();
            // several probes in a row, as an orchestrator sends them: each one answers within the bound
            for (int probe = 1; probe <= 3; probe++) {
                await("probe " + probe).atMost(READY_ANSWER_BOUND).until(() -> {
                    HttpResponse<String> r = get(port, "/health/ready");
                    return r.statusCode() == 503 && r.body().contains("\"database\":\"DOWN\"")
                            && r.body().contains("\"paused\":\"unknown\"") && r.body().contains("\"dispatcher\":\"RUNNING\"");
                });
            }

            gate.open();
            await().atMost(Duration.ofSeconds(30)).until(() -> {
                HttpResponse<String> r = get(port, "/health/ready");
                return r.statusCode() == 200 && r.body().contains("\"paused\":[]");
            });
        }
    }
}
