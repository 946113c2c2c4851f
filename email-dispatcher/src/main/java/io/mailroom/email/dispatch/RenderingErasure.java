package io.mailroom.email.dispatch;

import io.mailroom.db.jooq.tables.EmailRendering;
import io.mailroom.db.sql.Redaction;
import org.jooq.DSLContext;

import java.util.Collection;
import java.util.List;

import static io.mailroom.db.jooq.Tables.EMAIL_RENDERING;

/**
 * email-dispatcher's part of erasing an address: the renderings ({@code email_rendering}, which
 * {@link RenderingStore} writes) of the emails that hold it, in the caller's transaction. The row of
 * an email sent to the address stays (template, version, locale, attempt, time: what support counts
 * and shows) with its subject and text replaced by {@link Redaction#NAME_MARK} and no HTML part; the
 * rendering of an email that only mentions it has the address and the names masked.
 */
public final class RenderingErasure {

    private static final EmailRendering G = EMAIL_RENDERING;
    private static final int MAX_SUBJECT = 500;

    private RenderingErasure() {
    }

    /** Erases the renderings of these keys; returns the rows changed. */
    public static int erase(DSLContext tx, Redaction redaction, Collection<String> recipientKeys, Collection<String> otherKeys) {
        int n = 0;
        if (!recipientKeys.isEmpty()) {
            n += tx.update(G)
                    .set(G.SUBJECT, Redaction.NAME_MARK)
                    .set(G.TEXT_PART, Redaction.NAME_MARK)
                    .set(G.HTML_PART, (String) null)
                    .where(G.IDEMPOTENCY_KEY.in(recipientKeys))
                    .execute();
        }
        List<String> others = otherKeys.stream().filter(k -> !recipientKeys.contains(k)).toList();
        if (!others.isEmpty()) {
            n += tx.update(G)
                    .set(G.SUBJECT, redaction.text(G.SUBJECT, MAX_SUBJECT))
                    .set(G.TEXT_PART, redaction.text(G.TEXT_PART))
                    .set(G.HTML_PART, redaction.text(G.HTML_PART))
                    .where(G.IDEMPOTENCY_KEY.in(others))
                    .and(redaction.mentions(G.SUBJECT).or(redaction.mentions(G.TEXT_PART)).or(redaction.mentions(G.HTML_PART)))
                    .execute();
        }
        return n;
    }
}
