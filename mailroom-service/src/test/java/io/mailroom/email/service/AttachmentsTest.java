package io.mailroom.email.service;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.github.tomakehurst.wiremock.WireMockServer;
import com.github.tomakehurst.wiremock.core.WireMockConfiguration;
import com.github.tomakehurst.wiremock.verification.LoggedRequest;
import com.icegreen.greenmail.junit5.GreenMailExtension;
import com.icegreen.greenmail.util.ServerSetupTest;
import io.mailroom.email.api.EmailOutbox;
import io.mailroom.email.api.OutgoingEmail;
import io.mailroom.outbox.OutboxEnqueuer;
import io.mailroom.testing.PostgresExtension;
import jakarta.mail.BodyPart;
import jakarta.mail.Multipart;
import jakarta.mail.Part;
import jakarta.mail.internet.ContentType;
import jakarta.mail.internet.MimeBodyPart;
import jakarta.mail.internet.MimeMessage;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import javax.imageio.ImageIO;
import java.awt.Color;
import java.awt.image.BufferedImage;
import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import java.util.Map;

import static com.github.tomakehurst.wiremock.client.WireMock.aResponse;
import static com.github.tomakehurst.wiremock.client.WireMock.post;
import static com.github.tomakehurst.wiremock.client.WireMock.postRequestedFor;
import static com.github.tomakehurst.wiremock.client.WireMock.urlEqualTo;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * Issue 27, item 1, through the real service: an invoice PDF and an inline PNG logo, enqueued by the
 * business API, arrive intact at a real SMTP server (GreenMail, MIME parsed back) and at the HTTP
 * provider (WireMock, base64 decoded), byte for byte, with the non-ASCII filename and the content id.
 */
class AttachmentsTest {

    private static final String FILENAME = "Hóa đơn 102.pdf";

    @RegisterExtension
    static final PostgresExtension pg = new PostgresExtension();

    @RegisterExtension
    static final GreenMailExtension greenMail = new GreenMailExtension(ServerSetupTest.SMTP.dynamicPort());

    private WireMockServer provider;

    @BeforeEach
    void provider() {
        provider = new WireMockServer(WireMockConfiguration.options().dynamicPort().bindAddress("127.0.0.1"));
        provider.start();
        provider.stubFor(post(urlEqualTo("/v1/emails")).willReturn(aResponse().withStatus(202)
                .withHeader("Content-Type", "application/json").withBody("{\"id\":\"prov-1\"}")));
    }

    @AfterEach
    void stop() {
        provider.stop();
    }

    /** A one-page PDF with a correct cross-reference table, made here so its bytes are known. */
    static byte[] invoicePdf() {
        String stream = "BT /F1 18 Tf 72 720 Td (Invoice 102: 90000 VND) Tj ET";
        List<String> objects = List.of(
                "<< /Type /Catalog /Pages 2 0 R >>",
                "<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
                "<< /Type /Page /Parent 2 0 R /MediaBox [0 0 595 842] /Contents 4 0 R /Resources << /Font << /F1 5 0 R >> >> >>",
                "<< /Length " + stream.length() + " >>\nstream\n" + stream + "\nendstream",
                "<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>");
        StringBuilder pdf = new StringBuilder("%PDF-1.4\n%\u00e2\u00e3\u00cf\u00d3\n");
        List<Integer> offsets = new ArrayList<>();
        for (int i = 0; i < objects.size(); i++) {
            offsets.add(pdf.length());
            pdf.append(i + 1).append(" 0 obj\n").append(objects.get(i)).append("\nendobj\n");
        }
        int xref = pdf.length();
        pdf.append("xref\n0 ").append(objects.size() + 1).append("\n0000000000 65535 f \n");
        offsets.forEach(o -> pdf.append(String.format("%010d 00000 n \n", o)));
        pdf.append("trailer\n<< /Size ").append(objects.size() + 1).append(" /Root 1 0 R >>\nstartxref\n").append(xref).append("\n%%EOF\n");
        return pdf.toString().getBytes(StandardCharsets.ISO_8859_1);
    }

    /** A 32x32 PNG logo, drawn and encoded by the JDK. */
    static byte[] logoPng() throws Exception {
        BufferedImage image = new BufferedImage(32, 32, BufferedImage.TYPE_INT_ARGB);
        var g = image.createGraphics();
        g.setColor(new Color(0xC0, 0x39, 0x2B));
        g.fillOval(2, 2, 28, 28);
        g.dispose();
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        ImageIO.write(image, "png", out);
        return out.toByteArray();
    }

    private static OutgoingEmail.Builder receipt(String key, byte[] pdf, byte[] png) {
        return OutgoingEmail.template("receipt").to("anh@example.com", "Nguyễn Thị Ánh").locale("vi")
                .about("order", "102").idempotencyKey(key)
                .data(Map.of("customer", Map.of("name", "Nguyễn Thị Ánh"),
                        "order", Map.of("id", "102", "currency", "VND", "total", 90000, "createdAt", "2026-12-03T09:15:00Z",
                                "lines", List.of(Map.of("sku", "CF-1", "name", "Cà phê", "quantity", 2, "amount", 90000)))))
                .attach(FILENAME, "application/pdf", pdf)
                .inline("logo", "logo.png", "image/png", png);
    }

    @Test
    void anInvoicePdfAndAnInlineLogoArriveIntactOverSmtpAndAtTheHttpProvider() throws Exception {
        byte[] pdf = invoicePdf();
        byte[] png = logoPng();
        assertThat(new String(pdf, 0, 5, StandardCharsets.US_ASCII)).isEqualTo("%PDF-");
        assertThat(ImageIO.read(new java.io.ByteArrayInputStream(png)).getWidth()).isEqualTo(32);

        Map<String, String> env = ServiceEnv.smtp(pg.database().jdbcUrlWithCredentials(), greenMail.getSmtp().getPort());
        env.put("MAILROOM_MIGRATE", "true");
        env.put("MAILROOM_HTTP_BASE_URL", provider.baseUrl());
        env.put("MAILROOM_HTTP_TOKEN", "tok_test");
        env.put("MAILROOM_TOPICS", "shop.receipt = receipt transport=http");

        try (DispatcherService service = DispatcherService.start(ServiceConfig.fromEnv(env))) {
            EmailOutbox outbox = new EmailOutbox(new OutboxEnqueuer());
            pg.dsl().transaction(cfg -> {
                outbox.enqueue(cfg.dsl(), receipt("email-order-102-smtp", pdf, png).build());
                outbox.enqueue(cfg.dsl(), receipt("email-order-102-http", pdf, png).topic("shop.receipt").build());
            });
            await().atMost(Duration.ofSeconds(20)).until(() -> pg.dsl().fetchCount(
                    pg.dsl().selectFrom("outbox_message").where("status = 'done'")) == 2);
        }
        // stored once for both emails
        assertThat(((Number) pg.dsl().fetchValue("SELECT count(*) FROM email_attachment_content")).longValue()).isEqualTo(2L);

        // SMTP: multipart/mixed [ multipart/related [ alternative, logo ], pdf ]
        MimeMessage[] received = greenMail.getReceivedMessages();
        assertThat(received).hasSize(1);
        MimeMessage m = received[0];
        assertThat(new ContentType(m.getContentType()).getBaseType()).isEqualTo("multipart/mixed");
        Multipart mixed = (Multipart) m.getContent();
        Multipart related = (Multipart) mixed.getBodyPart(0).getContent();
        MimeBodyPart logo = (MimeBodyPart) related.getBodyPart(1);
        assertThat(logo.getContentID()).isEqualTo("<logo>");
        assertThat(logo.getDisposition()).isEqualTo(Part.INLINE);
        assertThat(logo.getInputStream().readAllBytes()).isEqualTo(png);
        BodyPart invoice = mixed.getBodyPart(1);
        assertThat(invoice.getDisposition()).isEqualTo(Part.ATTACHMENT);
        assertThat(invoice.getFileName()).isEqualTo(FILENAME);
        assertThat(new ContentType(invoice.getContentType()).getBaseType()).isEqualTo("application/pdf");
        assertThat(invoice.getInputStream().readAllBytes()).isEqualTo(pdf);

        // HTTP: base64 with filename, content type and, for the logo, its content id
        List<LoggedRequest> calls = provider.findAll(postRequestedFor(urlEqualTo("/v1/emails")));
        assertThat(calls).hasSize(1);
        JsonNode attachments = new ObjectMapper().readTree(calls.getFirst().getBodyAsString()).get("attachments");
        assertThat(attachments).hasSize(2);
        assertThat(attachments.get(0).get("filename").asText()).isEqualTo(FILENAME);
        assertThat(attachments.get(0).get("content_type").asText()).isEqualTo("application/pdf");
        assertThat(attachments.get(0).has("content_id")).isFalse();
        assertThat(Base64.getDecoder().decode(attachments.get(0).get("content").asText())).isEqualTo(pdf);
        assertThat(attachments.get(1).get("content_id").asText()).isEqualTo("logo");
        assertThat(Base64.getDecoder().decode(attachments.get(1).get("content").asText())).isEqualTo(png);
    }
}
