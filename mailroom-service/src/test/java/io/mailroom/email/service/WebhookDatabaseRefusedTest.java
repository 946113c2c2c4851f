package io.mailroom.email.service;

import io.mailroom.delivery.webhook.WebhookSecrets;
import io.mailroom.delivery.webhook.WebhookVerifier;
import io.mailroom.testing.PostgresExtension;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A webhook that arrives while the database refuses connections answers 503 after one wait for a
 * pool session, not one in jOOQ's begin, another in its rollback and a third in its error path:
 * each such request holds one of the endpoint's in-flight slots for that long.
 */
class WebhookDatabaseRefusedTest {

    @RegisterExtension
    static final PostgresExtension pg = new PostgresExtension();

    private static final String SECRET = "whsec_" + java.util.Base64.getEncoder()
            .encodeToString("refused-secret-0123456789".getBytes(StandardCharsets.UTF_8));
    private static final Duration ACQUIRE = Duration.ofSeconds(1);

    @Test
    void aRefusingDatabaseAnswers503AfterOnePoolTimeout() throws Exception {
        try (TcpGate gate = TcpGate.inFrontOf(pg.jdbcUrl())) {
            Map<String, String> env = ServiceEnv.httpWithWebhooks(gate.jdbcUrl(pg.database().jdbcUrlWithCredentials()),
                    "http://127.0.0.1:9", "neutral:" + SECRET);
            env.put("MAILROOM_DB_ACQUIRE_TIMEOUT", ACQUIRE.toMillis() + "ms");
            try (DispatcherService service = DispatcherService.start(ServiceConfig.fromEnv(env))) {
                gate.shut();
                HttpClient http = HttpClient.newHttpClient();
                byte[] body = "{\"type\":\"bounced\",\"bounce_type\":\"hard\",\"idempotency_key\":\"k-refused\"}"
                        .getBytes(StandardCharsets.UTF_8);
                HttpRequest.Builder request = HttpRequest.newBuilder(
                                URI.create("http://127.0.0.1:" + service.webhookPort() + "/webhooks/neutral"))
                        .timeout(Duration.ofSeconds(30)).POST(HttpRequest.BodyPublishers.ofByteArray(body))
                        .header("Content-Type", "application/json");
                WebhookVerifier.headers(WebhookSecrets.of("t", List.of(SECRET)), "msg_refused",
                        Instant.now().getEpochSecond(), body).forEach(request::header);

                long started = System.nanoTime();
                HttpResponse<String> answer = http.send(request.build(), HttpResponse.BodyHandlers.ofString());
                Duration took = Duration.ofNanos(System.nanoTime() - started);

                assertThat(answer.statusCode()).isEqualTo(503);
                assertThat(answer.headers().firstValue("Retry-After")).isPresent();
                // one pool timeout (1 s) and some slack; three of them took over 3 s
                assertThat(took).isLessThan(ACQUIRE.multipliedBy(2));
            }
        }
    }
}
