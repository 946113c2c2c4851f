package io.mailroom.email.service;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.icegreen.greenmail.junit5.GreenMailExtension;
import com.icegreen.greenmail.util.ServerSetupTest;
import io.mailroom.testing.PostgresExtension;
import jakarta.mail.BodyPart;
import jakarta.mail.Message;
import jakarta.mail.Multipart;
import jakarta.mail.Part;
import jakarta.mail.internet.InternetAddress;
import jakarta.mail.internet.MimeBodyPart;
import jakarta.mail.internet.MimeMessage;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import java.time.Duration;
import java.util.Arrays;
import java.util.Base64;
import java.util.List;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * Issue 27 through the SQL function and the real service: an invoice that a business in another
 * language enqueues with {@code enqueue_email} (two To, a Cc, a Bcc, tags, a PDF with a non-ASCII
 * name and an inline logo, all as JSON) is sent by the dispatcher as the same email from the Java
 * API would be: every recipient gets it, the Bcc is named in no header, the tags are headers, the
 * files arrive byte for byte.
 */
class SqlEnqueueServiceTest {

    private static final String FILENAME = "Hóa đơn 102.pdf";

    @RegisterExtension
    static final PostgresExtension pg = new PostgresExtension();

    @RegisterExtension
    static final GreenMailExtension greenMail = new GreenMailExtension(ServerSetupTest.SMTP.dynamicPort());

    @Test
    void anInvoiceEnqueuedInSqlReachesEveryRecipientWithItsTagsAndFilesIntact() throws Exception {
        byte[] pdf = AttachmentsTest.invoicePdf();
        byte[] png = AttachmentsTest.logoPng();
        ObjectMapper json = new ObjectMapper();
        String attachments = json.writeValueAsString(List.of(
                Map.of("filename", FILENAME, "contentType", "application/pdf", "content", Base64.getEncoder().encodeToString(pdf)),
                Map.of("filename", "logo.png", "contentType", "image/png", "contentId", "logo",
                        "content", Base64.getEncoder().encodeToString(png))));
        String data = json.writeValueAsString(Map.of("customer", Map.of("name", "Nguyễn Thị Ánh"),
                "order", Map.of("id", "102", "currency", "VND", "total", 90000, "createdAt", "2026-12-03T09:15:00Z",
                        "lines", List.of(Map.of("sku", "CF-1", "name", "Cà phê", "quantity", 2, "amount", 90000)))));

        Map<String, String> env = ServiceEnv.smtp(pg.database().jdbcUrlWithCredentials(), greenMail.getSmtp().getPort());
        env.put("MAILROOM_MIGRATE", "true");
        try (DispatcherService service = DispatcherService.start(ServiceConfig.fromEnv(env))) {
            pg.dsl().transaction(cfg -> cfg.dsl().resultQuery("""
                    SELECT enqueue_email(template => 'receipt', to_address => NULL,
                           to_list => '[{"address": "anh@example.com", "name": "Nguyễn Thị Ánh"}, {"address": "binh@example.com"}]',
                           cc => '[{"address": "billing@corp.example", "name": "Billing"}]',
                           bcc => '[{"address": "audit@shop.example"}]',
                           tags => '{"category": "invoice", "invoice": "102"}',
                           attachments => ?::json, data => ?::json, locale => 'vi',
                           about_type => 'order', about_id => '102', idempotency_key => 'email-order-102-sql')""",
                    attachments, data).fetch());
            await().atMost(Duration.ofSeconds(20)).until(() -> pg.dsl().fetchCount(
                    pg.dsl().selectFrom("outbox_message").where("idempotency_key = 'email-order-102-sql' AND status = 'done'")) == 1);
        }

        MimeMessage[] received = greenMail.getReceivedMessages();
        assertThat(received).as("one copy per recipient: two To, the Cc and the Bcc").hasSize(4);
        for (String address : List.of("anh@example.com", "binh@example.com", "billing@corp.example", "audit@shop.example")) {
            assertThat(greenMail.getUserManager().getUserByEmail(address)).as(address).isNotNull();
        }
        for (MimeMessage m : received) {
            assertThat(Arrays.stream(m.getRecipients(Message.RecipientType.TO)).map(a -> ((InternetAddress) a).getAddress()))
                    .containsExactly("anh@example.com", "binh@example.com");
            assertThat(Arrays.stream(m.getRecipients(Message.RecipientType.CC)).map(a -> ((InternetAddress) a).getAddress()))
                    .containsExactly("billing@corp.example");
            assertThat(m.getHeader("Bcc")).isNull();
            assertThat(m.getHeader("X-Mailroom-Tag")).containsExactlyInAnyOrder("category=invoice", "invoice=102");

            Multipart mixed = (Multipart) m.getContent();
            MimeBodyPart logo = (MimeBodyPart) ((Multipart) mixed.getBodyPart(0).getContent()).getBodyPart(1);
            assertThat(logo.getContentID()).isEqualTo("<logo>");
            assertThat(logo.getDisposition()).isEqualTo(Part.INLINE);
            assertThat(logo.getInputStream().readAllBytes()).isEqualTo(png);
            BodyPart invoice = mixed.getBodyPart(1);
            assertThat(invoice.getDisposition()).isEqualTo(Part.ATTACHMENT);
            assertThat(invoice.getFileName()).isEqualTo(FILENAME);
            assertThat(invoice.getInputStream().readAllBytes()).isEqualTo(pdf);
        }
    }
}
