package io.mailroom.email.transport.smtp;

import io.mailroom.email.dkim.DkimSigner;
import jakarta.mail.MessagingException;
import jakarta.mail.Session;
import org.eclipse.angus.mail.smtp.SMTPMessage;
import org.eclipse.angus.mail.smtp.SMTPOutputStream;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.security.GeneralSecurityException;

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
 *
 * <p>{@link #sign} freezes the message: its bytes, as Angus writes them, are rendered once, signed,
 * and from then on every write sends exactly those bytes with the DKIM-Signature field(s) first.
 */
final class KeyedMimeMessage extends SMTPMessage {

    /** Headers Angus's SMTPTransport leaves out when it writes a message (its {@code ignoreList}). */
    private static final String[] SMTP_IGNORED = {"Bcc", "Content-Length"};

    private final String messageId;
    private volatile boolean dataStarted;
    /** The whole signed message, once {@link #sign} ran; the headers must not change after that. */
    private volatile byte[] signed;

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
        byte[] frozen = signed;
        if (frozen != null) {
            os.write(frozen);
            return;
        }
        super.writeTo(os, ignoreList);
    }

    /**
     * Signs the message as the SMTP transport will write it; call when every header is final
     * (Message-ID, Date, envelope). Fails before any connection is used, so a key problem is never
     * mistaken for a send whose outcome is unknown.
     */
    void sign(DkimSigner signer, String fromDomain) throws IOException, MessagingException, GeneralSecurityException {
        ByteArrayOutputStream out = new ByteArrayOutputStream(8192);
        super.writeTo(out, SMTP_IGNORED);
        byte[] body = crlf(out.toByteArray());
        byte[] fields = signer.sign(fromDomain, body).getBytes(StandardCharsets.US_ASCII);
        byte[] all = new byte[fields.length + body.length];
        System.arraycopy(fields, 0, all, 0, fields.length);
        System.arraycopy(body, 0, all, fields.length, body.length);
        signed = all;
    }

    /**
     * Line ends as the SMTP data stream makes them (a 7bit text part keeps the template's bare LF,
     * which Angus's stream turns into CRLF on the wire): a lone CR or LF becomes CRLF, so the bytes
     * signed are the bytes the server receives.
     */
    static byte[] crlf(byte[] in) {
        ByteArrayOutputStream out = new ByteArrayOutputStream(in.length + in.length / 32 + 16);
        int last = -1;
        for (byte b : in) {
            if (b == '\r') {
                out.write('\r');
                out.write('\n');
            } else if (b == '\n') {
                if (last != '\r') {
                    out.write('\r');
                    out.write('\n');
                }
            } else {
                out.write(b);
            }
            last = b;
        }
        return out.toByteArray();
    }

    boolean dataStarted() {
        return dataStarted;
    }
}
