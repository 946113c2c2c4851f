package io.mailroom.email.transport.capture;

import io.mailroom.db.jooq.tables.EmailCapture;
import io.mailroom.delivery.mime.MimeStreams;
import io.mailroom.outbox.maintenance.EffectPresence;
import io.mailroom.outbox.maintenance.RetentionStep;
import jakarta.mail.BodyPart;
import jakarta.mail.Header;
import jakarta.mail.MessagingException;
import jakarta.mail.Multipart;
import jakarta.mail.Part;
import jakarta.mail.Session;
import jakarta.mail.internet.MimeMessage;
import jakarta.mail.internet.MimeUtility;
import org.jooq.DSLContext;
import org.jooq.Field;
import org.jooq.Record;
import org.jooq.impl.DSL;

import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.io.UnsupportedEncodingException;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Enumeration;
import java.util.List;
import java.util.Optional;
import java.util.Properties;

import static io.mailroom.db.jooq.Tables.EMAIL_CAPTURE;
import static org.jooq.impl.DSL.select;

/**
 * Reads, retention and erasure of {@code email_capture} ({@link CaptureTransport} writes it), for
 * support's "Captured mail" page and API and for the service's history cleaner. A capture is history
 * of its effect: it leaves with it, and an erased address takes the captures of its emails along
 * (the raw message cannot be redacted part by part and still be the message that was built).
 */
public final class CapturedMail {

    /** The most captures one page lists. */
    public static final int MAX_PAGE = 200;
    private static final EmailCapture C = EMAIL_CAPTURE;
    /** The stored message's size in bytes; jOOQ's octetLength takes text only. */
    private static final Field<Integer> SIZE = DSL.field("octet_length({0})", Integer.class, C.RAW_MIME);

    private CapturedMail() {
    }

    /** One captured email without its bytes. */
    public record Summary(long id, String key, Instant capturedAt, String sender, String recipients, String subject,
                          String messageId, int bytes) {
    }

    /** One captured email with its raw MIME message. */
    public record Stored(Summary summary, byte[] raw) {
    }

    /** A captured message taken apart for display: its headers in order, its text and HTML parts. */
    public record Parsed(List<Header> headers, String text, String html) {
        public record Header(String name, String value) {
        }
    }

    /** Newest first; {@code beforeId} (exclusive) continues a page, null starts at the newest. */
    public static List<Summary> list(DSLContext tx, Long beforeId, int limit) {
        if (limit < 1 || limit > MAX_PAGE) {
            throw new IllegalArgumentException("limit must be 1.." + MAX_PAGE + ", got " + limit);
        }
        return tx.select(C.ID, C.IDEMPOTENCY_KEY, C.CAPTURED_AT, C.SENDER, C.RECIPIENTS, C.SUBJECT, C.MESSAGE_ID,
                        SIZE)
                .from(C)
                .where(beforeId == null ? DSL.noCondition() : C.ID.lt(beforeId))
                .orderBy(C.ID.desc())
                .limit(limit)
                .fetch(CapturedMail::summary);
    }

    /** The capture of {@code key}, if there is one. */
    public static Optional<Stored> find(DSLContext tx, String key) {
        return tx.select(C.ID, C.IDEMPOTENCY_KEY, C.CAPTURED_AT, C.SENDER, C.RECIPIENTS, C.SUBJECT, C.MESSAGE_ID,
                        SIZE, C.RAW_MIME)
                .from(C).where(C.IDEMPOTENCY_KEY.eq(key))
                .fetchOptional(r -> new Stored(summary(r), r.get(C.RAW_MIME)));
    }

    private static Summary summary(Record r) {
        return new Summary(r.get(C.ID), r.get(C.IDEMPOTENCY_KEY), r.get(C.CAPTURED_AT), r.get(C.SENDER), r.get(C.RECIPIENTS),
                r.get(C.SUBJECT), r.get(C.MESSAGE_ID), r.get(7, Integer.class));
    }

    /** Takes a stored message apart: headers (decoded as Jakarta Mail reads them), the first text/plain and text/html parts. */
    public static Parsed parse(byte[] raw) {
        MimeStreams.pin();
        try {
            MimeMessage m = new MimeMessage(Session.getInstance(new Properties()), new ByteArrayInputStream(raw));
            List<Parsed.Header> headers = new ArrayList<>();
            for (Enumeration<Header> e = m.getAllHeaders(); e.hasMoreElements(); ) {
                Header h = e.nextElement();
                headers.add(new Parsed.Header(h.getName(), decode(h.getValue())));
            }
            String[] parts = new String[2];
            collect(m, parts);
            return new Parsed(headers, parts[0], parts[1]);
        } catch (MessagingException | IOException e) {
            throw new IllegalStateException("stored message cannot be read: " + e.getMessage(), e);
        }
    }

    private static String decode(String value) {
        try {
            return MimeUtility.decodeText(MimeUtility.unfold(value));
        } catch (UnsupportedEncodingException e) {
            return value;
        }
    }

    private static void collect(Part part, String[] into) throws MessagingException, IOException {
        if (part.isMimeType("text/plain") && into[0] == null && !Part.ATTACHMENT.equalsIgnoreCase(part.getDisposition())) {
            into[0] = (String) part.getContent();
        } else if (part.isMimeType("text/html") && into[1] == null && !Part.ATTACHMENT.equalsIgnoreCase(part.getDisposition())) {
            into[1] = (String) part.getContent();
        } else if (part.isMimeType("multipart/*")) {
            Multipart mp = (Multipart) part.getContent();
            for (int i = 0; i < mp.getCount(); i++) {
                BodyPart p = mp.getBodyPart(i);
                collect(p, into);
            }
        }
    }

    /** Erasure: deletes the captures of these keys (emails to or mentioning the erased address); returns the rows. */
    public static int erase(DSLContext tx, Collection<String> keys) {
        return keys.isEmpty() ? 0 : tx.deleteFrom(C).where(C.IDEMPOTENCY_KEY.in(keys)).execute();
    }

    /** The retention of {@code email_capture}: a capture leaves with its effect, or once older than the cutoff with no effect of its key. */
    public static RetentionStep retention() {
        return new RetentionStep() {
            @Override
            public String table() {
                return "email_capture";
            }

            @Override
            public int deleteWithEffects(DSLContext tx, List<DeletedEffect> effects, Instant cutoff) {
                var c = EMAIL_CAPTURE.as("c");
                return tx.deleteFrom(C).where(C.IDEMPOTENCY_KEY.in(select(c.IDEMPOTENCY_KEY).from(c)
                                .where(c.IDEMPOTENCY_KEY.in(effects.stream().map(DeletedEffect::idempotencyKey).toList()))
                                .and(c.CAPTURED_AT.lt(cutoff))
                                .forUpdate().skipLocked()))
                        .execute();
            }

            @Override
            public int deleteOld(DSLContext tx, Instant cutoff, int limit) {
                var c = EMAIL_CAPTURE.as("c");
                return tx.deleteFrom(C).where(C.IDEMPOTENCY_KEY.in(select(c.IDEMPOTENCY_KEY).from(c)
                                .where(c.CAPTURED_AT.lt(cutoff))
                                .and(EffectPresence.noEffectWithKey(c.IDEMPOTENCY_KEY))
                                .orderBy(c.CAPTURED_AT)
                                .limit(limit)
                                .forUpdate().skipLocked()))
                        .execute();
            }
        };
    }
}
