package io.mailroom.email.dispatch;

import io.mailroom.db.sql.HotSql;
import io.mailroom.db.sql.SqlClock;
import io.mailroom.email.Email;
import io.mailroom.outbox.runtime.ClaimedMessage;
import org.jooq.DSLContext;

import java.time.Instant;
import java.util.Comparator;
import java.util.HashSet;
import java.util.List;
import java.util.Objects;
import java.util.Set;

/**
 * Writes {@code email_rendering} (V7): what an email was rendered to, one row per outbox message,
 * replaced by every attempt that reaches the provider step. {@link EmailHandler} calls it in the
 * transaction that reserves the idempotency key, so the row is committed before the send.
 *
 * <p>Rows go in as one array per column, unnested, so a batch of renderings is one statement with
 * the same SQL text as a single one; rows are written in key order, so two
 * overlapping batches lock their rows in the same order.
 */
public final class RenderingStore {

    /**
     * A finished text ({@link HotSql}), as the idempotency store's batch statements: rendered by
     * jOOQ for every batch it cost a tenth of the dispatcher's CPU.
     */
    private static final HotSql UPSERT = HotSql.of("""
            INSERT INTO {schema}.email_rendering (idempotency_key, message_id, message_created_at, attempt, template,
                                         template_version, locale, subject, text_part, html_part)
            SELECT * FROM unnest(?::varchar[], ?::bigint[], ?::varchar[]::timestamptz[], ?::int[], ?::varchar[],
                                 ?::varchar[], ?::varchar[], ?::varchar[], ?::text[], ?::text[])
            ON CONFLICT (idempotency_key) DO UPDATE SET
              message_id = excluded.message_id, message_created_at = excluded.message_created_at,
              attempt = excluded.attempt, template = excluded.template, template_version = excluded.template_version,
              locale = excluded.locale, subject = excluded.subject, text_part = excluded.text_part,
              html_part = excluded.html_part, rendered_at = now()""", SqlClock.database());

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
        String[] createdAt = new String[n];
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
            createdAt[i] = r.messageCreatedAt().toString();
            attempts[i] = r.attempt();
            templates[i] = r.template();
            versions[i] = r.templateVersion();
            locales[i] = r.locale();
            subjects[i] = r.subject();
            texts[i] = r.text();
            htmls[i] = r.html();
        }
        return UPSERT.execute(tx, keys, messageIds, createdAt, attempts, templates, versions, locales, subjects, texts, htmls);
    }
}
