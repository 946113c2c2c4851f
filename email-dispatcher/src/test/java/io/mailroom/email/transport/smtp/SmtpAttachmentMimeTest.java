package io.mailroom.email.transport.smtp;

import io.mailroom.email.Email;
import io.mailroom.email.EmailAddress;
import io.mailroom.email.api.Attachment;
import jakarta.mail.BodyPart;
import jakarta.mail.Multipart;
import jakarta.mail.Part;
import jakarta.mail.Session;
import jakarta.mail.internet.ContentType;
import jakarta.mail.internet.MimeBodyPart;
import jakarta.mail.internet.MimeMessage;
import org.junit.jupiter.api.Test;

import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;
import java.util.Properties;

import static org.assertj.core.api.Assertions.assertThat;

/** The MIME structure an email with attachments is sent as, checked on the raw bytes and parsed back. */
class SmtpAttachmentMimeTest {

    private static final byte[] PDF = "%PDF-1.4\n%\u00e2\u00e3\n1 0 obj<<>>endobj\n%%EOF\n".getBytes(StandardCharsets.ISO_8859_1);
    private static final byte[] PNG = {(byte) 0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n', 0, 0, 0, 13, 'I', 'H', 'D', 'R'};

    private final SmtpTransport transport = new SmtpTransport(SmtpConfig.builder()
            .from(EmailAddress.parseMailbox("Shop <shop@shop.example>")).messageIdDomain("mail.shop.example").build());

    private static Email email(List<Attachment> attachments) {
        return new Email(EmailAddress.of("shop@shop.example", "Shop"), EmailAddress.of("an@example.com", "An"), "Hóa đơn",
                "See the invoice.", "<p><img src=\"cid:logo\"> See the invoice.</p>", Map.of(), "v1", null, attachments);
    }

    private byte[] raw(Email email) throws Exception {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        transport.build(email, "<k@mail.shop.example>").writeTo(out);
        return out.toByteArray();
    }

    private static MimeMessage parse(byte[] raw) throws Exception {
        return new MimeMessage(Session.getInstance(new Properties()), new ByteArrayInputStream(raw));
    }

    @Test
    void aNonAsciiFilenameIsWrittenPerRfc2231_notAsAnEncodedWord_andReadsBackTheSame() throws Exception {
        byte[] raw = raw(email(List.of(Attachment.of("Hóa đơn 102.pdf", "application/pdf", PDF))));
        String text = new String(raw, StandardCharsets.US_ASCII);

        assertThat(text).containsPattern("(?i)filename\\*=utf-8''H%C3%B3a%20%C4%91%C6%A1n%20102\\.pdf");
        // the subject is an encoded word (RFC 2047); a parameter never is: RFC 2047 forbids it there
        assertThat(text.lines().filter(l -> l.contains("name")).toList()).isNotEmpty()
                .noneMatch(l -> l.toLowerCase(java.util.Locale.ROOT).contains("=?utf-8?"));
        for (byte b : raw) {
            assertThat(b).as("7-bit clean").isNotNegative();
        }

        MimeMessage m = parse(raw);
        assertThat(new ContentType(m.getContentType()).getBaseType()).isEqualTo("multipart/mixed");
        Multipart mixed = (Multipart) m.getContent();
        assertThat(mixed.getCount()).isEqualTo(2);
        assertThat(new ContentType(mixed.getBodyPart(0).getContentType()).getBaseType()).isEqualTo("multipart/alternative");
        BodyPart pdf = mixed.getBodyPart(1);
        assertThat(pdf.getDisposition()).isEqualTo(Part.ATTACHMENT);
        assertThat(pdf.getFileName()).isEqualTo("Hóa đơn 102.pdf");
        assertThat(((MimeBodyPart) pdf).getEncoding()).isEqualTo("base64");
        assertThat(pdf.getInputStream().readAllBytes()).isEqualTo(PDF);
    }

    @Test
    void inlineImagesGoInMultipartRelatedWithTheirContentId_besideTheBody_insideMixed() throws Exception {
        MimeMessage m = parse(raw(email(List.of(Attachment.of("Hóa đơn 102.pdf", "application/pdf", PDF),
                Attachment.inline("logo", "logo.png", "image/png", PNG)))));
        Multipart mixed = (Multipart) m.getContent();
        ContentType relatedType = new ContentType(mixed.getBodyPart(0).getContentType());
        assertThat(relatedType.getBaseType()).isEqualTo("multipart/related");
        assertThat(relatedType.getParameter("type")).isEqualTo("multipart/alternative");
        Multipart related = (Multipart) mixed.getBodyPart(0).getContent();
        assertThat(new ContentType(related.getBodyPart(0).getContentType()).getBaseType()).isEqualTo("multipart/alternative");
        MimeBodyPart logo = (MimeBodyPart) related.getBodyPart(1);
        assertThat(logo.getContentID()).isEqualTo("<logo>");
        assertThat(logo.getDisposition()).isEqualTo(Part.INLINE);
        assertThat(new ContentType(logo.getContentType()).getBaseType()).isEqualTo("image/png");
        assertThat(logo.getInputStream().readAllBytes()).isEqualTo(PNG);
        assertThat(mixed.getBodyPart(1).getInputStream().readAllBytes()).isEqualTo(PDF);
    }

    @Test
    void onlyInlineImages_theMessageIsMultipartRelated_noAttachments_itStaysMultipartAlternative() throws Exception {
        MimeMessage related = parse(raw(email(List.of(Attachment.inline("logo", "logo.png", "image/png", PNG)))));
        assertThat(new ContentType(related.getContentType()).getBaseType()).isEqualTo("multipart/related");
        MimeMessage plain = parse(raw(email(List.of())));
        assertThat(new ContentType(plain.getContentType()).getBaseType()).isEqualTo("multipart/alternative");
    }
}
