package io.mailroom.email.service;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.github.tomakehurst.wiremock.WireMockServer;
import com.github.tomakehurst.wiremock.core.WireMockConfiguration;
import com.icegreen.greenmail.junit5.GreenMailExtension;
import com.icegreen.greenmail.util.ServerSetupTest;
import io.mailroom.email.api.EmailOutbox;
import io.mailroom.email.api.OutgoingEmail;
import io.mailroom.outbox.OutboxEnqueuer;
import io.mailroom.testing.PostgresExtension;
import jakarta.mail.Session;
import jakarta.mail.internet.MimeMessage;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import java.io.ByteArrayInputStream;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Properties;

import static com.github.tomakehurst.wiremock.client.WireMock.anyRequestedFor;
import static com.github.tomakehurst.wiremock.client.WireMock.anyUrl;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * Staging capture through the real service: every topic on {@code MAILROOM_TRANSPORT=capture}. An
 * email is rendered, reserved and recorded as a real send, support's API shows the stored message
 * (and lets support, not a viewer, download it as {@code .eml}), and no SMTP server or HTTP provider
 * hears a thing, though both are configured and listening.
 */
class CaptureTransportTest {

    @RegisterExtension
    static final PostgresExtension pg = new PostgresExtension();

    @RegisterExtension
    static final GreenMailExtension greenMail = new GreenMailExtension(ServerSetupTest.SMTP.dynamicPort());

    private static final String VIEWER = "viewer-token-0123456789abcdef";
    private static final String SUPPORT = "support-token-0123456789abcdef";

    private WireMockServer provider;
    private final HttpClient client = HttpClient.newHttpClient();

    @BeforeEach
    void provider() {
        provider = new WireMockServer(WireMockConfiguration.options().dynamicPort().bindAddress("127.0.0.1"));
        provider.start();
    }

    @AfterEach
    void stop() {
        provider.stop();
    }

    @Test
    void capturedMailIsRecordedLikeASendShownBySupportAndNothingLeavesTheProcess() throws Exception {
        Map<String, String> env = ServiceEnv.smtp(pg.database().jdbcUrlWithCredentials(), greenMail.getSmtp().getPort());
        env.put("MAILROOM_MIGRATE", "true");
        env.put("MAILROOM_TRANSPORT", "capture");
        // a topic may still name a real transport; this one names capture too, and HTTP is configured but unused
        env.put("MAILROOM_TOPICS", "shop.receipt = receipt transport=capture");
        env.put("MAILROOM_HTTP_BASE_URL", provider.baseUrl());
        env.put("MAILROOM_HTTP_TOKEN", "tok_test");
        env.put("MAILROOM_SUPPORT", "on");
        env.put("MAILROOM_SUPPORT_HOST", "127.0.0.1");
        env.put("MAILROOM_SUPPORT_PORT", "0");
        env.put("MAILROOM_SUPPORT_TOKENS", "vera:viewer:" + VIEWER + ",sam:support:" + SUPPORT);

        try (DispatcherService service = DispatcherService.start(ServiceConfig.fromEnv(env))) {
            assertThat(service.transports()).containsOnlyKeys("capture");
            EmailOutbox outbox = new EmailOutbox(new OutboxEnqueuer());
            pg.dsl().transaction(cfg -> {
                for (String key : List.of("email-order-102", "email-order-103")) {
                    outbox.enqueue(cfg.dsl(), OutgoingEmail.template("receipt").topic("shop.receipt")
                            .to("anh@example.com", "Nguyễn Thị Ánh").locale("vi").about("order", key.substring(12))
                            .idempotencyKey(key).data(Map.of("customer", Map.of("name", "Nguyễn Thị Ánh"),
                                    "order", Map.of("id", key.substring(12), "currency", "VND", "total", 90000,
                                            "createdAt", "2026-12-03T09:15:00Z",
                                            "lines", List.of(Map.of("sku", "CF-1", "name", "Cà phê", "quantity", 2, "amount", 90000)))))
                            .build());
                }
            });
            await().atMost(Duration.ofSeconds(20)).until(() -> pg.dsl().fetchCount(
                    pg.dsl().selectFrom("outbox_message").where("status = 'done'")) == 2);

            // recorded exactly as a send: idempotency record succeeded with the capture's id, rendering stored, attempt says capture
            assertThat(text("SELECT result_ref FROM idempotency_record WHERE effect_key = 'email-order-102'"))
                    .startsWith("capture:");
            assertThat(Integer.valueOf(text("SELECT count(*) FROM email_rendering"))).isEqualTo(2);
            assertThat(text("SELECT detail->>'transport' FROM outbox_attempt WHERE idempotency_key = 'email-order-102'")).isEqualTo("capture");

            String base = "http://127.0.0.1:" + service.supportPort();
            JsonNode list = json(get(base + "/api/captured", VIEWER));
            assertThat(list.get("emails")).hasSize(2);
            // newest first (both went out in one batch: the later capture has the larger id)
            assertThat(list.get("emails").get(0).get("id").asLong()).isGreaterThan(list.get("emails").get(1).get("id").asLong());
            assertThat(list.get("emails").findValuesAsText("key")).containsExactlyInAnyOrder("email-order-102", "email-order-103");
            assertThat(list.get("emails").get(0).get("recipients").asText()).isEqualTo("anh@example.com");
            assertThat(json(get(base + "/api/captured?limit=1", VIEWER)).get("nextBefore").isNull()).isFalse();

            JsonNode one = json(get(base + "/api/captured/email-order-102", VIEWER));
            assertThat(one.get("email").get("subject").asText()).contains("102");
            assertThat(one.get("text").asText()).contains("Cà phê");
            assertThat(one.get("html").asText()).contains("Cà phê");
            assertThat(one.get("headers").findValuesAsText("name")).contains("Message-ID", "From", "To", "Subject");
            assertThat(one.get("email").get("providerMessageId").asText())
                    .isEqualTo(text("SELECT result_ref FROM idempotency_record WHERE effect_key = 'email-order-102'"));

            // the email's own page says who sent it
            JsonNode email = json(get(base + "/api/emails/email-order-102", VIEWER));
            assertThat(email.get("sentBy").asText()).isEqualTo("capture");

            // the raw message is the one SMTP would write: its Message-ID is the key's, and it parses as MIME
            assertThat(get(base + "/api/captured/email-order-102/raw", VIEWER).statusCode()).isEqualTo(403);
            HttpResponse<byte[]> raw = client.send(HttpRequest.newBuilder(URI.create(base + "/api/captured/email-order-102/raw"))
                    .header("Authorization", "Bearer " + SUPPORT).build(), HttpResponse.BodyHandlers.ofByteArray());
            assertThat(raw.statusCode()).isEqualTo(200);
            assertThat(raw.headers().firstValue("Content-Type")).hasValueSatisfying(t -> assertThat(t).startsWith("message/rfc822"));
            MimeMessage parsed = new MimeMessage(Session.getInstance(new Properties()), new ByteArrayInputStream(raw.body()));
            assertThat(parsed.getMessageID()).contains("email-order-102");
            assertThat(parsed.getSubject()).contains("102");
            assertThat(get(base + "/api/captured/nope", VIEWER).statusCode()).isEqualTo(404);

            // erasing the address takes its captured mail along with the rest of the history
            HttpResponse<String> erased = client.send(HttpRequest.newBuilder(URI.create(base + "/api/erasures"))
                    .header("Authorization", "Bearer " + SUPPORT).header("Content-Type", "application/json")
                    .POST(HttpRequest.BodyPublishers.ofString("{\"address\":\"anh@example.com\",\"reason\":\"customer asked\"}"))
                    .build(), HttpResponse.BodyHandlers.ofString());
            assertThat(erased.statusCode()).as(erased.body()).isEqualTo(200);
            assertThat(get(base + "/api/captured/email-order-102", VIEWER).statusCode()).isEqualTo(404);
            assertThat(json(get(base + "/api/captured", VIEWER)).get("emails")).isEmpty();
        }

        // nothing was sent anywhere
        assertThat(greenMail.getReceivedMessages()).isEmpty();
        assertThat(provider.findAll(anyRequestedFor(anyUrl()))).isEmpty();
    }

    private HttpResponse<String> get(String url, String token) throws Exception {
        return client.send(HttpRequest.newBuilder(URI.create(url)).header("Authorization", "Bearer " + token).build(),
                HttpResponse.BodyHandlers.ofString());
    }

    private static String text(String sql, Object... binds) {
        return pg.dsl().fetchOptional(sql, binds).map(r -> r.get(0, String.class)).orElse(null);
    }

    private static JsonNode json(HttpResponse<String> r) throws Exception {
        assertThat(r.statusCode()).as(r.body()).isEqualTo(200);
        return new ObjectMapper().readTree(r.body());
    }
}
