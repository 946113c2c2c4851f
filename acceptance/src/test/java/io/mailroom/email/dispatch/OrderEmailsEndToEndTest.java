package io.mailroom.email.dispatch;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.icegreen.greenmail.junit5.GreenMailExtension;
import com.icegreen.greenmail.util.ServerSetupTest;
import io.mailroom.email.EmailAddress;
import io.mailroom.email.config.EmailTopics;
import io.mailroom.email.render.TemplatedComposer;
import io.mailroom.email.transport.smtp.SmtpConfig;
import io.mailroom.email.transport.smtp.SmtpSecurity;
import io.mailroom.email.transport.smtp.SmtpTransport;
import io.mailroom.idempotency.IdempotencyStore;
import io.mailroom.orders.HttpSettings;
import io.mailroom.orders.OrderServer;
import io.mailroom.outbox.runtime.Dispatcher;
import io.mailroom.outbox.runtime.DispatcherConfig;
import io.mailroom.outbox.runtime.MessageHandler;
import io.mailroom.templates.TemplateCatalogue;
import io.mailroom.testing.PostgresExtension;
import jakarta.mail.Part;
import jakarta.mail.internet.InternetAddress;
import jakarta.mail.internet.MimeMessage;
import jakarta.mail.internet.MimeMultipart;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * The example shop end to end, in its customers' languages: orders placed, shipped and cancelled
 * over the order service's real HTTP API, each email enqueued by it through the email API, rendered
 * from the shop's templates (examples/order-service/templates) on their default topics by the dispatcher and delivered over SMTP
 * into GreenMail, then read back as a mail client reads them (decoded headers, both MIME parts).
 *
 * <p>Moved from email-dispatcher: it needs the example shop, which no library module's tests may.
 */
class OrderEmailsEndToEndTest {

    @RegisterExtension
    static final PostgresExtension pg = new PostgresExtension();

    @RegisterExtension
    static final GreenMailExtension greenMail = new GreenMailExtension(ServerSetupTest.SMTP.dynamicPort());

    private static final ObjectMapper JSON = new ObjectMapper();
    private static final String ANH = "Nguyễn Thị Ánh";

    private OrderServer orders;
    private SmtpTransport smtp;
    private Dispatcher dispatcher;
    private final HttpClient http = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1)
            .connectTimeout(Duration.ofSeconds(5)).build();

    @BeforeEach
    void start() throws Exception {
        orders = OrderServer.start(pg.dataSource(), HttpSettings.of("127.0.0.1", 0));
        smtp = new SmtpTransport(SmtpConfig.builder().host("127.0.0.1").port(greenMail.getSmtp().getPort())
                .security(SmtpSecurity.NONE).from(EmailAddress.of("bounces@example.com"))
                .connectTimeout(Duration.ofSeconds(2)).readTimeout(Duration.ofSeconds(5)).build());
        TemplateCatalogue templates = io.mailroom.acceptance.Shop.templates();
        // what the dispatcher service serves with no topic settings: every template on email.<template>
        Map<String, EmailTopics.Route> routes = EmailTopics.none().routesFor(templates.names());
        EmailHandler handler = new EmailHandler(pg.dataSource(), new IdempotencyStore(),
                new TemplatedComposer(templates, routes, EmailAddress.of("shop@example.com", "Cửa hàng Mailroom"),
                        io.mailroom.email.Email.DEFAULT_MAX_BODY_BYTES),
                smtp, AmbiguityPolicy.review(), "e2e", null);
        Map<String, MessageHandler> handlers = new HashMap<>();
        routes.keySet().forEach(topic -> handlers.put(topic, handler));
        dispatcher = new Dispatcher(pg.dataSource(), DispatcherConfig.builder().workerId("e2e").batchSize(20).build(), handlers);
    }

    @AfterEach
    void stop() {
        orders.stop();
        smtp.close();
    }

    @Test
    void aVietnameseCustomerGetsEveryEmailInVietnameseAndAnEnglishCustomerInEnglish() throws Exception {
        long shipped = place(ANH, "anh@example.com", "vi");
        assertThat(post("/orders/" + shipped + "/shipment", """
                {"carrier": "Giao Hàng Nhanh", "trackingNumber": "GHN-7731-ĐN", "trackingUrl": "https://track.example.com/GHN-7731"}""")
                .statusCode()).isEqualTo(201);
        long cancelled = place(ANH, "anh@example.com", "vi");
        assertThat(post("/orders/" + cancelled + "/cancellation", "{\"reason\": \"Tôi đặt nhầm địa chỉ giao hàng\"}")
                .statusCode()).isEqualTo(201);
        long english = place("Ada Lovelace", "ada@example.com", null);

        deliver(5);

        Map<String, MimeMessage> bySubject = new HashMap<>();
        for (MimeMessage m : greenMail.getReceivedMessages()) {
            bySubject.put(m.getSubject(), m);
        }
        assertThat(bySubject).containsOnlyKeys(
                "Đơn hàng #" + shipped + " của bạn đã được xác nhận",
                "Đơn hàng #" + shipped + " của bạn đã được giao cho đơn vị vận chuyển",
                "Đơn hàng #" + cancelled + " của bạn đã được xác nhận",
                "Đơn hàng #" + cancelled + " của bạn đã bị hủy",
                "Your order #" + english + " is confirmed");

        MimeMessage confirmation = bySubject.get("Đơn hàng #" + shipped + " của bạn đã được xác nhận");
        assertVietnamese(confirmation, List.of("Cảm ơn bạn, Nguyễn Thị Ánh!", "Cà phê sữa đá", "Bánh mì <đặc biệt> & pa-tê",
                "535.000", "Bạn nhận được email này"));
        assertThat(html(confirmation)).contains("Bánh mì &lt;đặc biệt&gt; &amp; pa-tê").doesNotContain("<đặc biệt>");

        MimeMessage notice = bySubject.get("Đơn hàng #" + shipped + " của bạn đã được giao cho đơn vị vận chuyển");
        assertVietnamese(notice, List.of("Tin vui, Nguyễn Thị Ánh!", "đã được giao cho đơn vị vận chuyển Giao Hàng Nhanh",
                "Mã vận đơn: GHN-7731-ĐN", "Theo dõi bưu kiện"));
        assertThat(html(notice)).contains("href=\"https://track.example.com/GHN-7731\"");

        MimeMessage cancellation = bySubject.get("Đơn hàng #" + cancelled + " của bạn đã bị hủy");
        assertVietnamese(cancellation, List.of("Xin chào Nguyễn Thị Ánh,", "Lý do: Tôi đặt nhầm địa chỉ giao hàng",
                "sẽ được hoàn lại cho bạn"));

        MimeMessage ada = bySubject.get("Your order #" + english + " is confirmed");
        assertThat(((InternetAddress) ada.getAllRecipients()[0]).getPersonal()).isEqualTo("Ada Lovelace");
        assertThat(text(ada)).contains("Thank you, Ada Lovelace!").contains("You are receiving this email").doesNotContain("Cảm ơn");
        assertThat(html(ada)).contains("<html lang=\"en\">").contains("Thank you, Ada Lovelace!");

        // the shop repeats a request it did not see answered: the first answer, no second email
        HttpResponse<String> again = post("/orders/" + shipped + "/shipment", """
                {"carrier": "Giao Hàng Nhanh", "trackingNumber": "GHN-7731-ĐN", "trackingUrl": "https://track.example.com/GHN-7731"}""");
        assertThat(again.statusCode()).isEqualTo(201);
        assertThat(again.headers().firstValue("Idempotent-Replayed")).contains("true");
        dispatcher.runOnce();
        assertThat(greenMail.getReceivedMessages()).hasSize(5);
    }

    private void assertVietnamese(MimeMessage m, List<String> phrases) throws Exception {
        InternetAddress to = (InternetAddress) m.getAllRecipients()[0];
        assertThat(to.getAddress()).isEqualTo("anh@example.com");
        assertThat(to.getPersonal()).isEqualTo(ANH);
        assertThat(((InternetAddress) m.getFrom()[0]).getPersonal()).isEqualTo("Cửa hàng Mailroom");
        // on the wire the subject is an RFC 2047 encoded word in UTF-8, not raw 8-bit text
        assertThat(m.getHeader("Subject")[0]).startsWithIgnoringCase("=?UTF-8?");
        MimeMultipart parts = (MimeMultipart) m.getContent();
        assertThat(parts.getCount()).isEqualTo(2);
        for (int i = 0; i < 2; i++) {
            Part part = parts.getBodyPart(i);
            assertThat(part.getContentType()).containsIgnoringCase("charset=UTF-8");
        }
        assertThat(parts.getBodyPart(0).isMimeType("text/plain")).isTrue();
        assertThat(parts.getBodyPart(1).isMimeType("text/html")).isTrue();
        String text = text(m);
        String html = html(m);
        for (String phrase : phrases) {
            assertThat(text).as("text part").contains(phrase);
            assertThat(html).as("HTML part").contains(phrase.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;"));
        }
        assertThat(html).contains("<html lang=\"vi\">").contains("Bạn nhận được email này");
        assertThat(text).contains("Bạn nhận được email này").doesNotContain("Thank you").doesNotContain("Your order");
    }

    private static String text(MimeMessage m) throws Exception {
        return ((String) ((MimeMultipart) m.getContent()).getBodyPart(0).getContent()).replace("\r\n", "\n");
    }

    private static String html(MimeMessage m) throws Exception {
        return ((String) ((MimeMultipart) m.getContent()).getBodyPart(1).getContent()).replace("\r\n", "\n");
    }

    /** Runs the dispatcher until GreenMail has at least {@code atLeast} messages and every outbox message is done. */
    private void deliver(int atLeast) {
        await().atMost(Duration.ofSeconds(30)).until(() -> {
            dispatcher.runOnce();
            return greenMail.getReceivedMessages().length >= atLeast
                    && pg.dsl().fetchCount(pg.dsl().selectFrom("outbox_message").where("status <> 'done'")) == 0;
        });
    }

    private long place(String name, String email, String locale) throws Exception {
        Map<String, Object> order = new HashMap<>();
        order.put("customerEmail", email);
        order.put("customerName", name);
        order.put("currency", "VND");
        if (locale != null) {
            order.put("locale", locale);
        }
        List<Map<String, Object>> lines = new ArrayList<>();
        lines.add(Map.of("sku", "CF-1", "name", "Cà phê sữa đá", "quantity", 2, "unitPrice", 45000));
        lines.add(Map.of("sku", "BM-7", "name", "Bánh mì <đặc biệt> & pa-tê", "quantity", 5, "unitPrice", 89000));
        order.put("lines", lines);
        HttpResponse<String> r = post("/orders", JSON.writeValueAsString(order));
        assertThat(r.statusCode()).as(r.body()).isEqualTo(201);
        JsonNode body = JSON.readTree(r.body());
        return body.get("orderId").asLong();
    }

    private HttpResponse<String> post(String path, String body) throws Exception {
        return http.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + orders.port() + path))
                        .header("Content-Type", "application/json; charset=utf-8")
                        .POST(HttpRequest.BodyPublishers.ofString(body, StandardCharsets.UTF_8)).build(),
                HttpResponse.BodyHandlers.ofString(StandardCharsets.UTF_8));
    }
}
