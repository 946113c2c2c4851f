package io.mailroom.email.api;

import org.jooq.DSLContext;
import org.jooq.Field;
import org.jooq.impl.DSL;
import org.jooq.impl.SQLDataType;

import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

import static io.mailroom.db.jooq.Tables.EMAIL_ATTACHMENT_CONTENT;
import static io.mailroom.db.jooq.Tables.EMAIL_ATTACHMENT_REF;

/**
 * Writes attachments in the caller's transaction: the content once per hash, then the email's refs
 * to it. Every statement over {@code email_attachment_content} and {@code email_attachment_ref}
 * that writes is here or in {@link AttachmentRetention}.
 *
 * <p>Invariant: content that a ref points at, committed or not, is never deleted. The content upsert
 * takes the row's lock (a new row's, or an existing row's by {@code ON CONFLICT DO UPDATE}) and moves
 * {@code last_used_at} to now, in the transaction that writes the ref; the retention locks
 * {@code FOR UPDATE SKIP LOCKED} and only takes rows unused for its grace period, so it skips
 * content that an uncommitted enqueue refers to, and a committed ref makes the row not its to take.
 */
public final class AttachmentStore {

    private static final Field<Instant> NOW = DSL.field(DSL.raw("now()"), SQLDataType.INSTANT);

    private AttachmentStore() {
    }

    /** Stores {@code attachments} of the effect {@code key} (written before, in {@code tx}). */
    static void write(DSLContext tx, String key, List<Attachment> attachments) {
        if (attachments.isEmpty()) {
            return;
        }
        var c = EMAIL_ATTACHMENT_CONTENT;
        // one row per hash, locked in hash order, so two emails sharing content never wait on each other in a cycle
        Map<String, Attachment> byHash = new TreeMap<>();
        attachments.forEach(a -> byHash.putIfAbsent(a.sha256(), a));
        var insert = tx.insertInto(c, c.SHA256, c.CONTENT, c.SIZE, c.CREATED_AT, c.LAST_USED_AT);
        for (Attachment a : byHash.values()) {
            insert = insert.values(DSL.val(a.sha256()), DSL.val(a.content()), DSL.val(a.size()), NOW, NOW);
        }
        insert.onConflict(c.SHA256).doUpdate().set(c.LAST_USED_AT, NOW).execute();

        var r = EMAIL_ATTACHMENT_REF;
        var refs = tx.insertInto(r, r.IDEMPOTENCY_KEY, r.POSITION, r.SHA256, r.FILENAME, r.CONTENT_TYPE, r.CONTENT_ID);
        for (int i = 0; i < attachments.size(); i++) {
            Attachment a = attachments.get(i);
            refs = refs.values(key, (short) i, a.sha256(), a.filename(), a.contentType(), a.contentId());
        }
        refs.execute();
    }

    /**
     * Gives the effect {@code newKey} (a resend, written before in {@code tx}) the attachments of
     * {@code originalKey}: the same hashes, no bytes copied. The content rows are touched (and so
     * locked) first, as an enqueue does. Returns how many refs were copied.
     */
    public static int copyRefs(DSLContext tx, String originalKey, String newKey) {
        var r = EMAIL_ATTACHMENT_REF;
        var c = EMAIL_ATTACHMENT_CONTENT;
        List<String> hashes = tx.selectDistinct(r.SHA256).from(r).where(r.IDEMPOTENCY_KEY.eq(originalKey))
                .orderBy(r.SHA256).fetch(r.SHA256);
        if (hashes.isEmpty()) {
            return 0;
        }
        tx.update(c).set(c.LAST_USED_AT, NOW).where(c.SHA256.in(hashes)).execute();
        return tx.insertInto(r, r.IDEMPOTENCY_KEY, r.POSITION, r.SHA256, r.FILENAME, r.CONTENT_TYPE, r.CONTENT_ID)
                .select(DSL.select(DSL.val(newKey), r.POSITION, r.SHA256, r.FILENAME, r.CONTENT_TYPE, r.CONTENT_ID)
                        .from(r).where(r.IDEMPOTENCY_KEY.eq(originalKey)))
                .execute();
    }

    /**
     * Removes the attachments of these effects (deleted by retention, or erased: an invoice names its
     * customer); their content goes with a later retention run once no other email refers to it.
     * Returns the refs removed.
     */
    public static int erase(DSLContext tx, java.util.Collection<String> keys) {
        if (keys.isEmpty()) {
            return 0;
        }
        var r = EMAIL_ATTACHMENT_REF;
        return tx.deleteFrom(r).where(r.IDEMPOTENCY_KEY.in(new ArrayList<>(keys))).execute();
    }
}
