package io.mailroom.email.transport.smtp;

import com.fasterxml.jackson.databind.json.JsonMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.mailroom.delivery.mime.MimeStreams;
import io.mailroom.email.EmailJson;
import io.mailroom.email.Email;
import io.mailroom.email.EmailAddress;
import io.mailroom.email.EmailRecipients;
import io.mailroom.email.Text;
import io.mailroom.email.dkim.DkimSigner;
import io.mailroom.email.transport.IdempotencyKeys;
import io.mailroom.email.transport.MailTransport;
import io.mailroom.email.transport.SendResult;
import jakarta.mail.Message;
import jakarta.mail.MessagingException;
import jakarta.mail.Session;
import jakarta.mail.internet.InternetAddress;
import jakarta.mail.internet.MimeBodyPart;
import jakarta.mail.internet.MimeMultipart;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.io.UnsupportedEncodingException;
import java.nio.charset.StandardCharsets;
import java.security.GeneralSecurityException;
import java.time.Clock;
import java.util.Date;
import java.util.Map;
import java.util.Objects;
import java.util.Properties;

/**
 * Sends emails over SMTP with Jakarta Mail (Angus), as multipart/alternative (plain text + HTML,
 * UTF-8), inside multipart/related and multipart/mixed when it has attachments ({@link MimeAttachments}),
 * with a {@code Message-ID} derived from the idempotency key (see {@link MessageIds}).
 *
 * <p>Everything that can be checked locally is checked before a connection is borrowed: the key,
 * the MIME structure, the addresses (again, by Jakarta's strict parser). A bad email therefore
 * costs no SMTP session. Connections are reused through a small pool
 * ({@code MAILROOM_SMTP_POOL_SIZE}), many messages each; where the server advertises
 * {@code PIPELINING}, each message's envelope and {@code DATA} go out in one write
 * ({@link PipeliningSmtpTransport}).
 *
 * <p>SMTP has no idempotency key: once the message data has been written, a lost reply is
 * {@link SendResult.Ambiguous} and must not be retried blindly; what to do with it (park for
 * review, or resend and accept a possible duplicate) is the caller's policy.
 */
public final class SmtpTransport implements MailTransport {

    public static final String NAME = "smtp";

    private static final Logger log = LoggerFactory.getLogger(SmtpTransport.class);
    private static final String UTF_8 = StandardCharsets.UTF_8.name();

    private final SmtpConfig config;
    private final Clock clock;
    private final Session session;
    private final SmtpConnectionPool pool;
    private final JsonMapper json = EmailJson.mapper();
    private final String hostPort;
    /** Signs each message with the keys of its From domain ({@code MAILROOM_DKIM_KEYS}), or null. */
    private final DkimSigner dkim;
    /**
     * Whether this server accepted a recipient of ours since it last refused the session: then a
     * 5.5.x/5.7.x at RCPT is not the same for every recipient, and is about that one.
     */
    private volatile boolean recipientAcceptedSinceRefusal;

    public SmtpTransport(SmtpConfig config) {
        this(config, Clock.systemUTC());
    }

    /** @param clock sets the Date header and the DKIM signatures' {@code t=} */
    public SmtpTransport(SmtpConfig config, Clock clock) {
        this.config = Objects.requireNonNull(config, "config");
        this.clock = Objects.requireNonNull(clock, "clock");
        MimeStreams.pin(); // every part and encoded word of every message asks for it
        this.session = Session.getInstance(sessionProperties(config));
        this.pool = new SmtpConnectionPool(session, config);
        this.hostPort = config.host() + ":" + config.port();
        this.dkim = config.dkim() == null ? null : new DkimSigner(config.dkim(), clock);
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
        String messageId = MessageIds.forKey(idempotencyKey, config.messageIdDomain());
        KeyedMimeMessage message;
        InternetAddress[] recipients;
        try {
            message = build(email, messageId);
            // the envelope names every recipient; the headers only To and Cc (Bcc is in no header)
            recipients = envelopeRecipients(email);
            if (config.verp() != null) {
                message.setEnvelopeFrom(config.verp().addressFor(idempotencyKey));
            }
        } catch (MessagingException | UnsupportedEncodingException e) {
            return new SendResult.Permanent("invalid-message", "cannot build the MIME message: " + SmtpFailures.rootCause(e));
        }
        if (dkim != null) {
            // last: every header (Message-ID, Date) and the envelope are final; the signed bytes are what is sent
            try {
                message.sign(dkim, email.from().domain());
            } catch (GeneralSecurityException | IOException | MessagingException e) {
                return new SendResult.Misconfigured("dkim-signing-failed", "cannot DKIM-sign the message: " + SmtpFailures.rootCause(e));
            }
        }

        // A pooled connection may have been closed by the server since its last use; that shows
        // as an I/O failure before DATA (nothing sent), so one more try on a fresh connection is safe.
        for (int tryNo = 1; ; tryNo++) {
            SmtpConnectionPool.Connection connection;
            try {
                connection = pool.borrow();
            } catch (SmtpConnectionPool.ConnectFailure f) {
                SendResult result = SmtpFailures.connectFailed(f.messagingException(), f.lastReturnCode, f.startTlsUnavailable, hostPort,
                        config.heloName());
                log.debug("SMTP connect failed for key {}: {}", idempotencyKey, result);
                return result;
            } catch (SmtpConnectionPool.PoolExhausted e) {
                return new SendResult.Transient("smtp-pool-exhausted", "all " + config.poolSize() + " SMTP connections stayed busy for "
                        + config.connectTimeout().toMillis() + " ms");
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return new SendResult.Transient("interrupted", "interrupted while waiting for an SMTP connection");
            }

            boolean reused = connection.messagesSent > 0;
            boolean reusable = false;
            try {
                connection.transport.sendMessage(message, recipients);
                connection.messagesSent++;
                reusable = true;
                recipientAcceptedSinceRefusal = true;
                log.debug("SMTP accepted key {} as {}", idempotencyKey, messageId);
                return new SendResult.Sent(messageId, sentDetail(messageId, connection));
            } catch (MessagingException e) {
                SendResult result = SmtpFailures.sendFailed(e, message.dataStarted(),
                        new SmtpFailures.Session(config.heloName(), recipientAcceptedSinceRefusal));
                if (result instanceof SendResult.Transient t && t.scope() == SendResult.Scope.SESSION) {
                    recipientAcceptedSinceRefusal = false;
                }
                // Refused recipients leave a reset session, unless the connection had to be closed
                // (a failed RSET, or DATA already answered 354 to a pipelined envelope).
                reusable = !message.dataStarted() && SmtpFailures.leavesSessionUsable(e) && connection.transport.hasOpenConnection();
                if (reused && tryNo == 1 && SmtpFailures.isIoBeforeData(result)) {
                    log.debug("Pooled SMTP connection was gone ({}); trying once more on a new connection", result);
                    continue;
                }
                log.debug("SMTP send failed for key {}: {}", idempotencyKey, result);
                return result;
            } catch (RuntimeException e) {
                // Not expected from Angus; still, once DATA started the server may have the message.
                String what = "unexpected " + SmtpFailures.rootCause(e);
                return message.dataStarted() ? new SendResult.Ambiguous(what) : new SendResult.Transient("smtp-error", what);
            } finally {
                pool.release(connection, reusable);
            }
        }
    }

    /** A message as {@link #send} would write it after DATA, and its Message-ID. */
    public record Mime(String messageId, byte[] bytes) {
    }

    /**
     * The MIME message {@link #send} would write for this email and key, built by the same code and
     * with the same Message-ID and DKIM signature; nothing is sent and no connection is opened (the capture
     * transport).
     */
    public Mime mime(Email email, String idempotencyKey) throws MessagingException, java.io.IOException {
        String messageId = MessageIds.forKey(idempotencyKey, config.messageIdDomain());
        java.io.ByteArrayOutputStream out = new java.io.ByteArrayOutputStream();
        KeyedMimeMessage message = build(email, messageId);
        if (dkim != null) {
            try {
                message.sign(dkim, email.from().domain()); // captured as it would be sent: signed
            } catch (GeneralSecurityException e) {
                throw new MessagingException("cannot DKIM-sign the message", e);
            }
        }
        message.writeTo(out);
        return new Mime(messageId, out.toByteArray());
    }

    /** Connections opened since start (a reused connection is counted once). */
    public long connectionsOpened() {
        return pool.connectionsOpened();
    }

    public SmtpConfig config() {
        return config;
    }

    @Override
    public void close() {
        pool.close();
    }

    KeyedMimeMessage build(Email email, String messageId) throws MessagingException, UnsupportedEncodingException {
        KeyedMimeMessage m = new KeyedMimeMessage(session, messageId);
        m.setFrom(address(email.from()));
        m.setRecipients(Message.RecipientType.TO, addresses(email.toList()));
        if (!email.cc().isEmpty()) {
            m.setRecipients(Message.RecipientType.CC, addresses(email.cc()));
        }
        if (email.replyTo() != null) {
            m.setReplyTo(new jakarta.mail.Address[]{address(email.replyTo())});
        }
        m.setSubject(email.subject(), UTF_8);
        m.setSentDate(Date.from(clock.instant()));
        for (Map.Entry<String, String> header : email.headers().entrySet()) {
            m.setHeader(header.getKey(), header.getValue());
        }
        // one header per tag, name=value (TagRules' charset needs no encoding in a header)
        for (Map.Entry<String, String> tag : email.tags().entrySet()) {
            m.addHeader(EmailRecipients.TAG_HEADER, tag.getKey() + "=" + tag.getValue());
        }
        // RFC 2046: alternatives in increasing order of preference, so HTML last.
        // each part encoded once, here, as Jakarta Mail would (TextParts)
        MimeBodyPart text = TextParts.of(email.textBody(), "plain");
        MimeBodyPart html = TextParts.of(email.htmlBody(), "html");
        MimeMultipart alternative = new MimeMultipart("alternative");
        alternative.addBodyPart(text);
        alternative.addBodyPart(html);
        m.setContent(MimeAttachments.around(alternative, email.attachments()));
        m.saveChanges();
        return m;
    }

    private static InternetAddress[] addresses(java.util.List<EmailAddress> list)
            throws UnsupportedEncodingException, MessagingException {
        InternetAddress[] out = new InternetAddress[list.size()];
        for (int i = 0; i < out.length; i++) {
            out[i] = address(list.get(i));
        }
        return out;
    }

    /** RCPT TO of every recipient, To, Cc, then Bcc: the envelope is the only place a Bcc recipient is named. */
    static InternetAddress[] envelopeRecipients(Email email) throws MessagingException {
        java.util.List<EmailAddress> all = new java.util.ArrayList<>(email.toList());
        all.addAll(email.cc());
        all.addAll(email.bcc());
        InternetAddress[] out = new InternetAddress[all.size()];
        for (int i = 0; i < out.length; i++) {
            out[i] = new InternetAddress(all.get(i).address(), true);
        }
        return out;
    }

    private static InternetAddress address(EmailAddress a) throws UnsupportedEncodingException, MessagingException {
        InternetAddress address = new InternetAddress(a.address(), a.displayName(), UTF_8);
        address.validate();
        return address;
    }

    private String sentDetail(String messageId, SmtpConnectionPool.Connection connection) {
        ObjectNode detail = json.createObjectNode();
        detail.put("transport", NAME);
        detail.put("messageId", messageId);
        detail.put("replyCode", connection.transport.getLastReturnCode());
        // The final reply often carries the server's queue id, which support can quote to the mail admin.
        detail.put("reply", Text.bounded(connection.transport.getLastServerResponse(), 200));
        return detail.toString();
    }

    static Properties sessionProperties(SmtpConfig c) {
        Properties p = new Properties();
        p.setProperty("mail.transport.protocol", "smtp");
        p.setProperty("mail.smtp.host", c.host());
        p.setProperty("mail.smtp.port", Integer.toString(c.port()));
        p.setProperty("mail.smtp.connectiontimeout", Long.toString(c.connectTimeout().toMillis()));
        p.setProperty("mail.smtp.timeout", Long.toString(c.readTimeout().toMillis()));
        p.setProperty("mail.smtp.writetimeout", Long.toString(c.writeTimeout().toMillis()));
        p.setProperty("mail.smtp.from", c.from().address());
        // the EHLO/HELO name; without it Angus says what InetAddress.getLocalHost() says, often "localhost"
        p.setProperty("mail.smtp.localhost", c.heloName());
        p.setProperty("mail.smtp.auth", Boolean.toString(c.authenticates()));
        // Do not wait for the reply to QUIT: closing a pooled connection should not block a sender.
        p.setProperty("mail.smtp.quitwait", "false");
        // Angus (2.0.3+) checks the host name through the socket's endpoint identification, so a
        // certificate for another host fails the TLS handshake itself, with or without a truststore.
        p.setProperty("mail.smtp.ssl.checkserveridentity", "true");
        // Angus would otherwise answer a failed TLS handshake by connecting again with the JDK's
        // default socket factory: a second connection, other trust, and the first failure's cause lost.
        p.setProperty("mail.smtp.socketFactory.fallback", "false");
        if (c.trustStore() != null) {
            // Used for implicit TLS and for STARTTLS alike; trusts exactly the configured store.
            p.put("mail.smtp.ssl.socketFactory", c.trustStore().sslContext().getSocketFactory());
        }
        switch (c.security()) {
            case STARTTLS -> {
                p.setProperty("mail.smtp.starttls.enable", "true");
                p.setProperty("mail.smtp.starttls.required", "true");
            }
            case TLS -> p.setProperty("mail.smtp.ssl.enable", "true");
            case NONE -> {
                // plain text, e.g. a relay on localhost
            }
        }
        return p;
    }
}
