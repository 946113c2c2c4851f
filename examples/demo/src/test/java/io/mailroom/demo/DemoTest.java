package io.mailroom.demo;

import io.mailroom.outbox.InvalidSettingException;
import io.mailroom.testing.PostgresExtension;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import java.net.ServerSocket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.List;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

/** The one-command demo, against a test database: sample orders become emails at the sink. */
class DemoTest {

    @RegisterExtension
    static final PostgresExtension pg = new PostgresExtension();

    @Test
    void theDemoRefusesToListenBeyondLoopback() {
        for (String variable : new String[]{"MAILROOM_ORDERS_HOST", "MAILROOM_DISPATCHER_HOST", "MAILROOM_SUPPORT_HOST"}) {
            try (Demo demo = new Demo()) {
                assertThatThrownBy(() -> demo.start(Map.of("MAILROOM_DB_URL", pg.database().jdbcUrlWithCredentials(),
                        variable, "0.0.0.0"))).as(variable).isInstanceOf(InvalidSettingException.class)
                        .hasMessageContaining(variable + "=0.0.0.0").hasMessageContaining("loopback only");
            }
        }
    }

    @Test
    void theDemoPlacesSampleOrdersAndDeliversTheirEmails() throws Exception {
        int smtpPort;
        try (ServerSocket s = new ServerSocket(0)) {
            smtpPort = s.getLocalPort();
        }
        try (Demo demo = new Demo()) {
            demo.start(Map.of("MAILROOM_DB_URL", pg.database().jdbcUrlWithCredentials(),
                    "MAILROOM_ORDERS_PORT", "0", "MAILROOM_DISPATCHER_PORT", "0", "MAILROOM_SUPPORT_PORT", "0",
                    "MAILROOM_DEMO_SMTP_PORT", String.valueOf(smtpPort), "MAILROOM_POLL_INTERVAL", "200ms"));
            assertThat(demo.orders().server().localAddress().getAddress().isLoopbackAddress()).as("orders bind").isTrue();
            assertThat(demo.dispatcher().localAddress().getAddress().isLoopbackAddress()).as("dispatcher bind").isTrue();
            demo.placeSampleOrders();
            // three confirmations, a shipping notice and a cancellation, from the three built-in templates
            await().atMost(Duration.ofSeconds(30)).until(() -> demo.smtpSink().getReceivedMessages().length == 5);
            List<String> subjects = new java.util.ArrayList<>();
            for (jakarta.mail.internet.MimeMessage m : demo.smtpSink().getReceivedMessages()) {
                subjects.add(m.getSubject());
            }
            assertThat(subjects).containsExactlyInAnyOrder("Your order #1 is confirmed", "Đơn hàng #2 của bạn đã được xác nhận",
                    "Your order #3 is confirmed", "Your order #1 is on its way", "Your order #3 has been cancelled");

            HttpClient http = HttpClient.newHttpClient();
            for (int port : new int[]{demo.orders().server().port(), demo.dispatcher().port()}) {
                HttpResponse<String> r = http.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + "/health/ready"))
                        .build(), HttpResponse.BodyHandlers.ofString());
                assertThat(r.statusCode()).as("health on %s", port).isEqualTo(200);
            }
            // the sink has the emails before the dispatcher has written their outcomes: wait for the writes
            await().atMost(Duration.ofSeconds(30)).untilAsserted(() -> {
                HttpResponse<String> emails = http.send(HttpRequest.newBuilder(URI.create(
                        "http://127.0.0.1:" + demo.dispatcher().supportPort() + "/api/orders/1/emails")).build(),
                        HttpResponse.BodyHandlers.ofString());
                assertThat(emails.statusCode()).isEqualTo(200);
                assertThat(emails.body()).contains("\"status\":\"sent\"").contains("email-order-1");
                assertThat(pg.dsl().fetchSingle("SELECT count(*) FROM mailroom.outbox_message WHERE status = 'done'")
                        .get(0, Integer.class)).isEqualTo(5);
            });
        }
    }
}
