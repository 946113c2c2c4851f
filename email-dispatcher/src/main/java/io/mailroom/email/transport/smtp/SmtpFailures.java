package io.mailroom.email.transport.smtp;

import io.mailroom.email.Text;
import io.mailroom.email.transport.SendResult;
import jakarta.mail.AuthenticationFailedException;
import jakarta.mail.MessagingException;
import org.eclipse.angus.mail.smtp.SMTPAddressFailedException;
import org.eclipse.angus.mail.smtp.SMTPSendFailedException;
import org.eclipse.angus.mail.smtp.SMTPSenderFailedException;
import org.eclipse.angus.mail.util.MailConnectException;

import java.util.IdentityHashMap;
import java.util.Map;
import java.util.Set;

/**
 * Classifies SMTP failures by reply code and exception type, never by reply text.
 *
 * <ul>
 *   <li>4xx: transient (the server asks us to try later), 5xx: permanent for this email;</li>
 *   <li>530/534/535/538 (authentication required, mechanism too weak, credentials invalid,
 *       encryption required) and {@link AuthenticationFailedException}: misconfigured;</li>
 *   <li>a 5xx while opening the session (greeting, EHLO, STARTTLS), or required STARTTLS missing
 *       from the server's EHLO capabilities: misconfigured, because every email would fail the same way;</li>
 *   <li>no reply code: transient before DATA (nothing was accepted), ambiguous once the message
 *       data was being written (the server may have queued it).</li>
 * </ul>
 * A 4xx after DATA is transient but not retried within the attempt: SMTP is never repeated quickly
 * once a server has seen the message data.
 */
final class SmtpFailures {

    static final String IO_BEFORE_DATA = "smtp-io";
    private static final int REPLY_TEXT_MAX = 300;
    private static final Set<Integer> AUTH_CODES = Set.of(530, 534, 535, 538);

    private SmtpFailures() {
    }

    static SendResult connectFailed(MessagingException e, int lastReturnCode, boolean startTlsUnavailable, String hostPort) {
        if (startTlsUnavailable) {
            return new SendResult.Misconfigured("smtp-starttls-unavailable", "SMTP server " + hostPort
                    + " does not offer STARTTLS, which MAILROOM_SMTP_SECURITY=STARTTLS requires (wrong port or security setting?)");
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
        if (AUTH_CODES.contains(code) || (code >= 500 && code < 600)) {
            return new SendResult.Misconfigured("smtp-" + code, "SMTP server " + hostPort + " refused the session with reply " + code);
        }
        if (code >= 400) {
            return new SendResult.Transient("smtp-" + code, "SMTP server " + hostPort + " deferred the session with reply " + code);
        }
        return new SendResult.Transient("smtp-connect", "cannot open an SMTP session with " + hostPort + ": " + rootCause(e));
    }

    static SendResult sendFailed(MessagingException e, boolean dataStarted) {
        SMTPAddressFailedException rcpt = find(e, SMTPAddressFailedException.class);
        if (rcpt != null) {
            int code = rcpt.getReturnCode();
            String reply = "recipient refused: " + Text.bounded(rcpt.getMessage(), REPLY_TEXT_MAX);
            if (code >= 400 && code < 500) {
                return new SendResult.Transient("smtp-" + code, reply);
            }
            if (code >= 500 && code < 600) {
                return new SendResult.Permanent("smtp-" + code, reply);
            }
        }
        int code = replyCode(e);
        String reply = Text.bounded(e.getMessage(), REPLY_TEXT_MAX);
        if (AUTH_CODES.contains(code)) {
            return new SendResult.Misconfigured("smtp-" + code, "SMTP server requires authentication: " + reply);
        }
        if (code >= 400 && code < 500) {
            return dataStarted
                    ? new SendResult.Transient("smtp-" + code, "message deferred after DATA: " + reply, null, false)
                    : new SendResult.Transient("smtp-" + code, "message deferred: " + reply);
        }
        if (code >= 500 && code < 600) {
            return new SendResult.Permanent("smtp-" + code, "message refused: " + reply);
        }
        if (dataStarted) {
            return new SendResult.Ambiguous("no final SMTP reply after the message data was sent (" + rootCause(e) + ")");
        }
        return new SendResult.Transient(IO_BEFORE_DATA, "SMTP session failed before DATA (" + rootCause(e) + ")");
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
