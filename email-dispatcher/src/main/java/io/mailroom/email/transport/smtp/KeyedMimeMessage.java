package io.mailroom.email.transport.smtp;

import jakarta.mail.MessagingException;
import jakarta.mail.Session;
import org.eclipse.angus.mail.smtp.SMTPMessage;
import org.eclipse.angus.mail.smtp.SMTPOutputStream;

import java.io.IOException;
import java.io.OutputStream;

/**
 * A MIME message with a fixed Message-ID (Jakarta Mail would otherwise generate a random one in
 * {@code saveChanges()}), which also notices when the SMTP transport starts writing it.
 *
 * <p>The SMTP transport only writes the message to an {@link SMTPOutputStream} after the server
 * answered {@code 354} to {@code DATA}. From that moment a lost connection or a missing final reply
 * leaves the outcome unknown: the server may have queued the email. {@link #dataStarted()} lets the
 * transport tell that case (ambiguous) from a failure before DATA (nothing was accepted).
 *
 * <p>An Angus {@link SMTPMessage} so that a VERP envelope sender can be set per message.
 */
final class KeyedMimeMessage extends SMTPMessage {

    private final String messageId;
    private volatile boolean dataStarted;

    KeyedMimeMessage(Session session, String messageId) {
        super(session);
        this.messageId = messageId;
    }

    @Override
    protected void updateMessageID() throws MessagingException {
        setHeader("Message-ID", messageId);
    }

    @Override
    public void writeTo(OutputStream os, String[] ignoreList) throws IOException, MessagingException {
        if (os instanceof SMTPOutputStream) {
            dataStarted = true;
        }
        super.writeTo(os, ignoreList);
    }

    boolean dataStarted() {
        return dataStarted;
    }
}
