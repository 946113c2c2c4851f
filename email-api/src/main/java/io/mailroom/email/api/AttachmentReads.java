package io.mailroom.email.api;

import org.jooq.DSLContext;

import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import static io.mailroom.db.jooq.Tables.EMAIL_ATTACHMENT_CONTENT;
import static io.mailroom.db.jooq.Tables.EMAIL_ATTACHMENT_REF;

/**
 * email-api's read API over its attachment tables, for the modules that must not name them: the
 * dispatcher loads content by hash to send it, support lists an email's attachments (never their
 * bytes).
 */
public final class AttachmentReads {

    private AttachmentReads() {
    }

    /** One attachment of an email as support lists it: no content. */
    public record Listed(int position, String filename, String contentType, String contentId, String sha256, int size) {
        public boolean inline() {
            return contentId != null;
        }
    }

    /** The bytes of each of these hashes that is stored; a hash that is not is absent from the map. */
    public static Map<String, byte[]> content(DSLContext tx, Collection<String> sha256s) {
        if (sha256s.isEmpty()) {
            return Map.of();
        }
        var c = EMAIL_ATTACHMENT_CONTENT;
        Map<String, byte[]> out = new HashMap<>();
        tx.select(c.SHA256, c.CONTENT).from(c).where(c.SHA256.in(new ArrayList<>(sha256s)))
                .forEach(r -> out.put(r.value1(), r.value2()));
        return out;
    }

    /** The attachments of each of these effects, in their order; an effect without any is absent. */
    public static Map<String, List<Listed>> of(DSLContext tx, Collection<String> keys) {
        if (keys.isEmpty()) {
            return Map.of();
        }
        var r = EMAIL_ATTACHMENT_REF;
        var c = EMAIL_ATTACHMENT_CONTENT;
        Map<String, List<Listed>> out = new LinkedHashMap<>();
        tx.select(r.IDEMPOTENCY_KEY, r.POSITION, r.FILENAME, r.CONTENT_TYPE, r.CONTENT_ID, r.SHA256, c.SIZE)
                .from(r).join(c).on(c.SHA256.eq(r.SHA256))
                .where(r.IDEMPOTENCY_KEY.in(new ArrayList<>(keys)))
                .orderBy(r.IDEMPOTENCY_KEY, r.POSITION)
                .forEach(x -> out.computeIfAbsent(x.value1(), k -> new ArrayList<>()).add(new Listed(x.value2(), x.value3(),
                        x.value4(), x.value5(), x.value6(), x.value7())));
        return out;
    }
}
