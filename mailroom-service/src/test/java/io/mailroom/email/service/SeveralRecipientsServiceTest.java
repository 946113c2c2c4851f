package io.mailroom.email.service;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.github.tomakehurst.wiremock.WireMockServer;
import com.github.tomakehurst.wiremock.core.WireMockConfiguration;
import com.icegreen.greenmail.junit5.GreenMailExtension;
import com.icegreen.greenmail.util.ServerSetupTest;
import io.mailroom.delivery.suppression.SuppressionConfig;
import io.mailroom.delivery.suppression.SuppressionList;
import io.mailroom.delivery.webhook.WebhookSecrets;
import io.mailroom.delivery.webhook.WebhookVerifier;
import io.mailroom.email.api.EmailOutbox;
import io.mailroom.email.api.OutgoingEmail;
import io.mailroom.outbox.OutboxEnqueuer;
import io.mailroom.testing.PostgresExtension;
import jakarta.mail.Message;
import jakarta.mail.internet.InternetAddress;
import jakarta.mail.internet.MimeMessage;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.function.UnaryOperator;

import static com.github.tomakehurst.wiremock.client.WireMock.aResponse;
import static com.github.tomakehurst.wiremock.client.WireMock.post;
import static com.github.tomakehurst.wiremock.client.WireMock.urlEqualTo;
import static io.mailroom.db.jooq.Tables.AUDIT_LOG;
import static io.mailroom.db.jooq.Tables.DELIVERY_EVENT;
import static io.mailroom.db.jooq.Tables.DELIVERY_RECIPIENT_STATE;
import static io.mailroom.db.jooq.Tables.OUTBOX_EFFECT;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * Several recipients and tags through the real dispatcher service: a suppressed Cc is left out
 * (GreenMail receives the To and the Bcc, not the Cc, and no copy names the Bcc), with a line in the
 * email's history; over HTTP the provider gets to, cc and the tags, and a signed delivery event that
 * echoes them is matched by the key tag, kept per recipient with its tags, and counted under the
 * allow-listed tag label only.
 */
class SeveralRecipientsServiceTest {

    @RegisterExtension
    static final PostgresExtension pg = new PostgresExtension();

    @RegisterExtension
    static final GreenMailExtension greenMail = new GreenMailExtension(ServerSetupTest.SMTP.dynamicPort());

    static final String RESEND_SECRET = "whsec_" + java.util.Base64.getEncoder().encodeToString("resend-secret-0123456789!".getBytes());

    private static void enqueue(String key, String to, UnaryOperator<OutgoingEmail.Builder> more) {
        pg.dsl().transaction(c -> new EmailOutbox(new OutboxEnqueuer()).enqueue(c.dsl(), more.apply(
                OutgoingEmail.template("welcome").to(to, "Ann").about("account", key).idempotencyKey(key)
                        .data(Map.of("customer", Map.of("name", "Ann")))).build()));
    }

    private static String awaitEnded(String key) {
        await().atMost(Duration.ofSeconds(20)).until(() -> List.of("done", "failed").contains(pg.dsl().select(OUTBOX_EFFECT.STATUS)
                .from(OUTBOX_EFFECT).where(OUTBOX_EFFECT.IDEMPOTENCY_KEY.eq(key)).fetchOne(OUTBOX_EFFECT.STATUS)));
        return pg.dsl().select(OUTBOX_EFFECT.STATUS).from(OUTBOX_EFFECT).where(OUTBOX_EFFECT.IDEMPOTENCY_KEY.eq(key))
                .fetchOne(OUTBOX_EFFECT.STATUS);
    }

    @Test
    void aSuppressedCcIsLeftOutWithAHistoryLine_theToAndTheBccGetTheMail_noHeaderNamesTheBcc() throws Exception {
        Map<String, String> env = ServiceEnv.smtp(pg.database().jdbcUrlWithCredentials(), greenMail.getSmtp().getPort());
        env.put("MAILROOM_MIGRATE", "true");
        try (DispatcherService service = DispatcherService.start(ServiceConfig.fromEnv(env))) {
            pg.dsl().transaction(c -> new SuppressionList(SuppressionConfig.defaults(), null)
                    .add(c.dsl(), "billing@corp.example", "asked by phone", "alice", "support"));

            enqueue("email-cc-suppressed", "ann@example.com", b -> b.cc("billing@corp.example", "Billing").bcc("audit@shop.example", null)
                    .tag("category", "welcome"));

            assertThat(awaitEnded("email-cc-suppressed")).isEqualTo("done");
            MimeMessage[] received = greenMail.getReceivedMessages();
            assertThat(received).as("the To and the Bcc, one copy each").hasSize(2);
            assertThat(greenMail.getUserManager().getUserByEmail("ann@example.com")).isNotNull();
            assertThat(greenMail.getUserManager().getUserByEmail("audit@shop.example")).isNotNull();
            assertThat(greenMail.getUserManager().getUserByEmail("billing@corp.example")).as("the suppressed Cc got nothing").isNull();
            for (MimeMessage m : received) {
                assertThat(m.getHeader("Bcc")).isNull();
                assertThat(m.getHeader("Cc")).as("the Cc left out is not named either").isNull();
                assertThat(Arrays.stream(m.getRecipients(Message.RecipientType.TO)).map(a -> ((InternetAddress) a).getAddress()))
                        .containsExactly("ann@example.com");
                assertThat(m.getHeader("X-Mailroom-Tag")).containsExactly("category=welcome");
            }
            var line = pg.dsl().selectFrom(AUDIT_LOG).where(AUDIT_LOG.IDEMPOTENCY_KEY.eq("email-cc-suppressed")).fetchSingle();
            assertThat(line.getAction()).isEqualTo("recipient_suppressed");
            assertThat(line.getReason()).contains("cc b***@corp.example suppressed (added by hand");

            // every To suppressed: not sent, even with a Cc left
            pg.dsl().transaction(c -> new SuppressionList(SuppressionConfig.defaults(), null)
                    .add(c.dsl(), "ann@example.com", "asked by phone", "alice", "support"));
            enqueue("email-to-suppressed", "ann@example.com", b -> b.cc("carl@corp.example", null));
            assertThat(awaitEnded("email-to-suppressed")).isEqualTo("failed");
            assertThat(greenMail.getReceivedMessages()).hasSize(2);
        }
    }

    @Test
    void tagsGoToTheProvider_comeBackOnASignedEvent_andAreMatchedPerRecipient() throws Exception {
        WireMockServer provider = new WireMockServer(WireMockConfiguration.options().dynamicPort().bindAddress("127.0.0.1"));
        provider.start();
        provider.stubFor(post(urlEqualTo("/v1/emails")).willReturn(aResponse().withStatus(200)
                .withHeader("Content-Type", "application/json").withBody("{\"id\":\"re_tagged\"}")));
        Map<String, String> env = ServiceEnv.httpWithWebhooks(pg.database().jdbcUrlWithCredentials(), provider.baseUrl(),
                "resend:" + RESEND_SECRET);
        env.put("MAILROOM_METRIC_TAGS", "category=invoice|receipt");
        try (DispatcherService service = DispatcherService.start(ServiceConfig.fromEnv(env))) {
            String key = "email-tagged-7";
            enqueue(key, "dora@example.com", b -> b.cc("bo@example.com", null).tag("category", "invoice").tag("plan", "pro"));
            assertThat(awaitEnded(key)).isEqualTo("done");

            JsonNode sent = new ObjectMapper().readTree(provider.getAllServeEvents().getFirst().getRequest().getBodyAsString());
            assertThat(sent.get("cc").get(0).get("email").asText()).isEqualTo("bo@example.com");
            assertThat(sent.get("tags").toString()).isEqualTo("[{\"name\":\"idempotency_key\",\"value\":\"" + key + "\"},"
                    + "{\"name\":\"category\",\"value\":\"invoice\"},{\"name\":\"plan\",\"value\":\"pro\"}]");

            // Resend's event for the Cc: no email_id, the key only in the tags it echoes
            String event = """
                    {"type":"email.delivered","created_at":"2026-12-05T10:00:00Z","data":{"to":["bo@example.com"],
                     "tags":[{"name":"idempotency_key","value":"%s"},{"name":"category","value":"invoice"},{"name":"plan","value":"pro"}]}}"""
                    .formatted(key);
            byte[] body = event.getBytes(StandardCharsets.UTF_8);
            HttpRequest.Builder request = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + service.webhookPort() + "/webhooks/resend"))
                    .POST(HttpRequest.BodyPublishers.ofByteArray(body)).header("Content-Type", "application/json");
            WebhookVerifier.headers(WebhookSecrets.of("t", List.of(RESEND_SECRET)), "msg_tagged", Instant.now().getEpochSecond(), body)
                    .forEach(request::header);
            HttpResponse<String> answer = HttpClient.newHttpClient().send(request.build(), HttpResponse.BodyHandlers.ofString());
            assertThat(answer.statusCode()).as(answer.body()).isEqualTo(200);
            assertThat(answer.body()).contains("\"matched\":1");

            var stored = pg.dsl().selectFrom(DELIVERY_EVENT).where(DELIVERY_EVENT.DELIVERY_ID.eq("msg_tagged")).fetchSingle();
            assertThat(stored.getIdempotencyKey()).isEqualTo(key);
            assertThat(stored.getRecipient()).isEqualTo("bo@example.com");
            assertThat(new ObjectMapper().readTree(stored.getTags().data()))
                    .isEqualTo(new ObjectMapper().readTree("{\"category\":\"invoice\",\"plan\":\"pro\"}"));
            assertThat(pg.dsl().select(DELIVERY_RECIPIENT_STATE.ADDRESS, DELIVERY_RECIPIENT_STATE.STATE).from(DELIVERY_RECIPIENT_STATE)
                    .where(DELIVERY_RECIPIENT_STATE.IDEMPOTENCY_KEY.eq(key)).fetch(r -> r.value1() + ":" + r.value2()))
                    .containsExactly("bo@example.com:delivered");
            String scrape = service.metrics().scrape();
            assertThat(scrape).containsPattern(
                    "mailroom_delivery_event_tagged_total\\{kind=\"delivered\",source=\"resend\",tag=\"category\",value=\"invoice\"} 1");
            assertThat(scrape).as("plan is not allow-listed: no label").doesNotContain("tag=\"plan\"");
        } finally {
            provider.stop();
        }
    }
}
