package io.mailroom.email.transport.smtp;

import io.mailroom.email.Text;
import io.mailroom.email.transport.SendResult;
import jakarta.mail.AuthenticationFailedException;
import jakarta.mail.MessagingException;
import org.eclipse.angus.mail.smtp.SMTPAddressFailedException;
import org.eclipse.angus.mail.smtp.SMTPSendFailedException;
import org.eclipse.angus.mail.smtp.SMTPSenderFailedException;
import org.eclipse.angus.mail.util.MailConnectException;

import javax.net.ssl.SSLException;
import java.util.IdentityHashMap;
import java.util.Map;
import java.util.Set;

/**
 * Classifies SMTP failures by reply code and exception type, never by reply text.
 *
 * <ul>
 *   <li>4xx: transient (the server asks us to try later), 5xx: permanent for this email;</li>
 *   <li>a 4xx at RCPT (greylisting, mailbox busy), to DATA or after the message data is about this
 *       email ({@link SendResult.Scope#EMAIL}): it does not count toward the circuit breaker and is
 *       not retried within the call. 421 (the server is closing the channel), a 4xx to MAIL FROM
 *       (our sender, the same for every email), any failure to connect, TLS and timeouts are about
 *       the provider ({@link SendResult.Scope#PROVIDER});</li>
 *   <li>530/534/535/538 (authentication required, mechanism too weak, credentials invalid,
 *       encryption required) and {@link AuthenticationFailedException}: misconfigured;</li>
 *   <li>a 5xx while opening the session (greeting, EHLO, STARTTLS), or required STARTTLS missing
 *       from the server's EHLO capabilities: misconfigured, because every email would fail the same way;</li>
 *   <li>a failed TLS handshake (implicit TLS or STARTTLS; an untrusted certificate, or one for
 *       another host name): transient {@code smtp-tls}, counted by the breaker;</li>
 *   <li>no reply code: transient before DATA (nothing was accepted), ambiguous once the message
 *       data was being written (the server may have queued it).</li>
 * </ul>
 * A 4xx after DATA is transient but not retried within the attempt: SMTP is never repeated quickly
 * once a server has seen the message data.
 */
final class SmtpFailures {

    static final String IO_BEFORE_DATA = "smtp-io";
    static final String TLS = "smtp-tls";
    private static final int REPLY_TEXT_MAX = 300;
    private static final Set<Integer> AUTH_CODES = Set.of(530, 534, 535, 538);
    /** "Service not available, closing transmission channel": about the server, whenever it comes. */
    private static final int SERVICE_NOT_AVAILABLE = 421;

    private SmtpFailures() {
    }

    static SendResult connectFailed(MessagingException e, int lastReturnCode, boolean startTlsUnavailable, String hostPort) {
        return connectFailed(e, lastReturnCode, startTlsUnavailable, hostPort, "localhost");
    }

    static SendResult connectFailed(MessagingException e, int lastReturnCode, boolean startTlsUnavailable, String hostPort,
                                    String heloName) {
        if (startTlsUnavailable) {
            return new SendResult.Misconfigured("smtp-starttls-unavailable", "SMTP server " + hostPort
                    + " does not offer STARTTLS, which MAILROOM_SMTP_SECURITY=STARTTLS requires (wrong port or security setting?)");
        }
        if (find(e, SSLException.class) != null) {
            return new SendResult.Transient(TLS, "TLS handshake with " + hostPort + " failed: " + rootCause(e)
                    + " (is the certificate issued by a CA in MAILROOM_SMTP_TRUSTSTORE, or the JDK's, and for MAILROOM_SMTP_HOST?)");
        }
        int code = replyCode(e);
        if (code < 0 && lastReturnCode >= 400 && lastReturnCode < 600) {
            code = lastReturnCode;
        }
        if (e instanceof AuthenticationFailedException) {
            if (code >= 400 && code < 500) {
                return new SendResult.Transient("smtp-" + code, "temporary authentication failure at " + hostPort);
            }
            return new SendResult.Misconfigured(code > 0 ? "smtp-" + code : "smtp-auth",
                    "SMTP authentication failed at " + hostPort + " (check MAILROOM_SMTP_USERNAME / MAILROOM_SMTP_PASSWORD)");
        }
        if (e instanceof MailConnectException) {
            return new SendResult.Transient("smtp-connect", "cannot connect to " + hostPort + ": " + rootCause(e));
        }
        if (AUTH_CODES.contains(code)) {
            return new SendResult.Misconfigured("smtp-" + code, "SMTP server " + hostPort + " refused the session with reply " + code
                    + " (authentication: check MAILROOM_SMTP_USERNAME / MAILROOM_SMTP_PASSWORD)");
        }
        if (code >= 500 && code < 600) {
            return new SendResult.Misconfigured("smtp-" + code, "SMTP server " + hostPort + " refused the session with reply " + code
                    + " (to its greeting, EHLO/HELO or STARTTLS; if it refused our HELO name '" + heloName
                    + "', set MAILROOM_SMTP_HELO_NAME to this host's fully qualified domain name)");
        }
        if (code >= 400) {
            return new SendResult.Transient("smtp-" + code, "SMTP server " + hostPort + " deferred the session with reply " + code);
        }
        return new SendResult.Transient("smtp-connect", "cannot open an SMTP session with " + hostPort + ": " + rootCause(e));
    }

    /**
     * What a classification needs to know of the session beside the reply: the EHLO name we gave,
     * and whether this server accepted a recipient of ours since it last refused the session (then
     * a 5.5.x/5.7.x at RCPT is not "the same for every recipient", and is about that recipient).
     */
    record Session(String heloName, boolean recipientAcceptedSinceRefusal) {
    }

    static SendResult sendFailed(MessagingException e, boolean dataStarted) {
        return sendFailed(e, dataStarted, new Session("localhost", false));
    }

    static SendResult sendFailed(MessagingException e, boolean dataStarted, Session session) {
        SMTPAddressFailedException rcpt = find(e, SMTPAddressFailedException.class);
        if (rcpt != null) {
            int code = rcpt.getReturnCode();
            String reply = "recipient refused: " + Text.bounded(rcpt.getMessage(), REPLY_TEXT_MAX);
            if (code == SERVICE_NOT_AVAILABLE) {
                return new SendResult.Transient("smtp-" + code, "server closing the session at RCPT: " + reply);
            }
            if (code >= 400 && code < 500) {
                // About this mailbox (greylisting, mailbox busy or full). Greylisting wants minutes,
                // so no quick retry within the call: the outbox backoff brings it back.
                return new SendResult.Transient("smtp-" + code, reply, null, false, SendResult.Scope.EMAIL);
            }
            if (code >= 500 && code < 600) {
                String status = enhancedStatus(rcpt.getMessage(), code);
                if (aboutTheSession(code, status) && !session.recipientAcceptedSinceRefusal()) {
                    return sessionRefused(code, status, reply, session, atRcptHint(code, status, session));
                }
                // 5.1.x (no such user), 5.2.x (mailbox): this recipient. A 5.5.x/5.7.x while this
                // server has accepted other recipients from us is not "the same 5xx for every
                // recipient": it is about this one (e.g. a mailbox that takes no mail from us).
                return new SendResult.Permanent("smtp-" + code, reply);
            }
        }
        int code = replyCode(e);
        String reply = Text.bounded(e.getMessage(), REPLY_TEXT_MAX);
        if (code >= 500 && code < 600 && atMailFrom(e) && aboutThisMessage(code, enhancedStatus(e.getMessage(), code))) {
            // MAIL FROM carries this message's SIZE too: 552 / X.3.4 (too big) is this email's, not the session's;
            // refusing the session for it would halt the transport for every email behind one large one
            return new SendResult.Permanent("smtp-" + code, "message refused: " + reply);
        }
        if (code >= 500 && code < 600 && !AUTH_CODES.contains(code) && atMailFrom(e) && !session.recipientAcceptedSinceRefusal()) {
            // MAIL FROM carries our envelope sender, the same for every email: not this email's fault
            return sessionRefused(code, enhancedStatus(e.getMessage(), code), "sender refused: " + reply, session,
                    "the server refused our envelope sender: check MAILROOM_SMTP_FROM (and MAILROOM_SMTP_VERP)");
        }
        if (AUTH_CODES.contains(code)) {
            return new SendResult.Misconfigured("smtp-" + code, "SMTP server requires authentication: " + reply);
        }
        if (code == SERVICE_NOT_AVAILABLE) {
            return new SendResult.Transient("smtp-" + code, "server closing the session: " + reply, null, !dataStarted);
        }
        if (code >= 400 && code < 500 && atMailFrom(e)) {
            // MAIL FROM carries our envelope sender, the same for every email (with VERP the same
            // domain and prefix): a deferral there is about us at this server, not about one recipient.
            return new SendResult.Transient("smtp-" + code, "sender deferred: " + reply);
        }
        if (code >= 400 && code < 500) {
            // The reply to DATA or to the message itself: the server judged this message.
            return new SendResult.Transient("smtp-" + code, (dataStarted ? "message deferred after DATA: " : "message deferred: ") + reply,
                    null, false, SendResult.Scope.EMAIL);
        }
        if (code >= 500 && code < 600) {
            return new SendResult.Permanent("smtp-" + code, "message refused: " + reply);
        }
        if (dataStarted) {
            return new SendResult.Ambiguous("no final SMTP reply after the message data was sent (" + rootCause(e) + ")");
        }
        return new SendResult.Transient(IO_BEFORE_DATA, "SMTP session failed before DATA (" + rootCause(e) + ")");
    }

    /**
     * Whether a 5xx at RCPT is about the session rather than the recipient, by reply code and
     * RFC 3463 enhanced status: X.5.x is the mail protocol (our commands, e.g. Postfix's
     * {@code 504 5.5.2 <localhost>: Helo command rejected}; the recipients Mailroom sends to are
     * well-formed by {@code MailboxRules}), X.7.x security or policy ({@code 554 5.7.1} relay
     * access denied, {@code 530 5.7.0} authentication required); 530 and 504 without an enhanced
     * code likewise. X.1.x (addressing: 5.1.1 user unknown) and X.2.x (mailbox) are the recipient's.
     */
    static boolean aboutTheSession(int code, String status) {
        if (status == null) {
            return code == 530 || code == 504;
        }
        return status.startsWith("5.5.") || status.startsWith("5.7.");
    }

    /**
     * Whether a 5xx to MAIL FROM judges this message rather than our sender: 552 (storage exceeded:
     * the SIZE the command declared) or an RFC 3463 X.3.x status (mail system: X.3.4 message too big).
     */
    static boolean aboutThisMessage(int code, String status) {
        return code == 552 || (status != null && status.startsWith("5.3."));
    }

    /**
     * The RFC 3463 enhanced status code a reply carries after its reply code ({@code 5.5.2} of
     * {@code "504 5.5.2 <localhost>: Helo command rejected"}), or null: its class must match the
     * reply code's first digit (RFC 2034), else it is reply text, not a status.
     */
    static String enhancedStatus(String reply, int code) {
        if (reply == null) {
            return null;
        }
        java.util.regex.Matcher m = ENHANCED.matcher(reply.strip());
        if (!m.lookingAt() || (code > 0 && m.group(1).charAt(0) != Integer.toString(code).charAt(0))) {
            return null;
        }
        return m.group(1);
    }

    private static final java.util.regex.Pattern ENHANCED = java.util.regex.Pattern.compile("\\d{3}[ -]([245]\\.\\d{1,3}\\.\\d{1,3})(?=\\s|$)");

    private static String atRcptHint(int code, String status, Session session) {
        if (code == 530 || "5.7.0".equals(status)) {
            return "the server wants authentication: set MAILROOM_SMTP_USERNAME and MAILROOM_SMTP_PASSWORD"
                    + " (MAILROOM_SMTP_SECURITY=starttls on port 587)";
        }
        if (status == null || status.startsWith("5.5.")) {
            return "relay refused our HELO name '" + session.heloName() + "': set MAILROOM_SMTP_HELO_NAME to this host's"
                    + " fully qualified domain name";
        }
        return "the server does not accept mail from this client (relaying denied or a policy about us): allow this"
                + " host in the relay's rules (Postfix: mynetworks, smtpd_relay_restrictions), or authenticate with"
                + " MAILROOM_SMTP_USERNAME / MAILROOM_SMTP_PASSWORD";
    }

    private static SendResult sessionRefused(int code, String status, String reply, Session session, String hint) {
        return new SendResult.Transient("smtp-" + code, "SMTP server refused the session, not the email ("
                + code + (status == null ? "" : " " + status) + "; " + hint + "): " + reply, null, false, SendResult.Scope.SESSION);
    }

    /**
     * Whether the session is still in a known, clean state after {@code e}: a recipient refused
     * with a 4xx/5xx reply at RCPT (but not 421, the server closing). Angus, and the pipelined path
     * of {@link PipeliningSmtpTransport}, answer such a refusal with RSET before they throw, so the
     * next message starts a fresh transaction on the same connection; one customer's bad mailbox
     * does not cost a reconnect (and a TLS handshake). The caller still checks that the connection
     * is open: it is closed when RSET failed.
     */
    static boolean leavesSessionUsable(MessagingException e) {
        SMTPAddressFailedException rcpt = find(e, SMTPAddressFailedException.class);
        if (rcpt == null) {
            return false;
        }
        int code = rcpt.getReturnCode();
        return code >= 400 && code < 600 && code != SERVICE_NOT_AVAILABLE;
    }

    /**
     * Whether the reply was to MAIL FROM. Angus chains an {@link SMTPSenderFailedException} only for
     * 501/503/550/551/553, so a 4xx is recognised by the command it answered (ours, not reply text).
     */
    private static boolean atMailFrom(MessagingException e) {
        if (find(e, SMTPSenderFailedException.class) != null) {
            return true;
        }
        SMTPSendFailedException send = find(e, SMTPSendFailedException.class);
        String command = send == null ? null : send.getCommand();
        return command != null && command.regionMatches(true, 0, "MAIL FROM", 0, 9);
    }

    /** A connection failure without any reply code, before the message data: the server has nothing. */
    static boolean isIoBeforeData(SendResult result) {
        return result instanceof SendResult.Transient t && t.code().equals(IO_BEFORE_DATA);
    }

    /** The first SMTP reply code found in the exception chain, or -1. */
    static int replyCode(Throwable e) {
        SMTPSendFailedException send = find(e, SMTPSendFailedException.class);
        if (send != null) {
            return send.getReturnCode();
        }
        SMTPSenderFailedException sender = find(e, SMTPSenderFailedException.class);
        if (sender != null) {
            return sender.getReturnCode();
        }
        SMTPAddressFailedException rcpt = find(e, SMTPAddressFailedException.class);
        return rcpt == null ? -1 : rcpt.getReturnCode();
    }

    static String rootCause(Throwable e) {
        Throwable t = e;
        Map<Throwable, Boolean> seen = new IdentityHashMap<>();
        while (t.getCause() != null && seen.put(t, Boolean.TRUE) == null) {
            t = t.getCause();
        }
        String message = t.getMessage();
        return t.getClass().getSimpleName() + (message == null ? "" : ": " + Text.bounded(message, 200));
    }

    // MessagingException chains through getNextException(), which Jakarta Mail also reports as getCause().
    private static <T extends Throwable> T find(Throwable e, Class<T> type) {
        Map<Throwable, Boolean> seen = new IdentityHashMap<>();
        for (Throwable t = e; t != null && seen.put(t, Boolean.TRUE) == null; ) {
            if (type.isInstance(t)) {
                return type.cast(t);
            }
            t = t instanceof MessagingException me && me.getNextException() != null ? me.getNextException() : t.getCause();
        }
        return null;
    }
}
