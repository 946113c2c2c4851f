package io.mailroom.email.transport.capture;

import com.fasterxml.jackson.databind.node.ObjectNode;
import io.mailroom.db.MailroomSchema;
import io.mailroom.email.Email;
import io.mailroom.email.EmailJson;
import io.mailroom.email.Text;
import io.mailroom.email.transport.IdempotencyKeys;
import io.mailroom.email.transport.MailTransport;
import io.mailroom.email.transport.SendResult;
import io.mailroom.email.transport.smtp.SmtpTransport;
import jakarta.mail.MessagingException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import javax.sql.DataSource;
import java.io.IOException;
import java.util.Objects;

/**
 * The staging transport {@code capture}: it stores the message instead of sending it. Everything
 * before the provider step is the real thing (the email is rendered, its key reserved, its rendering
 * and attempt recorded by the same {@code EmailHandler}), and the stored message is the one the SMTP
 * transport would write after {@code DATA}, built by its own code ({@link SmtpTransport#mime}). The
 * result is {@link SendResult.Sent} with the provider id {@code capture:<id>}; no socket is opened.
 *
 * <p>The row is written in its own short transaction on {@code dataSource} (the reservation pool) and
 * replaces an earlier capture of the same key, so a repeat of an unknown outcome keeps one message,
 * as a provider that deduplicates by key would. A failure to store is {@link SendResult.Transient}:
 * nothing was kept, and trying again is safe.
 */
public final class CaptureTransport implements MailTransport {

    public static final String NAME = "capture";

    private static final Logger log = LoggerFactory.getLogger(CaptureTransport.class);

    private final SmtpTransport mime;
    private final DataSource dataSource;
    private final MailroomSchema schema;

    /**
     * @param mime       builds the MIME message (its settings give the Message-ID domain); never sends here
     * @param dataSource where {@code email_capture} lives, {@linkplain MailroomSchema#bind bound} to its schema
     */
    public CaptureTransport(SmtpTransport mime, DataSource dataSource) {
        this.mime = Objects.requireNonNull(mime, "mime");
        this.dataSource = Objects.requireNonNull(dataSource, "dataSource");
        this.schema = MailroomSchema.of(dataSource);
    }

    @Override
    public String name() {
        return NAME;
    }

    @Override
    public SendResult send(Email email, String idempotencyKey) {
        Objects.requireNonNull(email, "email");
        SendResult.Permanent badKey = IdempotencyKeys.check(idempotencyKey);
        if (badKey != null) {
            return badKey;
        }
        SmtpTransport.Mime message;
        try {
            message = mime.mime(email, idempotencyKey);
        } catch (MessagingException | IOException e) {
            return new SendResult.Permanent("invalid-message", "cannot build the MIME message: " + Text.bounded(e.toString(), 200));
        }
        long id;
        try {
            id = schema.dsl(dataSource).transactionResult(cfg -> CaptureStore.upsert(cfg.dsl(), idempotencyKey, email, message));
        } catch (RuntimeException e) {
            log.warn("Could not store the captured email {}: {}", idempotencyKey, e.toString());
            return new SendResult.Transient("capture-store", "cannot store the captured email: " + Text.bounded(e.toString(), 200));
        }
        String providerId = "capture:" + id;
        ObjectNode detail = EmailJson.mapper().createObjectNode();
        detail.put("transport", NAME);
        detail.put("providerMessageId", providerId);
        detail.put("messageId", message.messageId());
        detail.put("bytes", message.bytes().length);
        log.debug("Captured key {} as {}", idempotencyKey, providerId);
        return new SendResult.Sent(providerId, detail.toString());
    }
}
