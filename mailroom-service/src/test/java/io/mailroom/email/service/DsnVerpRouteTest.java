package io.mailroom.email.service;

import com.icegreen.greenmail.junit5.GreenMailExtension;
import com.icegreen.greenmail.util.ServerSetupTest;
import io.mailroom.email.api.EmailOutbox;
import io.mailroom.email.api.OutgoingEmail;
import io.mailroom.email.transport.smtp.Verp;
import io.mailroom.outbox.OutboxEnqueuer;
import io.mailroom.testing.PostgresExtension;
import jakarta.mail.internet.MimeMessage;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import java.net.URI;
import java.net.URLEncoder;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Arrays;
import java.util.Map;

import static io.mailroom.db.jooq.Tables.DELIVERY_EVENT;
import static io.mailroom.db.jooq.Tables.OUTBOX_EFFECT;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * VERP through the running service: an email goes out over SMTP with the key in its MAIL FROM, and
 * the bounce a mail server posts to {@code /webhooks/dsn} finds it through that address alone,
 * although the report returned neither the message nor its headers.
 */
class DsnVerpRouteTest {

    @RegisterExtension
    static final PostgresExtension pg = new PostgresExtension();

    @RegisterExtension
    static final GreenMailExtension greenMail = new GreenMailExtension(ServerSetupTest.SMTP.dynamicPort());

    static final String TEMPLATE = "bounces+{key}@shop.example";
    static final String DSN_TOKEN = "dsn-token-0123456789abcdefghij";

    private static String sendAndWait(String key, String to) {
        return ServiceEnv.sendShippedAndWait(pg.dsl(), key, to);
    }

    private static String bounce(String ownId, String to, String failed) {
        return "MIME-Version: 1.0\r\nMessage-ID: " + ownId + "\r\nTo: " + to + "\r\n"
                + "Content-Type: multipart/report; report-type=delivery-status; boundary=b\r\n\r\n"
                + "--b\r\nContent-Type: message/delivery-status\r\n\r\nReporting-MTA: dns; mx.example\r\n\r\n"
                + "Final-Recipient: rfc822; " + failed + "\r\nAction: failed\r\nStatus: 5.1.1\r\n"
                + "Diagnostic-Code: smtp; 550 5.1.1 no such user\r\n\r\n--b--\r\n";
    }

    private static String state(String key) {
        return pg.dsl().select(io.mailroom.db.jooq.Tables.DELIVERY_STATE.STATE).from(io.mailroom.db.jooq.Tables.DELIVERY_STATE)
                .where(io.mailroom.db.jooq.Tables.DELIVERY_STATE.IDEMPOTENCY_KEY.eq(key)).fetchOne(io.mailroom.db.jooq.Tables.DELIVERY_STATE.STATE);
    }

    @Test
    void mailFromCarriesTheKey_andTheBounceToThatAddressFindsTheEmail() throws Exception {
        Map<String, String> env = ServiceEnv.smtp(pg.database().jdbcUrlWithCredentials(), greenMail.getSmtp().getPort());
        env.put("MAILROOM_MIGRATE", "true");
        env.put("MAILROOM_SMTP_VERP", TEMPLATE);
        env.put("MAILROOM_WEBHOOKS", "on");
        env.put("MAILROOM_WEBHOOKS_HOST", "127.0.0.1");
        env.put("MAILROOM_WEBHOOKS_PORT", "0");
        env.put("MAILROOM_DSN_TOKEN", DSN_TOKEN);
        Verp verp = Verp.parse(TEMPLATE);
        HttpClient http = HttpClient.newHttpClient();

        try (DispatcherService service = DispatcherService.start(ServiceConfig.fromEnv(env))) {
            String viaQuery = sendAndWait("email-order-701", "ann@customer.example");
            String viaHeader = sendAndWait("email-order-702", "bo@customer.example");

            MimeMessage[] received = greenMail.getReceivedMessages();
            assertThat(Arrays.stream(received).map(m -> header(m, "Return-Path")))
                    .containsExactlyInAnyOrder("<" + verp.addressFor(viaQuery) + ">", "<" + verp.addressFor(viaHeader) + ">");

            String url = "http://127.0.0.1:" + service.webhookPort() + "/webhooks/dsn";
            HttpResponse<String> byQuery = http.send(HttpRequest.newBuilder(URI.create(url + "?recipient="
                                    + URLEncoder.encode(verp.addressFor(viaQuery), StandardCharsets.UTF_8)))
                            .header("Authorization", "Bearer " + DSN_TOKEN)
                            .POST(HttpRequest.BodyPublishers.ofString(bounce("<verp-route-1@mx.example>", "bounces@shop.example", "ann@customer.example")))
                            .build(), HttpResponse.BodyHandlers.ofString());
            assertThat(byQuery.statusCode()).as(byQuery.body()).isEqualTo(200);
            assertThat(byQuery.body()).contains("\"matched\":1").contains("\"orphans\":0");
            assertThat(state(viaQuery)).isEqualTo("bounced");

            HttpResponse<String> byHeader = http.send(HttpRequest.newBuilder(URI.create(url))
                            .header("Authorization", "Bearer " + DSN_TOKEN)
                            .POST(HttpRequest.BodyPublishers.ofString(bounce("<verp-route-2@mx.example>", verp.addressFor(viaHeader), "bo@customer.example")))
                            .build(), HttpResponse.BodyHandlers.ofString());
            assertThat(byHeader.statusCode()).as(byHeader.body()).isEqualTo(200);
            assertThat(byHeader.body()).contains("\"matched\":1");
            assertThat(state(viaHeader)).isEqualTo("bounced");
            assertThat(pg.dsl().select(DELIVERY_EVENT.IDEMPOTENCY_KEY).from(DELIVERY_EVENT)
                    .where(DELIVERY_EVENT.DELIVERY_ID.eq("<verp-route-2@mx.example>")).fetchOne(DELIVERY_EVENT.IDEMPOTENCY_KEY))
                    .isEqualTo(viaHeader);
        }
    }

    private static String header(MimeMessage m, String name) {
        try {
            return m.getHeader(name)[0];
        } catch (jakarta.mail.MessagingException e) {
            throw new IllegalStateException(e);
        }
    }
}
