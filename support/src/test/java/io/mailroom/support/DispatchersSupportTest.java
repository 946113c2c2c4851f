package io.mailroom.support;

import com.fasterxml.jackson.databind.JsonNode;
import io.mailroom.outbox.NewMessage;
import io.mailroom.outbox.OutboxEnqueuer;
import io.mailroom.outbox.runtime.Dispatcher;
import io.mailroom.outbox.runtime.DispatcherConfig;
import io.mailroom.outbox.runtime.Outcome;
import io.mailroom.support.cli.SupportCli;
import io.mailroom.testing.PostgresExtension;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import javax.sql.DataSource;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.net.http.HttpResponse;
import java.sql.Connection;
import java.sql.SQLException;
import java.sql.SQLFeatureNotSupportedException;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.logging.Logger;

import static io.mailroom.db.jooq.Tables.AUDIT_LOG;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * The dispatchers and topics in the API, the console and the CLI (issue 26, item 6): every running
 * process is a row (two processes, two rows), one that stopped without saying so turns not live, a
 * topic paused from anywhere can be resumed from the console, and a topic nobody serves is flagged.
 */
class DispatchersSupportTest {

    @RegisterExtension
    static final PostgresExtension pg = new PostgresExtension();

    static final String VIEWER = "vic-viewer-token-0123456789";
    static final String OPERATOR = "olga-operator-token-0123456789";
    static final String CLOSED = "{\"transports\": [{\"name\": \"smtp\", \"breaker\": \"closed\"}]}";
    static final String OPEN = "{\"transports\": [{\"name\": \"http\", \"breaker\": \"open\"}]}";

    private static SupportServer server;
    private static Http http;

    @BeforeAll
    static void start() {
        server = SupportServer.start(pg.dataSource(), SupportConfig.builder().host("127.0.0.1").port(0)
                .tokens("vic:viewer:" + VIEWER + ",olga:operator:" + OPERATOR).build());
        http = new Http(server.baseUri());
    }

    @AfterAll
    static void stop() {
        server.stop();
    }

    @BeforeEach
    void clean() {
        TestMail.truncate(pg.dsl());
        pg.dsl().execute("TRUNCATE outbox_dispatcher");
    }

    /** A dispatcher beating every 300 ms (live for 900 ms without a beat), reporting {@code details}. */
    private static Dispatcher dispatcher(DataSource ds, String workerId, String topic, String details) {
        DispatcherConfig config = DispatcherConfig.builder().workerId(workerId).lease(Duration.ofSeconds(2))
                .heartbeatInterval(Duration.ofMillis(300)).listenForNotifications(false).build();
        Dispatcher d = new Dispatcher(ds, config, Map.of(topic, (m, ctx) -> Outcome.done())).registrationDetails(() -> details);
        d.start();
        return d;
    }

    private static JsonNode api(String token) {
        HttpResponse<String> r = http.get("/api/dispatchers", Http.bearer(token));
        assertThat(r.statusCode()).as(r.body()).isEqualTo(200);
        return Http.json(r);
    }

    private static String console(String cookie, String path) {
        HttpResponse<String> r = http.get(path, "Cookie", "mailroom_session=" + cookie);
        assertThat(r.statusCode()).as(r.body()).isEqualTo(200);
        return r.body();
    }

    @Test
    void twoRunningDispatchersAreTwoLiveRows_andOneThatStopsWithoutSayingSoTurnsNotLive() {
        CutOff cut = new CutOff(pg.dataSource());
        Dispatcher one = dispatcher(pg.dataSource(), "w-one", "email.order_confirmation", CLOSED);
        Dispatcher two = dispatcher(cut, "w-two", "email.password_reset", OPEN);
        try {
            await().atMost(Duration.ofSeconds(20)).untilAsserted(() -> assertThat(api(VIEWER).get("dispatchers"))
                    .extracting(d -> d.get("workerId").asText() + " " + d.get("live").asBoolean())
                    .containsExactly("w-one true", "w-two true"));
            JsonNode first = api(VIEWER).get("dispatchers").get(0);
            assertThat(first.get("host").asText()).isNotBlank();
            assertThat(first.get("version").asText()).isNotBlank();
            assertThat(first.get("startedAt").asText()).endsWith("Z");
            assertThat(first.get("lastHeartbeatAt").asText()).endsWith("Z");
            assertThat(first.get("claimsInFlight").asInt()).isZero();
            assertThat(first.get("topics")).extracting(JsonNode::asText).containsExactly("email.order_confirmation");
            assertThat(first.get("transports").get(0).get("transport").asText()).isEqualTo("smtp");
            assertThat(first.get("transports").get(0).get("breaker").asText()).isEqualTo("closed");

            String olga = ConsoleLogin.signIn(http, OPERATOR);
            String page = console(olga, "/console/dispatchers");
            assertThat(page).contains("2 of 2 dispatchers live").contains("data-worker=\"w-one\"").contains("data-worker=\"w-two\"")
                    .contains("smtp: closed (sending normally)").contains("http: open (provider failing; sending held back)")
                    .doesNotContain("class=\"dead\"").contains("<a href=\"/console/dispatchers\" class=\"active\"");
            assertThat(cliOut()).containsPattern("w-one\\s+live").containsPattern("w-two\\s+live").contains("2 live of 2");

            // the second one is cut off from the database: its stop cannot remove its row, which expires
            cut.cut = true;
            two.stop();
            await().atMost(Duration.ofSeconds(20)).untilAsserted(() -> assertThat(api(VIEWER).get("dispatchers"))
                    .extracting(d -> d.get("workerId").asText() + " " + d.get("live").asBoolean())
                    .containsExactly("w-one true", "w-two false"));
            assertThat(console(olga, "/console/dispatchers")).contains("1 of 2 dispatchers live")
                    .contains("class=\"dead\" data-worker=\"w-two\"").contains("not live");
            String cli = cliOut();
            assertThat(cli).containsPattern("w-one\\s+live").containsPattern("w-two\\s+NOT LIVE").contains("1 live of 2");
        } finally {
            one.stop();
            two.stop();
        }
    }

    @Test
    void aTopicPausedThroughTheApiIsResumedFromTheConsole_bothAudited() {
        HttpResponse<String> pause = http.postJson("/api/control/pause",
                "{\"scope\": \"email.password_reset\", \"reason\": \"template being fixed\"}", Http.bearer(OPERATOR));
        assertThat(pause.statusCode()).as(pause.body()).isEqualTo(200);
        JsonNode topic = api(VIEWER).get("topics").get(0);
        assertThat(topic.get("topic").asText()).isEqualTo("email.password_reset");
        assertThat(topic.get("pause").get("reason").asText()).isEqualTo("template being fixed");
        assertThat(topic.get("pause").get("updatedBy").asText()).isEqualTo("olga");

        String olga = ConsoleLogin.signIn(http, OPERATOR);
        String page = console(olga, "/console/dispatchers");
        String csrf = Http.hidden(page, "csrf");
        assertThat(page).contains("data-topic=\"email.password_reset\" class=\"paused\"").contains("data-action=\"resume-topic\"")
                .contains("“template being fixed”");
        // the queue page that said "Paused for: email.password_reset." has a button for it now
        assertThat(console(olga, "/console/queue")).contains("Paused for: email.password_reset.")
                .contains("data-action=\"resume-topic\">Resume email.password_reset</button>");

        String[] headers = {"Cookie", "mailroom_session=" + olga, "Origin", http.origin()};
        Map<String, String> resume = Map.of("csrf", csrf, "scope", "email.password_reset", "back", "/console/dispatchers");
        assertThat(http.postForm("/console/control/resume", Map.of("scope", "email.password_reset"), headers).statusCode())
                .as("no CSRF token").isEqualTo(403);
        HttpResponse<String> r = http.postForm("/console/control/resume", resume, headers);
        assertThat(r.statusCode()).as(r.body()).isEqualTo(303);
        assertThat(r.headers().firstValue("Location")).contains("/console/dispatchers");
        assertThat(console(olga, "/console/dispatchers")).contains("Sending of email.password_reset is running again.")
                .contains("data-topic=\"email.password_reset\" class=\"running\"");
        assertThat(Http.json(http.get("/api/control", Http.bearer(VIEWER))).get("switches").get(0).get("paused").asBoolean()).isFalse();
        assertThat(pg.dsl().select(AUDIT_LOG.ACTION, AUDIT_LOG.ACTOR).from(AUDIT_LOG).orderBy(AUDIT_LOG.ID)
                .fetch(x -> x.value1() + " " + x.value2())).containsExactly("pause olga", "resume olga");
        assertThat(pg.dsl().fetchValue("SELECT detail->>'scope' FROM audit_log WHERE action = 'resume'")).isEqualTo("email.password_reset");

        // a pause from the console needs a reason; the back link stays on this server
        HttpResponse<String> noReason = http.postForm("/console/control/pause", Map.of("csrf", csrf, "scope", "email.x"), headers);
        assertThat(noReason.statusCode()).isEqualTo(400);
        assertThat(noReason.body()).contains("say why sending is paused");
        HttpResponse<String> paused = http.postForm("/console/control/pause", Map.of("csrf", csrf, "scope", "email.x",
                "reason", "checking", "back", "https://evil.example/"), headers);
        assertThat(paused.statusCode()).isEqualTo(303);
        assertThat(paused.headers().firstValue("Location")).contains("/console/queue");
        assertThat(pg.dsl().fetchCount(AUDIT_LOG)).isEqualTo(3);
    }

    @Test
    void aTopicNoLiveDispatcherServesIsFlaggedInTheApiTheConsoleAndTheCli() {
        new OutboxEnqueuer().enqueueAll(pg.dsl(), List.of(NewMessage.of("email.nobody", "user", "42", "email-user-42", "{}")
                .withAvailableAt(Instant.now().minus(Duration.ofMinutes(5)))));
        Dispatcher one = dispatcher(pg.dataSource(), "w-one", "email.order_confirmation", null);
        try {
            await().atMost(Duration.ofSeconds(20)).until(() -> api(VIEWER).get("dispatchers").size() == 1);
            JsonNode list = api(VIEWER);
            assertThat(list.get("unservedTopics").get("email.nobody").asLong()).isEqualTo(1);
            assertThat(list.get("dispatchers").get(0).get("transports")).as("nothing reported").isEmpty();
            assertThat(list.get("topics")).extracting(t -> t.get("topic").asText() + " " + t.get("servedBy").asInt() + " "
                    + t.get("waitingUnserved").asText()).containsExactly("email.nobody 0 1", "email.order_confirmation 1 null");

            String vic = ConsoleLogin.signIn(http, VIEWER);
            for (String path : List.of("/console/dispatchers", "/console/queue")) {
                assertThat(console(vic, path)).as(path).contains("id=\"unserved-topics\"").contains("1 on email.nobody");
            }
            assertThat(console(vic, "/console/dispatchers")).contains("(1 email waiting with nobody to send them)")
                    .contains("not reported").doesNotContain("data-action=");
            assertThat(cliOut()).contains("UNSERVED: 1 emails wait on topic email.nobody");
        } finally {
            one.stop();
        }
    }

    @Test
    void aViewerReadsTheDispatchersButMayNotPauseOrResume() {
        assertThat(api(VIEWER).get("dispatchers")).isEmpty();
        assertThat(http.get("/api/dispatchers").statusCode()).isEqualTo(401);
        assertThat(http.postJson("/api/control/pause", "{\"scope\": \"email.x\", \"reason\": \"r\"}", Http.bearer(VIEWER))
                .statusCode()).isEqualTo(403);
        String vic = ConsoleLogin.signIn(http, VIEWER);
        String page = console(vic, "/console/dispatchers");
        assertThat(page).contains("No dispatcher is running");
        HttpResponse<String> r = http.postForm("/console/control/pause", Map.of("csrf", Http.hidden(page, "csrf"),
                "scope", "email.x", "reason", "r"), "Cookie", "mailroom_session=" + vic, "Origin", http.origin());
        assertThat(r.statusCode()).isEqualTo(403);
        assertThat(pg.dsl().fetchCount(AUDIT_LOG)).isZero();
        assertThat(http.get("/api/dispatchers?live=true", Http.bearer(VIEWER)).statusCode()).isEqualTo(400);
    }

    private static String cliOut() {
        StringWriter out = new StringWriter();
        StringWriter err = new StringWriter();
        var cmd = SupportCli.commandLine(new SupportCli(pg.dataSource()));
        cmd.setOut(new PrintWriter(out));
        cmd.setErr(new PrintWriter(err));
        int code = cmd.execute("dispatchers");
        assertThat(code).as(err.toString()).isZero();
        return out.toString();
    }

    /** The database as a dispatcher cut off from it sees it, once {@link #cut}: no session can be had. */
    static final class CutOff implements DataSource {
        private final DataSource delegate;
        volatile boolean cut;

        CutOff(DataSource delegate) {
            this.delegate = delegate;
        }

        @Override
        public Connection getConnection() throws SQLException {
            if (cut) {
                throw new SQLException("the network is gone", "08001");
            }
            return delegate.getConnection();
        }

        @Override
        public Connection getConnection(String user, String password) throws SQLException {
            return getConnection();
        }

        @Override
        public PrintWriter getLogWriter() throws SQLException {
            return delegate.getLogWriter();
        }

        @Override
        public void setLogWriter(PrintWriter out) throws SQLException {
            delegate.setLogWriter(out);
        }

        @Override
        public void setLoginTimeout(int seconds) throws SQLException {
            delegate.setLoginTimeout(seconds);
        }

        @Override
        public int getLoginTimeout() throws SQLException {
            return delegate.getLoginTimeout();
        }

        @Override
        public Logger getParentLogger() throws SQLFeatureNotSupportedException {
            return delegate.getParentLogger();
        }

        @Override
        public <T> T unwrap(Class<T> iface) throws SQLException {
            throw new SQLException("not a wrapper");
        }

        @Override
        public boolean isWrapperFor(Class<?> iface) {
            return false;
        }
    }
}
