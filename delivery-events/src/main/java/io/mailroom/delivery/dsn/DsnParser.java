package io.mailroom.delivery.dsn;

import io.mailroom.db.sql.PgValues;
import io.mailroom.delivery.BounceType;
import io.mailroom.delivery.DeliveryEvent;
import io.mailroom.delivery.DeliveryEventStore;
import io.mailroom.delivery.DeliveryKind;
import io.mailroom.delivery.mime.MimeStreams;
import io.mailroom.delivery.webhook.DeliveryEventAdapter;
import io.mailroom.delivery.webhook.MalformedEventException;
import jakarta.mail.BodyPart;
import jakarta.mail.MessagingException;
import jakarta.mail.Multipart;
import jakarta.mail.Session;
import jakarta.mail.internet.ContentType;
import jakarta.mail.internet.InternetHeaders;
import jakarta.mail.internet.MailDateFormat;
import jakarta.mail.internet.MimeMessage;
import jakarta.mail.internet.MimeUtility;

import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.PushbackInputStream;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.text.ParseException;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.Locale;
import java.util.Properties;
import java.util.function.Function;

/**
 * Reads an RFC 3464 delivery status notification (a bounce, a delay warning, a delivery report)
 * with Jakarta Mail: the {@code multipart/report; report-type=delivery-status} message, its
 * {@code message/delivery-status} part (one block of per-message fields, then one block per
 * recipient, each parsed as a header block by {@link InternetHeaders}), and the returned message
 * or its headers ({@code message/rfc822}, {@code text/rfc822-headers}), whose {@code Message-ID} is
 * the one Mailroom's SMTP transport derived from the idempotency key and stored on send.
 *
 * <p>Per recipient: {@code Action: failed} with a {@code 5.x.x} status is a hard bounce, with a
 * {@code 4.x.x} status (or none) a soft one; {@code delayed} is deferred; {@code delivered},
 * {@code relayed} and {@code expanded} are delivered. The delivery id that makes ingestion
 * idempotent is the report's own {@code Message-ID}, or a SHA-256 of its bytes when it has none.
 * {@code message/global-delivery-status} (RFC 6533, UTF-8 addresses) is read the same way.
 *
 * <p>With a VERP return path ({@code MAILROOM_SMTP_VERP}) the address the report was delivered to
 * carries the idempotency key: the address the mail server names (Postfix pipe's
 * {@code ${recipient}}), else {@code Delivered-To}, {@code X-Original-To}, {@code To}. The first
 * one the given decoder recognizes sets the key on every event, so the report matches its email
 * even when it returned neither the message nor its headers.
 */
public final class DsnParser {

    private DsnParser() {
    }

    /**
     * One report.
     *
     * @param deliveryId        the report's Message-ID, or {@code sha256:<hex>} of its bytes
     * @param originalMessageId the returned message's Message-ID, null when the report returned none
     */
    public record Dsn(String deliveryId, String originalMessageId, String reportingMta, List<DeliveryEvent> events) {
    }

    /** @throws MalformedEventException naming what is missing when the bytes are not a delivery status report */
    public static Dsn parse(byte[] raw) throws MalformedEventException {
        return parse(raw, null, null);
    }

    /**
     * @param keyOfAddress the idempotency key a VERP address carries, null for an address that is
     *                     not one; null when VERP is off
     * @param deliveredTo  the address the mail server delivered the report to, or null
     * @throws MalformedEventException naming what is missing when the bytes are not a delivery status report
     */
    public static Dsn parse(byte[] raw, Function<String, String> keyOfAddress, String deliveredTo) throws MalformedEventException {
        if (raw == null || raw.length == 0) {
            throw new MalformedEventException("body", "is empty");
        }
        MimeStreams.pin();
        try {
            MimeMessage report = new MimeMessage(Session.getInstance(new Properties()), new ByteArrayInputStream(raw));
            ContentType type = new ContentType(report.getContentType());
            if (!type.match("multipart/report")) {
                throw new MalformedEventException("Content-Type", "is " + type.getBaseType()
                        + ", not multipart/report: not a delivery status notification");
            }
            String reportType = type.getParameter("report-type");
            if (reportType != null && !reportType.equalsIgnoreCase("delivery-status")
                    && !reportType.equalsIgnoreCase("global-delivery-status")) {
                throw new MalformedEventException("Content-Type", "report-type is " + reportType + ", not delivery-status");
            }
            if (!(report.getContent() instanceof Multipart parts)) {
                throw new MalformedEventException("body", "the multipart/report has no parts");
            }
            byte[] status = null;
            String originalMessageId = null;
            for (int i = 0; i < parts.getCount(); i++) {
                BodyPart part = parts.getBodyPart(i);
                ContentType pt = new ContentType(part.getContentType());
                if (pt.match("message/delivery-status") || pt.match("message/global-delivery-status")) {
                    status = part.getInputStream().readAllBytes();
                } else if (pt.match("message/rfc822") || pt.match("message/global")) {
                    Object returned = part.getContent();
                    if (returned instanceof MimeMessage m) {
                        originalMessageId = checked(m.getHeader("Message-ID", null), "returned message Message-ID");
                    } else {
                        originalMessageId = messageId(part.getInputStream());
                    }
                } else if (pt.match("text/rfc822-headers") || pt.match("message/global-headers")) {
                    originalMessageId = messageId(part.getInputStream());
                }
            }
            if (status == null) {
                throw new MalformedEventException("message/delivery-status", "the report has no delivery-status part");
            }
            List<InternetHeaders> blocks = blocks(status);
            if (blocks.size() < 2) {
                throw new MalformedEventException("message/delivery-status", "has no per-recipient fields");
            }
            if (blocks.size() - 1 > DeliveryEventAdapter.MAX_EVENTS) {
                throw new MalformedEventException("message/delivery-status", "has " + (blocks.size() - 1)
                        + " recipient blocks; at most " + DeliveryEventAdapter.MAX_EVENTS + " events are taken from one report");
            }
            String reportingMta = value(blocks.getFirst(), "Reporting-MTA", "per-message fields");
            String original = originalMessageId == null ? null : originalMessageId.strip();
            String key = keyOfAddress == null ? null : verpKey(report, keyOfAddress, deliveredTo);
            List<DeliveryEvent> events = new ArrayList<>();
            for (int i = 1; i < blocks.size(); i++) {
                events.add(event(blocks.get(i), i, original, key));
            }
            return new Dsn(deliveryId(checked(report.getHeader("Message-ID", null), "Message-ID"), raw), original, reportingMta, List.copyOf(events));
        } catch (MessagingException e) {
            throw new MalformedEventException("body", "is not a readable MIME message (" + e.getClass().getSimpleName() + ")");
        } catch (IOException e) {
            throw new MalformedEventException("body", "could not be read (" + e.getClass().getSimpleName() + ")");
        }
    }

    private static DeliveryEvent event(InternetHeaders fields, int index, String originalMessageId, String idempotencyKey)
            throws MalformedEventException {
        String at = "recipient block " + index;
        String action = value(fields, "Action", at);
        if (action == null) {
            throw new MalformedEventException(at + " Action", "is required");
        }
        String status = value(fields, "Status", at);
        String statusCode = status == null ? null : status.split("[\\s(]", 2)[0];
        String recipient = address(value(fields, "Final-Recipient", at));
        if (recipient == null) {
            recipient = address(value(fields, "Original-Recipient", at));
        }
        DeliveryKind kind;
        BounceType bounce = null;
        switch (action.strip().toLowerCase(Locale.ROOT)) {
            case "failed" -> {
                kind = DeliveryKind.BOUNCED;
                bounce = statusCode != null && statusCode.startsWith("5") ? BounceType.HARD : BounceType.SOFT;
            }
            case "delayed" -> kind = DeliveryKind.DEFERRED;
            case "delivered", "relayed", "expanded" -> kind = DeliveryKind.DELIVERED;
            default -> kind = DeliveryKind.UNKNOWN;
        }
        String diagnostic = value(fields, "Diagnostic-Code", at);
        return new DeliveryEvent(kind, bounce, "dsn " + action.strip().toLowerCase(Locale.ROOT)
                + (statusCode == null ? "" : " " + statusCode), originalMessageId, idempotencyKey, recipient,
                date(value(fields, "Last-Attempt-Date", at)), diagnostic,
                statusCode == null ? null : "Status " + statusCode);
    }

    private static String verpKey(MimeMessage report, Function<String, String> keyOfAddress, String deliveredTo)
            throws MessagingException {
        List<String> candidates = new ArrayList<>();
        if (deliveredTo != null && !deliveredTo.isBlank()) {
            candidates.add(deliveredTo);
        }
        for (String header : List.of("Delivered-To", "X-Original-To", "To")) {
            String[] values = report.getHeader(header);
            if (values != null) {
                for (String v : values) {
                    candidates.addAll(List.of(MimeUtility.unfold(v).split(",")));
                }
            }
        }
        for (String candidate : candidates) {
            String a = candidate.strip();
            int open = a.lastIndexOf('<');
            int close = a.lastIndexOf('>');
            if (open >= 0 && close > open) {
                a = a.substring(open + 1, close).strip();
            }
            String key = keyOfAddress.apply(a);
            if (key != null) {
                return key;
            }
        }
        return null;
    }

    /** Splits the delivery-status body into its blocks of fields, each read as a header block. */
    private static List<InternetHeaders> blocks(byte[] status) throws MessagingException, IOException {
        List<InternetHeaders> blocks = new ArrayList<>();
        PushbackInputStream in = new PushbackInputStream(new ByteArrayInputStream(status), 2);
        while (true) {
            // blank lines between blocks (some servers write two)
            int c;
            while ((c = in.read()) == '\r' || c == '\n') {
                // skip
            }
            if (c < 0) {
                return blocks;
            }
            in.unread(c);
            InternetHeaders block = new InternetHeaders(in, true); // 8-bit UTF-8 diagnostics (RFC 6533) read as UTF-8
            if (block.getAllHeaderLines().hasMoreElements()) {
                blocks.add(block);
            }
        }
    }

    private static String messageId(InputStream in) throws MessagingException, MalformedEventException {
        return value(new InternetHeaders(in, true), "Message-ID", "returned message");
    }

    /** The field's unfolded, decoded value, or null; refused when a text column could not hold it (U+0000). */
    private static String value(InternetHeaders headers, String name, String where) throws MalformedEventException {
        String v = headers.getHeader(name, null);
        if (v == null) {
            return null;
        }
        try {
            v = MimeUtility.decodeText(MimeUtility.unfold(v));
        } catch (java.io.UnsupportedEncodingException e) {
            v = MimeUtility.unfold(v);
        }
        v = checked(v.strip(), where + " " + name);
        return v.isEmpty() ? null : v;
    }

    private static String checked(String value, String field) throws MalformedEventException {
        var problem = PgValues.textProblem(value);
        if (problem.isPresent()) {
            throw new MalformedEventException(field, problem.get());
        }
        return value;
    }

    /** {@code rfc822; ann@example.com} -> {@code ann@example.com}. */
    private static String address(String typed) {
        if (typed == null) {
            return null;
        }
        int semi = typed.indexOf(';');
        String a = (semi < 0 ? typed : typed.substring(semi + 1)).strip();
        if (a.startsWith("<") && a.endsWith(">")) {
            a = a.substring(1, a.length() - 1);
        }
        return a.isEmpty() ? null : a;
    }

    /**
     * The date, or null when it cannot be read or lies outside the times a column takes
     * ({@link PgValues#timeProblem}): the time of arrival stands in, since a bad date is no reason to
     * lose a bounce (and a mail server handed a refusal would bounce the report to the postmaster).
     */
    private static Instant date(String value) {
        if (value == null) {
            return null;
        }
        try {
            Instant at = new MailDateFormat().parse(value).toInstant();
            return PgValues.timeProblem(at).isPresent() ? null : at;
        } catch (ParseException e) {
            return null;
        }
    }

    /**
     * The report's own Message-ID; a SHA-256 of its bytes without one, and of the Message-ID when it
     * is longer than a delivery id may be (the same report sent again still has the same id).
     */
    private static String deliveryId(String own, byte[] raw) {
        if (own == null || own.isBlank()) {
            return "sha256:" + sha256(raw);
        }
        String id = own.strip();
        return id.length() <= DeliveryEventStore.MAX_DELIVERY_ID ? id
                : "sha256:" + sha256(id.getBytes(java.nio.charset.StandardCharsets.UTF_8));
    }

    private static String sha256(byte[] raw) {
        try {
            return HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256").digest(raw));
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("SHA-256 is required of every Java platform", e);
        }
    }
}
