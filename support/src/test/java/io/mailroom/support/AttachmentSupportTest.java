package io.mailroom.support;

import com.fasterxml.jackson.databind.JsonNode;
import io.mailroom.email.api.Attachment;
import io.mailroom.email.api.EmailOutbox;
import io.mailroom.email.api.OutgoingEmail;
import io.mailroom.outbox.OutboxEnqueuer;
import io.mailroom.testing.PostgresExtension;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Support lists an email's attachments (filename, type, size, hash prefix, inline or not) in the API
 * and on the console page, never their bytes; a resend refers to the same stored content.
 */
class AttachmentSupportTest {

    @RegisterExtension
    static final PostgresExtension pg = new PostgresExtension();

    static final String VIEWER = "vic-viewer-token-0123456789";
    static final String SUPPORT = "alice-support-token-0123456789";
    private static final byte[] PDF = "%PDF-1.4 invoice 102 %%EOF".getBytes(StandardCharsets.US_ASCII);
    private static final byte[] PNG = {(byte) 0x89, 'P', 'N', 'G', 1, 2, 3};

    private static SupportServer server;
    private static Http http;

    @BeforeAll
    static void start() {
        server = SupportServer.start(pg.dataSource(), SupportConfig.builder().host("127.0.0.1").port(0)
                .tokens("vic:viewer:" + VIEWER + ",alice:support:" + SUPPORT).build(), List::of);
        http = new Http(server.baseUri());
    }

    @AfterAll
    static void stop() {
        server.stop();
    }

    private static void enqueueInvoice(String key) {
        EmailOutbox outbox = new EmailOutbox(new OutboxEnqueuer());
        pg.dsl().transaction(cfg -> outbox.enqueue(cfg.dsl(), OutgoingEmail.template("order_confirmation")
                .to("ann@example.com", "Ann").about("order", "102").idempotencyKey(key).data(Map.of())
                .attach("Hóa đơn 102.pdf", "application/pdf", PDF).inline("logo", "logo.png", "image/png", PNG).build()));
    }

    @Test
    void theApiListsAttachmentsWithoutTheirBytes_andOffersNoWayToDownloadThem() {
        enqueueInvoice("email-invoice-api");
        HttpResponse<String> r = http.get("/api/emails/email-invoice-api", Http.bearer(VIEWER));
        assertThat(r.statusCode()).as(r.body()).isEqualTo(200);
        JsonNode attachments = Http.json(r).get("attachments");
        assertThat(attachments).hasSize(2);
        JsonNode pdf = attachments.get(0);
        assertThat(pdf.get("filename").asText()).isEqualTo("Hóa đơn 102.pdf");
        assertThat(pdf.get("contentType").asText()).isEqualTo("application/pdf");
        assertThat(pdf.get("size").asInt()).isEqualTo(PDF.length);
        assertThat(pdf.get("sha256Prefix").asText()).isEqualTo(Attachment.sha256(PDF).substring(0, 12));
        assertThat(pdf.get("inline").asBoolean()).isFalse();
        assertThat(attachments.get(1).get("inline").asBoolean()).isTrue();
        assertThat(attachments.get(1).get("contentId").asText()).isEqualTo("logo");
        assertThat(r.body()).doesNotContain(java.util.Base64.getEncoder().encodeToString(PDF)).doesNotContain("invoice 102");

        assertThat(http.get("/api/emails/email-invoice-api/attachments/0", Http.bearer(VIEWER)).statusCode()).isEqualTo(404);
        // a search's page of emails keeps to what a list needs
        HttpResponse<String> list = http.get("/api/emails?status=pending", Http.bearer(VIEWER));
        assertThat(list.statusCode()).as(list.body()).isEqualTo(200);
        assertThat(Http.json(list).get("emails")).isNotEmpty().allSatisfy(e -> assertThat(e.has("attachments")).isFalse());
    }

    @Test
    void theConsolePageListsThem() {
        enqueueInvoice("email-invoice-console");
        String session = ConsoleLogin.signIn(http, VIEWER);
        HttpResponse<String> page = http.get("/console/emails/email-invoice-console", "Cookie", "mailroom_session=" + session);
        assertThat(page.statusCode()).isEqualTo(200);
        assertThat(page.body()).contains("<h2>Attachments</h2>").contains("Hóa đơn 102.pdf").contains("application/pdf")
                .contains(Attachment.sha256(PDF).substring(0, 12)).contains("inline (<code>cid:logo</code>)")
                .doesNotContain("/attachments/");
    }

    @Test
    void aResendNamesTheSameContentAgainWithoutCopyingIt() {
        enqueueInvoice("email-invoice-resent");
        TestMail.dispatch(pg.dataSource(), Map.of("email-invoice-resent", TestMail.Result.SENT));
        SupportService service = new SupportService(pg.dataSource());
        long before = ((Number) pg.dsl().fetchValue("SELECT count(*) FROM email_attachment_content")).longValue();

        ActionResult r = service.resend(new Actor("alice", Role.SUPPORT), "email-invoice-resent", "customer lost the invoice");

        assertThat(r).isInstanceOf(ActionResult.Applied.class);
        assertThat(service.email("email-invoice-resent-resend-1").orElseThrow().attachments())
                .isEqualTo(service.email("email-invoice-resent").orElseThrow().attachments()).hasSize(2);
        assertThat(((Number) pg.dsl().fetchValue("SELECT count(*) FROM email_attachment_content")).longValue()).isEqualTo(before);
    }
}
