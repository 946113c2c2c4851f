package io.mailroom.email.dispatch;

import io.mailroom.db.jooq.tables.EmailRendering;
import org.jooq.DSLContext;
import org.jooq.impl.DSL;

import java.time.Instant;
import java.util.Collection;
import java.util.List;

import static io.mailroom.db.jooq.Tables.EMAIL_RENDERING;

/**
 * Reads of {@code email_rendering} ({@link RenderingStore} writes it) for the modules that show what
 * an email was rendered to. A rendering counts only for the message it was made for: a key used again
 * after its first effect left may still hold the old message's rendering until retention removes it,
 * so every read names the message as well as the key. In the caller's transaction.
 */
public final class RenderingReads {

    private static final EmailRendering G = EMAIL_RENDERING;

    private RenderingReads() {
    }

    /** The message an effect is about: its key and the queue row it was enqueued as. */
    public record MessageRef(String key, long messageId, Instant messageCreatedAt) {
    }

    /** One rendering, without its HTML part (which only {@link #html} reads). */
    public record Summary(String key, String template, String version, String locale, String subject, String text,
                          boolean hasHtml, Instant renderedAt, int attempt) {
    }

    /** The renderings of these messages, by primary key; messages without one are left out. */
    public static List<Summary> of(DSLContext tx, Collection<MessageRef> messages) {
        if (messages.isEmpty()) {
            return List.of();
        }
        var refs = messages.stream()
                .map(m -> DSL.row(m.key(), m.messageId(), m.messageCreatedAt())).toList();
        return tx.select(G.IDEMPOTENCY_KEY, G.TEMPLATE, G.TEMPLATE_VERSION, G.LOCALE, G.SUBJECT, G.TEXT_PART,
                        G.HTML_PART.isNotNull(), G.RENDERED_AT, G.ATTEMPT)
                .from(G)
                .where(G.IDEMPOTENCY_KEY.in(messages.stream().map(MessageRef::key).toList()))
                .and(DSL.row(G.IDEMPOTENCY_KEY, G.MESSAGE_ID, G.MESSAGE_CREATED_AT).in(refs))
                .fetch(r -> new Summary(r.value1(), r.value2(), r.value3(), r.value4(), r.value5(), r.value6(),
                        r.value7(), r.value8(), r.value9()));
    }

    /** The stored HTML part of the message's rendering, or null (no rendering, or one without HTML). */
    public static String html(DSLContext tx, MessageRef message) {
        return tx.select(G.HTML_PART).from(G)
                .where(G.IDEMPOTENCY_KEY.eq(message.key()))
                .and(G.MESSAGE_ID.eq(message.messageId()))
                .and(G.MESSAGE_CREATED_AT.eq(message.messageCreatedAt()))
                .fetchOne(G.HTML_PART);
    }
}
