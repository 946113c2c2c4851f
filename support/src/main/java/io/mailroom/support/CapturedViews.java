package io.mailroom.support;

import io.mailroom.email.transport.capture.CapturedMail;

import javax.sql.DataSource;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Optional;

/**
 * Support's reads of mail the staging transport {@code capture} stored instead of sending: the list,
 * newest first, and one message taken apart (headers, text, HTML) or as it would have gone out.
 * Reading a message's bodies needs {@code viewer}, as an email's rendering does; the raw message
 * (everything, attachments included) is {@code support}'s, like the other downloads of content.
 */
public final class CapturedViews {

    private final SupportTx db;

    CapturedViews(DataSource dataSource, Duration statementTimeout) {
        this.db = new SupportTx(dataSource, statementTimeout);
    }

    /** One captured email in a list. */
    public record Item(long id, String key, Instant capturedAt, String from, String recipients, String subject,
                       String messageId, int bytes) {
        /** What the capture transport answered as the provider's id, and the idempotency record holds. */
        @com.fasterxml.jackson.annotation.JsonProperty("providerMessageId")
        public String providerMessageId() {
            return "capture:" + id;
        }

        static Item of(CapturedMail.Summary s) {
            return new Item(s.id(), s.key(), s.capturedAt(), s.sender(), s.recipients(), s.subject(), s.messageId(), s.bytes());
        }
    }

    /** A page of captured mail; {@code nextBefore} continues it ({@code ?before=}), null on the last page. */
    public record Page(List<Item> emails, Long nextBefore) {
    }

    /** One captured email taken apart; {@code html} is the HTML part verbatim (show it only sandboxed), or null. */
    public record Captured(Item email, List<CapturedMail.Parsed.Header> headers, String text, String html) {
    }

    public Page list(String before, String limit) {
        Long beforeId = Params.optionalId(SupportParams.BEFORE, before);
        int n = Params.limit(SupportParams.LIMIT, limit);
        List<Item> items = db.read(tx -> CapturedMail.list(tx, beforeId, n)).stream().map(Item::of).toList();
        return new Page(items, items.size() < n ? null : items.getLast().id());
    }

    public Optional<Captured> one(String key) {
        return db.read(tx -> CapturedMail.find(tx, key)).map(s -> {
            CapturedMail.Parsed p = CapturedMail.parse(s.raw());
            return new Captured(Item.of(s.summary()), p.headers(), p.text(), p.html());
        });
    }

    /** The stored message as it would have been sent (RFC 5322 bytes), or empty. */
    public Optional<byte[]> raw(String key) {
        return db.read(tx -> CapturedMail.find(tx, key)).map(CapturedMail.Stored::raw);
    }
}
