package io.mailroom.email.transport.smtp;

import io.mailroom.email.api.Attachment;
import jakarta.activation.DataHandler;
import jakarta.mail.MessagingException;
import jakarta.mail.Part;
import jakarta.mail.internet.MimeBodyPart;
import jakarta.mail.internet.MimeMultipart;
import jakarta.mail.util.ByteArrayDataSource;

import java.util.List;

/**
 * Puts an email's attachments around its body (RFC 2046, RFC 2387):
 * <pre>
 * multipart/mixed                       (only with ordinary attachments)
 *   multipart/related; type="multipart/alternative"   (only with inline parts)
 *     multipart/alternative (text, html)
 *     image/png  Content-ID: &lt;logo&gt;  Content-Disposition: inline; filename=...
 *   application/pdf  Content-Disposition: attachment; filename*=UTF-8''H%C3%B3a%20%C4%91%C6%A1n...
 * </pre>
 * Each attachment goes base64 (its bytes arrive as they were given, whatever they are), and a
 * filename that is not ASCII is written per RFC 2231 ({@code filename*=UTF-8''...}): Angus does so
 * by default ({@code mail.mime.encodeparameters} is true, {@code mail.mime.encodefilename} false, so
 * no RFC 2047 encoded word, which RFC 2231 parameters replace), with the JVM's default charset,
 * UTF-8 since Java 18. {@code SmtpAttachmentMimeTest} checks the raw bytes.
 */
final class MimeAttachments {

    private MimeAttachments() {
    }

    /** {@code alternative} itself when there are no attachments, else the structure above. */
    static MimeMultipart around(MimeMultipart alternative, List<Attachment> attachments) throws MessagingException {
        if (attachments.isEmpty()) {
            return alternative;
        }
        MimeMultipart body = alternative;
        if (attachments.stream().anyMatch(Attachment::isInline)) {
            MimeMultipart related = new RelatedMultipart();
            related.addBodyPart(wrap(alternative));
            for (Attachment a : attachments) {
                if (a.isInline()) {
                    related.addBodyPart(part(a));
                }
            }
            body = related;
        }
        if (attachments.stream().allMatch(Attachment::isInline)) {
            return body;
        }
        MimeMultipart mixed = new MimeMultipart("mixed");
        mixed.addBodyPart(wrap(body));
        for (Attachment a : attachments) {
            if (!a.isInline()) {
                mixed.addBodyPart(part(a));
            }
        }
        return mixed;
    }

    private static MimeBodyPart wrap(MimeMultipart multipart) throws MessagingException {
        MimeBodyPart part = new MimeBodyPart();
        part.setContent(multipart);
        return part;
    }

    private static MimeBodyPart part(Attachment a) throws MessagingException {
        MimeBodyPart part = new MimeBodyPart();
        part.setDataHandler(new DataHandler(new ByteArrayDataSource(a.content(), a.contentType())));
        part.setDisposition(a.isInline() ? Part.INLINE : Part.ATTACHMENT);
        part.setFileName(a.filename());
        if (a.isInline()) {
            part.setContentID("<" + a.contentId() + ">");
        }
        part.setHeader("Content-Transfer-Encoding", "base64");
        return part;
    }

    /** RFC 2387 asks multipart/related for the type of its root part. */
    private static final class RelatedMultipart extends MimeMultipart {
        RelatedMultipart() {
            super("related");
            contentType = contentType + "; type=\"multipart/alternative\"";
        }
    }
}
