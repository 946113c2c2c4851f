package io.mailroom.email.service;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.github.tomakehurst.wiremock.WireMockServer;
import com.github.tomakehurst.wiremock.core.WireMockConfiguration;
import com.github.tomakehurst.wiremock.verification.LoggedRequest;
import com.icegreen.greenmail.junit5.GreenMailExtension;
import com.icegreen.greenmail.util.ServerSetupTest;
import io.mailroom.email.api.EmailOutbox;
import io.mailroom.email.api.OutgoingEmail;
import io.mailroom.outbox.OutboxEnqueuer;
import io.mailroom.outbox.runtime.DispatcherListener;
import io.mailroom.testing.PostgresExtension;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicReference;

import static com.github.tomakehurst.wiremock.client.WireMock.aResponse;
import static com.github.tomakehurst.wiremock.client.WireMock.anyRequestedFor;
import static com.github.tomakehurst.wiremock.client.WireMock.anyUrl;
import static com.github.tomakehurst.wiremock.client.WireMock.post;
import static com.github.tomakehurst.wiremock.client.WireMock.postRequestedFor;
import static com.github.tomakehurst.wiremock.client.WireMock.urlEqualTo;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * Fallback providers through the real service, {@code MAILROOM_TRANSPORT=smtp,http}: SMTP first, the
 * HTTP mail API (WireMock) second. The HTTP provider gets an email only when SMTP proved it took
 * nothing; an SMTP server that may have taken it (no answer after the data) sends it to review, and a
 * dispatcher stopped between the two providers leaves an email that the next one sends exactly once.
 */
class FallbackProviderTest {

    @RegisterExtension
    static final PostgresExtension pg = new PostgresExtension();

    @RegisterExtension
    static final GreenMailExtension greenMail = new GreenMailExtension(ServerSetupTest.SMTP.dynamicPort());

    private static final String VIEWER = "viewer-token-0123456789abcdef";

    private WireMockServer provider;
    private final HttpClient client = HttpClient.newHttpClient();

    @BeforeEach
    void provider() {
        provider = new WireMockServer(WireMockConfiguration.options().dynamicPort().bindAddress("127.0.0.1"));
        provider.start();
        provider.stubFor(post(urlEqualTo("/v1/emails")).willReturn(aResponse().withStatus(202)
                .withHeader("Content-Type", "application/json").withBody("{\"id\":\"prov-1\"}")));
    }

    @AfterEach
    void stop() {
        provider.stop();
        // each test's emails are its own (the first test's service creates the tables)
        pg.dsl().execute("DO $$ BEGIN IF to_regclass('outbox_message') IS NOT NULL THEN TRUNCATE outbox_message, outbox_effect,"
                + " outbox_effect_term, outbox_attempt, idempotency_record, email_rendering; END IF; END $$");
    }

    private Map<String, String> env(int smtpPort) {
        Map<String, String> env = ServiceEnv.smtp(pg.database().jdbcUrlWithCredentials(), smtpPort);
        env.put("MAILROOM_MIGRATE", "true");
        env.put("MAILROOM_TRANSPORT", "smtp,http");
        env.put("MAILROOM_HTTP_BASE_URL", provider.baseUrl());
        env.put("MAILROOM_HTTP_TOKEN", "tok_test");
        env.put("MAILROOM_SMTP_CONNECT_TIMEOUT", "2s");
        env.put("MAILROOM_SMTP_READ_TIMEOUT", "2s");
        env.put("MAILROOM_SUPPORT", "on");
        env.put("MAILROOM_SUPPORT_HOST", "127.0.0.1");
        env.put("MAILROOM_SUPPORT_PORT", "0");
        env.put("MAILROOM_SUPPORT_TOKENS", "vera:viewer:" + VIEWER);
        return env;
    }

    private static void enqueue(String key) {
        pg.dsl().transaction(cfg -> new EmailOutbox(new OutboxEnqueuer()).enqueue(cfg.dsl(), OutgoingEmail.template("welcome")
                .to("ann@example.com", "Ann").about("account", key).idempotencyKey(key)
                .data(Map.of("customer", Map.of("name", "Ann"))).build()));
    }

    private static String status(String key) {
        return text("SELECT status FROM outbox_effect WHERE idempotency_key = ?", key);
    }

    private static String text(String sql, Object... binds) {
        return pg.dsl().fetchOptional(sql, binds).map(r -> r.get(0, String.class)).orElse(null);
    }

    private static int closedPort() throws Exception {
        try (ServerSocket s = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            return s.getLocalPort();
        }
    }

    @Test
    void whenTheFirstRefusesConnectionsTheSecondSendsItWithTheEmailsKeyAndSupportSaysWhichSentIt() throws Exception {
        try (DispatcherService service = DispatcherService.start(ServiceConfig.fromEnv(env(closedPort())))) {
            assertThat(service.transports()).containsOnlyKeys("smtp", "http");
            enqueue("acct-1");
            await().atMost(Duration.ofSeconds(30)).until(() -> "done".equals(status("acct-1")));

            List<LoggedRequest> calls = provider.findAll(postRequestedFor(urlEqualTo("/v1/emails")));
            assertThat(calls).hasSize(1);
            assertThat(calls.getFirst().getHeader("Idempotency-Key")).isEqualTo("acct-1");
            // the refusal was recorded as its own attempt before HTTP was asked
            assertThat(pg.dsl().fetch("SELECT outcome, detail->>'code', detail->>'transport', error FROM outbox_attempt"
                    + " WHERE idempotency_key = 'acct-1' ORDER BY attempt")).satisfiesExactly(
                    first -> {
                        assertThat(first.get(0, String.class)).isEqualTo("retry");
                        assertThat(first.get(1, String.class)).isEqualTo("smtp-connect");
                        assertThat(first.get(3, String.class)).contains("smtp accepted nothing", "failing over to http");
                    },
                    second -> {
                        assertThat(second.get(0, String.class)).isEqualTo("done");
                        assertThat(second.get(2, String.class)).isEqualTo("http");
                    });
            assertThat(text("SELECT result_ref FROM idempotency_record WHERE effect_key = 'acct-1'"))
                    .isEqualTo("prov-1");

            JsonNode email = new ObjectMapper().readTree(client.send(HttpRequest.newBuilder(
                            URI.create("http://127.0.0.1:" + service.supportPort() + "/api/emails/acct-1"))
                    .header("Authorization", "Bearer " + VIEWER).build(), HttpResponse.BodyHandlers.ofString()).body());
            assertThat(email.get("sentBy").asText()).isEqualTo("http");
            assertThat(email.get("timeline").findValuesAsText("transport")).contains("http");
        }
    }

    @Test
    void whileTheFirstProvidersBreakerIsOpenTheEmailGoesStraightToTheNextInOneAttempt() throws Exception {
        try (DispatcherService service = DispatcherService.start(ServiceConfig.fromEnv(env(greenMail.getSmtp().getPort())))) {
            service.transports().get("smtp").circuitBreaker().transitionToForcedOpenState();
            enqueue("acct-open");
            await().atMost(Duration.ofSeconds(30)).until(() -> "done".equals(status("acct-open")));

            // SMTP (healthy, but its breaker open) was not asked; HTTP sent it in the first attempt
            assertThat(greenMail.getReceivedMessages()).isEmpty();
            assertThat(provider.findAll(postRequestedFor(urlEqualTo("/v1/emails")))).hasSize(1);
            assertThat(pg.dsl().fetch("SELECT attempt, outcome, detail->>'transport' FROM outbox_attempt"
                    + " WHERE idempotency_key = 'acct-open'")).singleElement().satisfies(r -> {
                        assertThat(r.get(0, Integer.class)).isEqualTo(1);
                        assertThat(r.get(1, String.class)).isEqualTo("done");
                        assertThat(r.get(2, String.class)).isEqualTo("http");
                    });
        }
    }

    @Test
    void anHttpProviderThatAnswers503IsPassedOverTo_smtp_butA500StaysWithIt() throws Exception {
        provider.resetAll();
        provider.stubFor(post(urlEqualTo("/v1/emails")).withHeader("Idempotency-Key", com.github.tomakehurst.wiremock.client.WireMock
                .equalTo("acct-503")).willReturn(aResponse().withStatus(503)));
        provider.stubFor(post(urlEqualTo("/v1/emails")).withHeader("Idempotency-Key", com.github.tomakehurst.wiremock.client.WireMock
                .equalTo("acct-500")).willReturn(aResponse().withStatus(500)));
        Map<String, String> env = env(greenMail.getSmtp().getPort());
        env.put("MAILROOM_TRANSPORT", "http,smtp");
        try (DispatcherService service = DispatcherService.start(ServiceConfig.fromEnv(env))) {
            enqueue("acct-503");
            enqueue("acct-500");
            await().atMost(Duration.ofSeconds(30)).until(() -> "done".equals(status("acct-503")));
            assertThat(greenMail.getReceivedMessages()).singleElement()
                    .satisfies(m -> assertThat(m.getHeader("Message-ID")[0]).contains("acct-503"));
            assertThat(text("SELECT detail->>'transport' FROM outbox_attempt WHERE idempotency_key = 'acct-503' AND outcome = 'done'"))
                    .isEqualTo("smtp");

            // 500 may come after the provider took it: it stays with HTTP (its key makes that retry safe), never SMTP
            await().atMost(Duration.ofSeconds(30)).until(() -> text("SELECT count(*) FROM outbox_attempt"
                    + " WHERE idempotency_key = 'acct-500'").equals("1"));
            assertThat(text("SELECT detail->>'code' FROM outbox_attempt WHERE idempotency_key = 'acct-500'")).isEqualTo("http-500");
            assertThat(text("SELECT error FROM outbox_attempt WHERE idempotency_key = 'acct-500'")).doesNotContain("failing over");
            assertThat(greenMail.getReceivedMessages()).hasSize(1);
        }
    }

    @Test
    void aTimeoutAfterTheDataNeverFailsOverAndGoesToReview() throws Exception {
        try (FaultySmtpServer silent = new FaultySmtpServer(FaultySmtpServer.Mode.SILENT_AFTER_DATA);
             DispatcherService service = DispatcherService.start(ServiceConfig.fromEnv(env(silent.port())))) {
            enqueue("acct-2");
            await().atMost(Duration.ofSeconds(30)).until(() -> "review".equals(status("acct-2")));

            assertThat(silent.messagesReceived).hasValue(1);
            assertThat(provider.findAll(anyRequestedFor(anyUrl()))).isEmpty();
            assertThat(text("SELECT state FROM idempotency_record WHERE effect_key = 'acct-2'"))
                    .isEqualTo("ambiguous");
            // and it stays there: nothing more is sent by either provider
            await().during(Duration.ofSeconds(2)).atMost(Duration.ofSeconds(3)).until(() -> "review".equals(status("acct-2")));
            assertThat(provider.findAll(anyRequestedFor(anyUrl()))).isEmpty();
            assertThat(silent.messagesReceived).hasValue(1);
        }
    }

    @Test
    void aDispatcherStoppedBetweenTheTwoProvidersLeavesAnEmailTheNextOneSendsExactlyOnce() throws Exception {
        try (FaultySmtpServer refusing = new FaultySmtpServer(FaultySmtpServer.Mode.REFUSE_SESSION)) {
            AtomicReference<DispatcherService> first = new AtomicReference<>();
            AtomicReference<Thread> stopping = new AtomicReference<>();
            List<String> failedOver = new CopyOnWriteArrayList<>();
            // the moment SMTP proved it took nothing, before its refusal is recorded: the dispatcher stops
            // claiming (as a killed one would), and what it holds is written and nothing else is sent
            DispatcherService a = DispatcherService.start(ServiceConfig.fromEnv(env(refusing.port())), DispatcherListener.NONE,
                    (key, from, why, to) -> {
                        failedOver.add(key + ": " + from + " -> " + to);
                        Thread t = new Thread(() -> first.get().dispatcher().stop(), "stop-between-providers");
                        stopping.set(t);
                        t.start();
                        // wait until the stop is past "claim nothing more" (it then waits for this handler)
                        await().atMost(Duration.ofSeconds(5)).until(() -> t.getState() == Thread.State.TIMED_WAITING
                                || t.getState() == Thread.State.TERMINATED);
                    });
            first.set(a);
            try (a) {
                enqueue("acct-3");
                await().atMost(Duration.ofSeconds(30)).until(() -> !a.dispatcher().isRunning());
                stopping.get().join(10_000);
            }
            assertThat(failedOver).containsExactly("acct-3: smtp -> http");
            assertThat(status("acct-3")).isEqualTo("pending");
            assertThat(provider.findAll(anyRequestedFor(anyUrl()))).isEmpty();
            assertThat(text("SELECT outcome FROM outbox_attempt WHERE idempotency_key = 'acct-3'"))
                    .isEqualTo("retry");
            int sessionsBefore = refusing.sessions.get();
            assertThat(sessionsBefore).isPositive();

            // the next dispatcher (which knows nothing of the first's memory) asks SMTP again, is refused again, sends by HTTP
            try (DispatcherService b = DispatcherService.start(ServiceConfig.fromEnv(env(refusing.port())))) {
                await().atMost(Duration.ofSeconds(30)).until(() -> "done".equals(status("acct-3")));
                await().during(Duration.ofSeconds(1)).atMost(Duration.ofSeconds(2)).until(() -> "done".equals(status("acct-3")));
            }
            List<LoggedRequest> calls = provider.findAll(postRequestedFor(urlEqualTo("/v1/emails")));
            assertThat(calls).hasSize(1);
            assertThat(calls.getFirst().getHeader("Idempotency-Key")).isEqualTo("acct-3");
            assertThat(refusing.sessions.get()).isGreaterThan(sessionsBefore);
            assertThat(text("SELECT result_ref FROM idempotency_record WHERE effect_key = 'acct-3'"))
                    .isEqualTo("prov-1");
        }
    }
}
