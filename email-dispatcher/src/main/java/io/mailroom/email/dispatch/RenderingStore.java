package io.mailroom.email.dispatch;

import io.mailroom.email.Email;
import io.mailroom.outbox.ClaimedMessage;
import org.jooq.DSLContext;
import org.jooq.DataType;
import org.jooq.Field;
import org.jooq.impl.DSL;
import org.jooq.impl.SQLDataType;

import java.time.Instant;
import java.util.Comparator;
import java.util.HashSet;
import java.util.List;
import java.util.Objects;
import java.util.Set;

import static io.mailroom.db.jooq.Tables.EMAIL_RENDERING;

/**
 * Writes {@code email_rendering} (V7): what an email was rendered to, one row per outbox message,
 * replaced by every attempt that reaches the provider step. {@link EmailHandler} calls it in the
 * transaction that reserves the idempotency key, so the row is committed before the send.
 *
 * <p>Rows go in as one array per column, unnested in the select list, so a batch of renderings is
 * one statement with the same SQL text as a single one; rows are written in key order, so two
 * overlapping batches lock their rows in the same order.
 */
public final class RenderingStore {

    private static final Field<Instant> NOW = DSL.field(DSL.raw("now()"), SQLDataType.INSTANT);

    /**
     * One email's rendering for one attempt.
     *
     * @param template the template's name, null when the composer used none (a custom composer)
     * @param locale   the BCP 47 tag the template was rendered in, null when not known
     * @param html     the HTML part; null for an email without one
     */
    public record Rendering(String key, long messageId, Instant messageCreatedAt, int attempt, String template,
                            String templateVersion, String locale, String subject, String text, String html) {
        public Rendering {
            Objects.requireNonNull(key, "key");
            Objects.requireNonNull(messageCreatedAt, "messageCreatedAt");
            Objects.requireNonNull(templateVersion, "templateVersion");
            Objects.requireNonNull(subject, "subject");
            Objects.requireNonNull(text, "text");
            if (attempt < 1) {
                throw new IllegalArgumentException("attempt must be at least 1, got " + attempt);
            }
        }

        /** The rendering of {@code message}'s current attempt. */
        public static Rendering of(ClaimedMessage message, EmailComposer.Composed composed) {
            Email email = composed.email();
            EmailComposer.Template t = composed.template();
            return new Rendering(message.idempotencyKey(), message.id(), message.createdAt(), message.attempt(),
                    t == null ? null : t.name(), email.templateVersion(), t == null ? null : t.locale(),
                    email.subject(), email.textBody(), email.htmlBody());
        }
    }

    /**
     * Inserts or replaces the renderings of the given messages (by key); returns the rows written.
     * A key may appear once per call: one statement cannot change a row twice.
     */
    public int upsert(DSLContext tx, List<Rendering> renderings) {
        if (renderings.isEmpty()) {
            return 0;
        }
        List<Rendering> rows = renderings.stream().sorted(Comparator.comparing(Rendering::key)).toList();
        Set<String> seen = new HashSet<>();
        for (Rendering r : rows) {
            if (!seen.add(r.key())) {
                throw new IllegalArgumentException("renderings: key " + r.key() + " appears more than once");
            }
        }
        int n = rows.size();
        String[] keys = new String[n];
        Long[] messageIds = new Long[n];
        Instant[] createdAt = new Instant[n];
        Integer[] attempts = new Integer[n];
        String[] templates = new String[n];
        String[] versions = new String[n];
        String[] locales = new String[n];
        String[] subjects = new String[n];
        String[] texts = new String[n];
        String[] htmls = new String[n];
        for (int i = 0; i < n; i++) {
            Rendering r = rows.get(i);
            keys[i] = r.key();
            messageIds[i] = r.messageId();
            createdAt[i] = r.messageCreatedAt();
            attempts[i] = r.attempt();
            templates[i] = r.template();
            versions[i] = r.templateVersion();
            locales[i] = r.locale();
            subjects[i] = r.subject();
            texts[i] = r.text();
            htmls[i] = r.html();
        }
        var e = EMAIL_RENDERING;
        return tx.insertInto(e, e.IDEMPOTENCY_KEY, e.MESSAGE_ID, e.MESSAGE_CREATED_AT, e.ATTEMPT, e.TEMPLATE,
                        e.TEMPLATE_VERSION, e.LOCALE, e.SUBJECT, e.TEXT_PART, e.HTML_PART)
                .select(DSL.select(each(keys, SQLDataType.VARCHAR), each(messageIds, SQLDataType.BIGINT),
                        each(createdAt, SQLDataType.INSTANT), each(attempts, SQLDataType.INTEGER),
                        each(templates, SQLDataType.VARCHAR), each(versions, SQLDataType.VARCHAR),
                        each(locales, SQLDataType.VARCHAR), each(subjects, SQLDataType.VARCHAR),
                        each(texts, SQLDataType.CLOB), each(htmls, SQLDataType.CLOB)))
                .onConflict(e.IDEMPOTENCY_KEY).doUpdate()
                .set(e.MESSAGE_ID, DSL.excluded(e.MESSAGE_ID))
                .set(e.MESSAGE_CREATED_AT, DSL.excluded(e.MESSAGE_CREATED_AT))
                .set(e.ATTEMPT, DSL.excluded(e.ATTEMPT))
                .set(e.TEMPLATE, DSL.excluded(e.TEMPLATE))
                .set(e.TEMPLATE_VERSION, DSL.excluded(e.TEMPLATE_VERSION))
                .set(e.LOCALE, DSL.excluded(e.LOCALE))
                .set(e.SUBJECT, DSL.excluded(e.SUBJECT))
                .set(e.TEXT_PART, DSL.excluded(e.TEXT_PART))
                .set(e.HTML_PART, DSL.excluded(e.HTML_PART))
                .set(e.RENDERED_AT, NOW)
                .execute();
    }

    /** {@code unnest(array)} as a column of the select list; the arrays of one statement have one length. */
    private static <T> Field<T> each(T[] values, DataType<T> type) {
        return DSL.function("unnest", type, DSL.val(values, type.array()));
    }
}
