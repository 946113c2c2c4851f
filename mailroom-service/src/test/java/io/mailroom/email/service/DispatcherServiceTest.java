package io.mailroom.email.service;

import com.icegreen.greenmail.junit5.GreenMailExtension;
import com.icegreen.greenmail.util.ServerSetupTest;
import io.mailroom.email.resilience.BreakerReport;
import io.mailroom.email.resilience.TransportPolicyConfig;
import io.mailroom.outbox.InvalidSettingException;
import io.mailroom.outbox.NewMessage;
import io.mailroom.outbox.OutboxEnqueuer;
import io.mailroom.outbox.admin.Dispatchers;
import io.mailroom.testing.PostgresExtension;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import java.net.ConnectException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

/** The runnable service: configuration from the environment, health endpoints, sending, graceful stop. */
class DispatcherServiceTest {

    @RegisterExtension
    static final PostgresExtension pg = new PostgresExtension();

    @RegisterExtension
    static final GreenMailExtension greenMail = new GreenMailExtension(ServerSetupTest.SMTP.dynamicPort());

    private final HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(2)).build();

    private Map<String, String> env() {
        Map<String, String> env = ServiceEnv.smtp(pg.database().jdbcUrlWithCredentials(), greenMail.getSmtp().getPort());
        env.put("MAILROOM_MIGRATE", "true");
        env.put("MAILROOM_TRANSPORT", "smtp");
        env.put("MAILROOM_DB_PASSWORD", "db-s3cret-value");
        return env;
    }

    private HttpResponse<String> get(int port, String path) throws Exception {
        return http.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + path)).GET().build(),
                HttpResponse.BodyHandlers.ofString());
    }

    @Test
    void theSocketTimeoutFollowsAShortLeaseWhenUnset_andAnExplicitOneMustFitIt() {
        // the chaos and partition runs use 12 s and 8 s leases: the 30 s default must not refuse them
        Map<String, String> env = env();
        assertThat(ServiceConfig.fromEnv(env).db().timeouts().socket()).isEqualTo(java.time.Duration.ofSeconds(30));
        env.put("MAILROOM_LEASE", "12s");
        assertThat(ServiceConfig.fromEnv(env).db().timeouts().socket()).isEqualTo(java.time.Duration.ofSeconds(11));
        env.put("MAILROOM_LEASE", "8s");
        assertThat(ServiceConfig.fromEnv(env).db().timeouts().socket()).isEqualTo(java.time.Duration.ofSeconds(4));
        env.put("MAILROOM_LEASE", "12s");
        env.put("MAILROOM_DB_SOCKET_TIMEOUT", "30s");
        assertThatThrownBy(() -> ServiceConfig.fromEnv(env)).isInstanceOf(InvalidSettingException.class)
                .hasMessageContaining("MAILROOM_DB_SOCKET_TIMEOUT (30s) must be shorter than MAILROOM_LEASE (12s)");
        env.put("MAILROOM_DB_SOCKET_TIMEOUT", "5s");
        assertThatThrownBy(() -> ServiceConfig.fromEnv(env)).isInstanceOf(InvalidSettingException.class)
                .hasMessageContaining("must be longer than the statement timeout");
    }

    @Test
    void configurationIsValidatedNamingTheVariableAndPrintedWithSecretsMasked() {
        Map<String, String> env = env();
        env.put("MAILROOM_SMTP_USERNAME", "shop");
        env.put("MAILROOM_SMTP_PASSWORD", "smtp-s3cret-value");
        String printed = ServiceConfig.fromEnv(env).toString();
        assertThat(printed).doesNotContain("smtp-s3cret-value").doesNotContain("db-s3cret-value").contains("transport=smtp");

        Map<String, String> noUrl = env();
        noUrl.remove("MAILROOM_DB_URL");
        assertThatThrownBy(() -> ServiceConfig.fromEnv(noUrl)).isInstanceOf(InvalidSettingException.class)
                .hasMessageContaining("MAILROOM_DB_URL");
        Map<String, String> badTransport = env();
        badTransport.put("MAILROOM_TRANSPORT", "pigeon");
        assertThatThrownBy(() -> ServiceConfig.fromEnv(badTransport)).hasMessageContaining("MAILROOM_TRANSPORT");
        Map<String, String> badBatch = env();
        badBatch.put("MAILROOM_BATCH_SIZE", "0");
        assertThatThrownBy(() -> ServiceConfig.fromEnv(badBatch)).hasMessageContaining("batchSize");
        Map<String, String> badPolicy = env();
        badPolicy.put("MAILROOM_SMTP_AMBIGUOUS", "maybe");
        assertThatThrownBy(() -> ServiceConfig.fromEnv(badPolicy)).hasMessageContaining("MAILROOM_SMTP_AMBIGUOUS");
        Map<String, String> resends = env();
        resends.put("MAILROOM_SMTP_AMBIGUOUS", "resend");
        assertThat(ServiceConfig.fromEnv(resends).ambiguity().maxResends()).isEqualTo(1);
        resends.put("MAILROOM_SMTP_AMBIGUOUS_RESENDS", "3");
        assertThat(ServiceConfig.fromEnv(resends).ambiguity().maxResends()).isEqualTo(3);
        resends.put("MAILROOM_SMTP_AMBIGUOUS_RESENDS", "lots");
        assertThatThrownBy(() -> ServiceConfig.fromEnv(resends)).isInstanceOf(InvalidSettingException.class)
                .hasMessageContaining("MAILROOM_SMTP_AMBIGUOUS_RESENDS");
        resends.put("MAILROOM_SMTP_AMBIGUOUS_RESENDS", "0");
        assertThatThrownBy(() -> ServiceConfig.fromEnv(resends)).isInstanceOf(InvalidSettingException.class)
                .hasMessageContaining("MAILROOM_SMTP_AMBIGUOUS_RESENDS");
        assertThat(ServiceConfig.fromEnv(env()).dbStartupTimeout()).as("waits as long as it takes by default").isNull();
        // one SMTP connection per send under way at once: min(concurrency, bulkhead), by default the bulkhead's 16
        Map<String, String> pool = env();
        assertThat(ServiceConfig.fromEnv(pool).smtp().poolSize())
                .isEqualTo(TransportPolicyConfig.BulkheadSettings.DEFAULT_MAX_CONCURRENT).isEqualTo(16);
        Map<String, String> httpPool = env();
        httpPool.put("MAILROOM_TRANSPORT", "http");
        httpPool.put("MAILROOM_HTTP_BASE_URL", "https://api.mail.example");
        httpPool.put("MAILROOM_HTTP_TOKEN", "t");
        assertThat(ServiceConfig.fromEnv(httpPool).http().poolSize()).as("HTTP too: one connection per send under way, not per handler")
                .isEqualTo(16);
        httpPool.put("MAILROOM_CONCURRENCY", "12");
        assertThat(ServiceConfig.fromEnv(httpPool).http().poolSize()).isEqualTo(12);
        httpPool.put("MAILROOM_CONCURRENCY", "64");
        httpPool.put("MAILROOM_BULKHEAD_MAX_CONCURRENT", "40");
        assertThat(ServiceConfig.fromEnv(httpPool).http().poolSize()).isEqualTo(40);
        pool.put("MAILROOM_CONCURRENCY", "12");
        assertThat(ServiceConfig.fromEnv(pool).smtp().poolSize()).isEqualTo(12);
        pool.put("MAILROOM_CONCURRENCY", "200");
        assertThat(ServiceConfig.fromEnv(pool).smtp().poolSize()).isEqualTo(16);
        pool.put("MAILROOM_BULKHEAD_MAX_CONCURRENT", "40");
        assertThat(ServiceConfig.fromEnv(pool).smtp().poolSize()).isEqualTo(40);
        pool.put("MAILROOM_SMTP_POOL_SIZE", "40");
        assertThat(ServiceConfig.fromEnv(pool).smtp().poolSize()).isEqualTo(40);
        pool.put("MAILROOM_SMTP_POOL_SIZE", "3");
        pool.put("MAILROOM_BULKHEAD_MAX_CONCURRENT", "3");
        assertThat(ServiceConfig.fromEnv(pool).smtp().poolSize()).as("a relay that allows 3 connections").isEqualTo(3);
        pool.put("MAILROOM_BULKHEAD_MAX_CONCURRENT", "16");
        assertThatThrownBy(() -> ServiceConfig.fromEnv(pool)).as("a pool smaller than the bulkhead")
                .isInstanceOf(InvalidSettingException.class).hasMessageContaining("MAILROOM_SMTP_POOL_SIZE (3) is smaller")
                .hasMessageContaining("MAILROOM_BULKHEAD_MAX_CONCURRENT to at most 3");
        pool.put("MAILROOM_SMTP_POOL_SIZE", "32");
        assertThatThrownBy(() -> ServiceConfig.fromEnv(pool)).as("a pool larger than the bulkhead: 16 of 32 used")
                .isInstanceOf(InvalidSettingException.class).hasMessageContaining("only 16 connections would ever be used");
        pool.remove("MAILROOM_SMTP_POOL_SIZE");
        pool.put("MAILROOM_BULKHEAD_MAX_CONCURRENT", "100");
        assertThatThrownBy(() -> ServiceConfig.fromEnv(pool)).as("a bulkhead beyond the pool's maximum of 64")
                .isInstanceOfSatisfying(InvalidSettingException.class,
                        e -> assertThat(e.setting()).isEqualTo("MAILROOM_BULKHEAD_MAX_CONCURRENT"));
        Map<String, String> startupTimeout = env();
        startupTimeout.put("MAILROOM_DB_STARTUP_TIMEOUT", "5m");
        assertThat(ServiceConfig.fromEnv(startupTimeout).dbStartupTimeout()).isEqualTo(Duration.ofMinutes(5));
        startupTimeout.put("MAILROOM_DB_STARTUP_TIMEOUT", "0");
        assertThat(ServiceConfig.fromEnv(startupTimeout).dbStartupTimeout()).isNull();
        startupTimeout.put("MAILROOM_DB_STARTUP_TIMEOUT", "500ms");
        assertThatThrownBy(() -> ServiceConfig.fromEnv(startupTimeout)).isInstanceOf(InvalidSettingException.class)
                .hasMessageContaining("MAILROOM_DB_STARTUP_TIMEOUT");
        Map<String, String> badUrl = env();
        badUrl.put("MAILROOM_DB_URL", "jdbc:mysql://x/y?password=hunter2");
        assertThatThrownBy(() -> ServiceConfig.fromEnv(badUrl)).hasMessageContaining("MAILROOM_DB_URL")
                .satisfies(e -> assertThat(e.getMessage()).doesNotContain("hunter2"));
    }

    @Test
    void theServiceAnswersHealthSendsAndStopsGracefully() throws Exception {
        int port;
        try (DispatcherService service = DispatcherService.start(ServiceConfig.fromEnv(env()))) {
            port = service.port();
            assertThat(get(port, "/health/live").statusCode()).isEqualTo(200);
            HttpResponse<String> ready = get(port, "/health/ready");
            assertThat(ready.statusCode()).isEqualTo(200);
            assertThat(ready.body()).contains("\"database\":\"UP\"").contains("\"breaker\":\"CLOSED\"");
            // its row in the dispatcher registry says what it serves and how its transport's breaker stands
            String workerId = service.dispatcher().config().workerId();
            await().atMost(Duration.ofSeconds(10)).untilAsserted(() -> assertThat(Dispatchers.list(pg.dsl()).dispatchers())
                    .filteredOn(d -> d.workerId().equals(workerId)).singleElement().satisfies(d -> {
                        assertThat(d.live()).isTrue();
                        assertThat(d.incarnation()).isEqualTo(service.dispatcher().incarnation());
                        assertThat(d.topics()).contains(ServiceEnv.TOPIC);
                        assertThat(BreakerReport.parse(d.details())).containsExactly(new BreakerReport.State("smtp", "closed"));
                    }));

            pg.dsl().transaction(cfg -> new OutboxEnqueuer().enqueue(cfg.dsl(), NewMessage.of(ServiceEnv.TOPIC,
                    "order", "77", "email-order-77", ServiceEnv.receipt(77, "dora@example.com", "Dora"))));
            await().atMost(Duration.ofSeconds(20)).until(() -> greenMail.getReceivedMessages().length == 1);
            await().atMost(Duration.ofSeconds(10)).until(() -> "done".equals(pg.dsl()
                    .fetchSingle("SELECT status FROM outbox_message WHERE idempotency_key = 'email-order-77'").get(0, String.class)));
            // partitions for the coming days were ensured at start
            assertThat(pg.dsl().fetchSingle("SELECT count(*) FROM pg_class WHERE relname LIKE 'outbox_message_p%'"
                    + " AND relname >= 'outbox_message_p' || to_char(now() AT TIME ZONE 'UTC' + interval '6 days', 'YYYYMMDD')")
                    .get(0, Integer.class)).isGreaterThanOrEqualTo(1);
        }
        assertThatThrownBy(() -> get(port, "/health/live")).isInstanceOf(ConnectException.class);
        assertThat(Dispatchers.list(pg.dsl()).dispatchers()).as("a graceful stop leaves the registry").isEmpty();
    }
}
