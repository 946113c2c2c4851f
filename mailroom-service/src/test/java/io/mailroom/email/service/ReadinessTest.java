package io.mailroom.email.service;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.icegreen.greenmail.configuration.GreenMailConfiguration;
import com.icegreen.greenmail.junit5.GreenMailExtension;
import com.icegreen.greenmail.util.ServerSetupTest;
import io.mailroom.outbox.NewMessage;
import io.mailroom.outbox.OutboxEnqueuer;
import io.mailroom.testing.PostgresExtension;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/** What {@code /health/ready} says when the dispatcher runs but cannot send. */
class ReadinessTest {

    @RegisterExtension
    static final PostgresExtension pg = new PostgresExtension();

    @RegisterExtension
    static final GreenMailExtension greenMail = new GreenMailExtension(ServerSetupTest.SMTP.dynamicPort())
            .withConfiguration(GreenMailConfiguration.aConfig().withUser("shop@example.com", "shop", "s3cret"));

    private final HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(2)).build();

    @Test
    void aTransportHaltedByRefusedCredentialsMakesTheDispatcherNotReadyAndSaysWhyWhileItStaysLive() throws Exception {
        Map<String, String> env = ServiceEnv.smtp(pg.database().jdbcUrlWithCredentials(), greenMail.getSmtp().getPort());
        env.put("MAILROOM_SMTP_USERNAME", "shop");
        env.put("MAILROOM_SMTP_PASSWORD", "not-the-password");
        try (DispatcherService service = DispatcherService.start(ServiceConfig.fromEnv(env))) {
            assertThat(get(service.port(), "/health/ready").statusCode()).as("ready before the first send").isEqualTo(200);

            pg.dsl().transaction(cfg -> new OutboxEnqueuer().enqueue(cfg.dsl(), NewMessage.of(ServiceEnv.TOPIC,
                    "order", "535", "email-order-535", ServiceEnv.receipt(535, "eve@example.com", "Eve"))));
            await().atMost(Duration.ofSeconds(20)).until(() -> service.transport().halted().isPresent());

            HttpResponse<String> ready = get(service.port(), "/health/ready");
            JsonNode body = new ObjectMapper().readTree(ready.body());
            assertThat(ready.statusCode()).as(ready.body()).isEqualTo(503);
            assertThat(body.path("status").asText()).isEqualTo("DOWN");
            assertThat(body.path("database").asText()).isEqualTo("UP");
            assertThat(body.path("dispatcher").asText()).isEqualTo("RUNNING");
            assertThat(body.path("cannotSend").asText()).contains("halted").contains("smtp-535");
            assertThat(ready.body()).doesNotContain("not-the-password");
            assertThat(get(service.port(), "/health/live").statusCode()).isEqualTo(200);
            assertThat(greenMail.getReceivedMessages()).isEmpty();
        }
    }

    @Test
    void theHealthServerSaysConnectionCloseOnTheRequestsJettyRefusesItself() throws Exception {
        Map<String, String> env = ServiceEnv.smtp(pg.database().jdbcUrlWithCredentials(), greenMail.getSmtp().getPort());
        try (DispatcherService service = DispatcherService.start(ServiceConfig.fromEnv(env));
             java.net.Socket socket = new java.net.Socket("127.0.0.1", service.port())) {
            socket.setSoTimeout(5_000);
            socket.getOutputStream().write("GET /health/%00 HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n"
                    .getBytes(java.nio.charset.StandardCharsets.US_ASCII));
            String response = new String(socket.getInputStream().readAllBytes(), java.nio.charset.StandardCharsets.ISO_8859_1);

            assertThat(response.toLowerCase(java.util.Locale.ROOT)).startsWith("http/1.1 400").contains("\r\nconnection: close\r\n");
        }
    }

    private HttpResponse<String> get(int port, String path) throws Exception {
        return http.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + path)).GET().build(),
                HttpResponse.BodyHandlers.ofString());
    }
}
