package io.mailroom.email.service;

import io.mailroom.delivery.webhook.WebhookSecrets;
import io.mailroom.delivery.webhook.WebhookVerifier;
import io.mailroom.testing.FaultyForwarder;
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
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicInteger;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * The dispatcher service behind a network path that drops everything without closing (a NAT or
 * firewall that lost its state) for {@link #BLACKHOLE}: every session open then is dead for good,
 * and the sessions in use hang in a read. With pgjdbc's socket timeout (and the pool's validation
 * and keepalive) they are given up and replaced, so webhooks and readiness work again within
 * seconds of the network coming back; without, they waited for TCP keepalive (about two hours).
 */
class DatabaseBlackholeTest {

    @RegisterExtension
    static final PostgresExtension pg = new PostgresExtension();

    /** As long as the test: a network away this long; the duration is the test's parameter. */
    static final Duration BLACKHOLE = Duration.ofSeconds(30);
    /** Shorter than the default (30 s) to keep the test short; the statement timeout (10 s) stays below it. */
    static final Duration SOCKET_TIMEOUT = Duration.ofSeconds(12);
    /** A read started just before the network came back gives up after the socket timeout, then a new session is made. */
    static final Duration RECOVERY_BOUND = SOCKET_TIMEOUT.plusSeconds(8);

    private static final String SECRET = "whsec_" + java.util.Base64.getEncoder()
            .encodeToString("blackhole-secret-0123456789".getBytes(StandardCharsets.UTF_8));
    private static final AtomicInteger IDS = new AtomicInteger();

    private final HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(2)).build();

    @Test
    void webhooksAndReadinessRecoverWithinSecondsAfterAThirtySecondBlackhole() throws Exception {
        URI db = URI.create(pg.jdbcUrl().substring("jdbc:".length()));
        try (FaultyForwarder network = FaultyForwarder.to(db.getHost(), db.getPort() < 0 ? 5432 : db.getPort(),
                FaultyForwarder.Mode.RELAY)) {
            Map<String, String> env = ServiceEnv.httpWithWebhooks(network.jdbcUrl(pg.database().jdbcUrlWithCredentials()),
                    "http://127.0.0.1:9", "neutral:" + SECRET);
            env.put("MAILROOM_DB_SOCKET_TIMEOUT", SOCKET_TIMEOUT.toSeconds() + "s");
            try (DispatcherService service = DispatcherService.start(ServiceConfig.fromEnv(env))) {
                assertThat(webhook(service).statusCode()).isEqualTo(200);
                await().atMost(Duration.ofSeconds(10)).until(() -> ready(service) == 200);

                network.mode(FaultyForwarder.Mode.BLACKHOLE);
                // requests that take the webhook pool's sessions into a read that never ends
                List<CompletableFuture<HttpResponse<String>>> stuck = new ArrayList<>();
                for (int i = 0; i < 4; i++) {
                    stuck.add(http.sendAsync(webhookRequest(service), HttpResponse.BodyHandlers.ofString()));
                }
                await().pollDelay(BLACKHOLE).atMost(BLACKHOLE.plusSeconds(5)).until(() -> true); // the network is away
                network.mode(FaultyForwarder.Mode.RELAY);
                long back = System.nanoTime();

                await().atMost(RECOVERY_BOUND).pollInterval(Duration.ofMillis(500))
                        .until(() -> webhook(service).statusCode() == 200);
                await().atMost(RECOVERY_BOUND).pollInterval(Duration.ofMillis(500)).until(() -> ready(service) == 200);
                Duration recovered = Duration.ofNanos(System.nanoTime() - back);
                System.out.println("Recovered " + recovered.toMillis() + " ms after a " + BLACKHOLE.toSeconds() + " s blackhole");
                assertThat(recovered).isLessThan(RECOVERY_BOUND);
                // the requests caught in the blackhole were answered too (503: retry later), none hangs
                for (CompletableFuture<HttpResponse<String>> r : stuck) {
                    assertThat(r).isCompleted();
                }
            }
        }
    }

    private HttpRequest webhookRequest(DispatcherService service) {
        byte[] body = ("{\"type\":\"complained\",\"message_id\":\"blackhole-" + IDS.incrementAndGet()
                + "\",\"recipient\":\"orphan@example.com\"}").getBytes(StandardCharsets.UTF_8);
        HttpRequest.Builder b = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + service.webhookPort() + "/webhooks/neutral"))
                .timeout(Duration.ofSeconds(120)).POST(HttpRequest.BodyPublishers.ofByteArray(body))
                .header("Content-Type", "application/json");
        WebhookVerifier.headers(WebhookSecrets.of("t", List.of(SECRET)), "msg_blackhole_" + IDS.get(),
                Instant.now().getEpochSecond(), body).forEach(b::header);
        return b.build();
    }

    private HttpResponse<String> webhook(DispatcherService service) throws Exception {
        return http.send(webhookRequest(service), HttpResponse.BodyHandlers.ofString());
    }

    private int ready(DispatcherService service) throws Exception {
        return http.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + service.port() + "/health/ready"))
                .timeout(Duration.ofSeconds(10)).GET().build(), HttpResponse.BodyHandlers.ofString()).statusCode();
    }
}
