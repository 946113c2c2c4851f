package io.mailroom.delivery.dsn;

import io.mailroom.delivery.BounceType;
import io.mailroom.delivery.DeliveryEvent;
import io.mailroom.delivery.DeliveryKind;
import jakarta.mail.BodyPart;
import jakarta.mail.MessagingException;
import jakarta.mail.Session;
import jakarta.mail.internet.ContentType;
import jakarta.mail.internet.InternetHeaders;
import jakarta.mail.internet.MailDateFormat;
import jakarta.mail.internet.MimeMessage;
import jakarta.mail.internet.MimeMultipart;
import jakarta.mail.internet.ParseException;

import java.io.BufferedInputStream;
import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Date;
import java.util.HexFormat;
import java.util.List;
import java.util.Locale;
import java.util.Properties;
import java.util.function.Function;
import java.util.regex.Pattern;

/**
 * Reads an RFC 3464 delivery status notification ({@code multipart/report;
 * report-type=delivery-status}) into one {@link DeliveryEvent} per per-recipient block.
 *
 * <p>The MIME structure is parsed by Jakarta Mail; the {@code message/delivery-status} part is a
 * sequence of header blocks (RFC 3464 section 2.1), each read with {@link InternetHeaders} as an
 * MTA writes them (UTF-8 allowed, since Exim and Postfix pass an 8-bit diagnostic through). Angus
 * ships a {@code MultipartReport}/{@code DeliveryStatus} pair in a separate {@code dsn} artifact
 * that is not in this build; the header-block reading it does is the same one used here.
 *
 * <p>The returned message's {@code Message-ID} becomes each event's provider message id exactly as
 * it was written, angle brackets included, since that is the form the SMTP transport stores as
 * {@code idempotency_record.result_ref}.
 */
public final class DsnParser {

    public static final String PROVIDER_EVENT_PREFIX = "dsn.";

    private static final Pattern STATUS = Pattern.compile("([245])\\.\\d{1,3}\\.\\d{1,3}");

    private final Session session = Session.getInstance(new Properties());
    private final Function<String, String> keyOfAddress;

    /**
     * @param keyOfAddress the idempotency key a (VERP) address carries, or null when it carries none;
     *                     applied to the address the DSN was delivered to
     */
    public DsnParser(Function<String, String> keyOfAddress) {
        this.keyOfAddress = keyOfAddress == null ? a -> null : keyOfAddress;
    }

    /** A parser for a setup without VERP: events are matched by the returned Message-ID alone. */
    public DsnParser() {
        this(null);
    }

    /**
     * @param raw       the whole DSN message as delivered (headers and body)
     * @param recipient the address the mail server delivered it to (Postfix pipe's {@code ${recipient}}),
     *                  or null to read it from {@code Delivered-To}, {@code X-Original-To} or {@code To}
     */
    public ParsedDsn parse(byte[] raw, String recipient) throws MalformedDsnException {
        if (raw == null || raw.length == 0) {
            throw new MalformedDsnException("the DSN is empty");
        }
        MimeMessage message;
        MimeMultipart report;
        try {
            message = new MimeMessage(session, new ByteArrayInputStream(raw));
            ContentType type = contentType(message.getContentType(), "the DSN");
            if (!type.match("multipart/report")) {
                throw new MalformedDsnException("not a delivery status notification: Content-Type is "
                        + type.getBaseType() + ", expected multipart/report; report-type=delivery-status");
            }
            String reportType = type.getParameter("report-type");
            if (reportType == null || !reportType.equalsIgnoreCase("delivery-status")) {
                throw new MalformedDsnException("not a delivery status notification: multipart/report has report-type "
                        + (reportType == null ? "(missing)" : "'" + reportType + "'") + ", expected delivery-status");
            }
            if (!(message.getContent() instanceof MimeMultipart mp)) {
                throw new MalformedDsnException("the multipart/report body has no MIME parts (missing boundary?)");
            }
            report = mp;
        } catch (MessagingException | IOException e) {
            throw new MalformedDsnException("the DSN is not a readable MIME message: " + e.getMessage(), e);
        }

        try {
            BodyPart status = null;
            String returnedMessageId = null;
            for (int i = 0; i < report.getCount(); i++) {
                BodyPart part = report.getBodyPart(i);
                ContentType type = contentType(part.getContentType(), "part " + (i + 1));
                if (type.match("message/delivery-status") || type.match("message/global-delivery-status")) {
                    if (status == null) {
                        status = part;
                    }
                } else if (type.match("message/rfc822") || type.match("message/global")
                        || type.match("text/rfc822-headers") || type.match("message/global-headers")) {
                    returnedMessageId = returnedMessageId(part);
                }
            }
            if (status == null) {
                throw new MalformedDsnException("the multipart/report has no message/delivery-status part");
            }
            String key = keyOf(message, recipient);
            List<DeliveryEvent> events = events(status, returnedMessageId, key);
            return new ParsedDsn(deliveryId(message, raw), events);
        } catch (MessagingException | IOException e) {
            throw new MalformedDsnException("the DSN's parts cannot be read: " + e.getMessage(), e);
        }
    }

    private List<DeliveryEvent> events(BodyPart status, String providerMessageId, String key)
            throws MessagingException, IOException, MalformedDsnException {
        List<InternetHeaders> blocks = new ArrayList<>();
        // Buffered so that the end of the part can be seen without losing a byte between blocks.
        try (InputStream in = new BufferedInputStream(status.getInputStream())) {
            // Each call reads one block up to its blank line; the first block is per message.
            while (true) {
                InternetHeaders block = new InternetHeaders(in, true);
                if (block.getAllHeaders().hasMoreElements()) {
                    blocks.add(block);
                } else if (!hasMore(in)) {
                    break;
                }
            }
        }
        if (blocks.size() < 2) {
            throw new MalformedDsnException("the message/delivery-status part has no per-recipient block "
                    + "(expected a per-message block, then a block with Final-Recipient, Action and Status)");
        }
        InternetHeaders perMessage = blocks.getFirst();
        Instant arrival = date(perMessage.getHeader("Arrival-Date", null));
        List<DeliveryEvent> events = new ArrayList<>();
        for (int i = 1; i < blocks.size(); i++) {
            events.add(event(blocks.get(i), i, providerMessageId, key, arrival));
        }
        return events;
    }

    private static boolean hasMore(InputStream in) throws IOException {
        in.mark(1);
        int b = in.read();
        in.reset();
        return b >= 0;
    }

    private DeliveryEvent event(InternetHeaders block, int n, String providerMessageId, String key, Instant arrival)
            throws MalformedDsnException {
        String where = "per-recipient block " + n;
        String recipient = typedAddress(block.getHeader("Final-Recipient", null));
        if (recipient == null) {
            recipient = typedAddress(block.getHeader("Original-Recipient", null));
        }
        if (recipient == null) {
            throw new MalformedDsnException(where + " has no Final-Recipient (nor Original-Recipient)");
        }
        String action = block.getHeader("Action", null);
        if (action == null || action.isBlank()) {
            throw new MalformedDsnException(where + " (" + recipient + ") has no Action");
        }
        action = action.strip().toLowerCase(Locale.ROOT);
        String statusValue = block.getHeader("Status", null);
        if (statusValue == null || statusValue.isBlank()) {
            throw new MalformedDsnException(where + " (" + recipient + ") has no Status");
        }
        // RFC 3464 allows a comment after the code; the code is the first token.
        String statusCode = statusValue.strip().split("[\\s(]", 2)[0];
        if (!STATUS.matcher(statusCode).matches()) {
            throw new MalformedDsnException(where + " (" + recipient + ") has Status '" + statusValue.strip()
                    + "', expected a class.subject.detail code such as 5.1.1");
        }
        DeliveryKind kind;
        BounceType bounceType = null;
        switch (action) {
            case "failed" -> {
                kind = DeliveryKind.BOUNCED;
                // 4.x.x in a failed block: the MTA gave up retrying a temporary condition.
                bounceType = statusCode.startsWith("5") ? BounceType.HARD : BounceType.SOFT;
            }
            case "delayed" -> kind = DeliveryKind.DEFERRED;
            case "delivered", "relayed", "expanded" -> kind = DeliveryKind.DELIVERED;
            default -> kind = DeliveryKind.UNKNOWN;
        }
        String diagnostic = unfold(block.getHeader("Diagnostic-Code", null));
        Instant occurredAt = date(block.getHeader("Last-Attempt-Date", null));
        if (occurredAt == null) {
            occurredAt = arrival;
        }
        String description = "Action: " + action + ", Status: " + statusCode;
        return new DeliveryEvent(kind, bounceType, PROVIDER_EVENT_PREFIX + action, providerMessageId, key, recipient,
                occurredAt, diagnostic, description);
    }

    /** {@code rfc822; ann@example.com} gives {@code ann@example.com}; a missing value gives null. */
    private static String typedAddress(String value) {
        if (value == null) {
            return null;
        }
        String v = unfold(value);
        int semi = v.indexOf(';');
        String address = (semi >= 0 ? v.substring(semi + 1) : v).strip();
        if (address.startsWith("<") && address.endsWith(">")) {
            address = address.substring(1, address.length() - 1).strip();
        }
        return address.isEmpty() ? null : address;
    }

    private static String unfold(String value) {
        return value == null ? null : value.replaceAll("\\r?\\n[ \\t]+", " ").strip();
    }

    private static String returnedMessageId(BodyPart part) throws MessagingException, IOException {
        InternetHeaders headers;
        try (InputStream in = part.getInputStream()) {
            headers = new InternetHeaders(in, true);
        }
        String id = headers.getHeader("Message-ID", null);
        return id == null ? null : unfold(id);
    }

    private String keyOf(MimeMessage message, String recipient) throws MessagingException {
        List<String> candidates = new ArrayList<>();
        if (recipient != null && !recipient.isBlank()) {
            candidates.add(recipient.strip());
        }
        for (String header : List.of("Delivered-To", "X-Original-To", "To")) {
            String[] values = message.getHeader(header);
            if (values != null) {
                for (String v : values) {
                    for (String a : v.split(",")) {
                        candidates.add(a.strip());
                    }
                }
            }
        }
        for (String candidate : candidates) {
            String address = candidate;
            int open = address.lastIndexOf('<');
            int close = address.lastIndexOf('>');
            if (open >= 0 && close > open) {
                address = address.substring(open + 1, close);
            }
            String key = keyOfAddress.apply(address.strip());
            if (key != null) {
                return key;
            }
        }
        return null;
    }

    private static String deliveryId(MimeMessage message, byte[] raw) throws MessagingException {
        String id = message.getHeader("Message-ID", null);
        if (id != null && !id.isBlank()) {
            return unfold(id);
        }
        try {
            return "sha256:" + HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256").digest(raw));
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("SHA-256 is required of every Java platform", e);
        }
    }

    private static Instant date(String value) {
        if (value == null || value.isBlank()) {
            return null;
        }
        try {
            Date d = new MailDateFormat().parse(unfold(value));
            return d == null ? null : d.toInstant();
        } catch (java.text.ParseException e) {
            // A date we cannot read is not a reason to drop the event; the store stamps its own time.
            return null;
        }
    }

    private static ContentType contentType(String value, String what) throws MalformedDsnException {
        if (value == null) {
            throw new MalformedDsnException(what + " has no Content-Type");
        }
        try {
            return new ContentType(value);
        } catch (ParseException e) {
            throw new MalformedDsnException(what + " has an unreadable Content-Type '" + value + "'", e);
        }
    }
}
