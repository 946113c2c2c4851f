package io.mailroom.email.render;

import com.fasterxml.jackson.databind.JsonNode;
import io.mailroom.db.MailroomSchema;
import io.mailroom.email.api.Attachment;
import io.mailroom.email.api.AttachmentReads;
import io.mailroom.email.api.AttachmentRules;
import io.mailroom.email.api.InvalidEmailException;

import javax.sql.DataSource;
import java.util.ArrayList;
import java.util.Collection;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.regex.Pattern;

/**
 * The attachments of a version 2 envelope: read from its {@code "attachments"} key (filename,
 * content type, SHA-256, size, content id), checked by the email API's own rules, and loaded by hash
 * through email-api's read API ({@link AttachmentReads}): the bytes are stored once beside the
 * outbox, never in the payload. Their metadata and hashes are part of the request's fingerprint, so
 * the same key with another file is a different email.
 */
public final class EnvelopeAttachments {

    private static final Pattern SHA256 = Pattern.compile("[0-9a-f]{64}");

    private EnvelopeAttachments() {
    }

    /** Loads stored content by hash; a hash that is not stored is absent from the answer. */
    @FunctionalInterface
    public interface Loader {
        Map<String, byte[]> load(Collection<String> sha256s);

        /** For a composer with no database: an email with attachments fails, naming why. */
        Loader NONE = hashes -> {
            throw new IllegalStateException("this composer has no database to load attachments from");
        };
    }

    /** The loader over email-api's tables in the database of {@code dataSource} (its bound schema). */
    public static Loader database(DataSource dataSource) {
        MailroomSchema schema = MailroomSchema.of(dataSource);
        return hashes -> AttachmentReads.content(schema.dsl(dataSource), hashes);
    }

    /** One attachment as the envelope names it. */
    record Ref(String filename, String contentType, String sha256, int size, String contentId) {
    }

    /** The envelope's attachments, in order; none when the key is absent. */
    static List<Ref> read(JsonNode node) throws RenderException {
        if (node == null || node.isNull()) {
            return List.of();
        }
        if (!node.isArray()) {
            throw new RenderException("payload.attachments", "must be a list");
        }
        List<Ref> refs = new ArrayList<>(node.size());
        for (int i = 0; i < node.size(); i++) {
            JsonNode a = node.get(i);
            String field = "payload.attachments[" + i + "]";
            if (!a.isObject() || !a.path("filename").isTextual() || !a.path("contentType").isTextual()
                    || !a.path("sha256").isTextual() || !a.path("size").canConvertToInt()) {
                throw new RenderException(field, "must have filename, contentType, sha256 and size");
            }
            if (!SHA256.matcher(a.get("sha256").textValue()).matches()) {
                throw new RenderException(field + ".sha256", "must be 64 lower-case hex digits");
            }
            JsonNode cid = a.get("contentId");
            if (cid != null && !cid.isNull() && !cid.isTextual()) {
                throw new RenderException(field + ".contentId", "must be a string");
            }
            refs.add(new Ref(a.get("filename").textValue(), a.get("contentType").textValue(), a.get("sha256").textValue(),
                    a.get("size").intValue(), cid == null || cid.isNull() ? null : cid.textValue()));
        }
        return refs;
    }

    /** The part of the request's fingerprint the attachments make: metadata and hash of each, in order. */
    static String fingerprint(List<Ref> refs) {
        StringBuilder out = new StringBuilder("attachments");
        for (Ref r : refs) {
            out.append('\n').append(r.sha256()).append(' ').append(r.size()).append(' ').append(r.contentType())
                    .append(' ').append(Objects.toString(r.contentId(), "-")).append(' ').append(r.filename());
        }
        return out.toString();
    }

    /** The attachments with their bytes, checked as the email API checks them at enqueue. */
    static List<Attachment> load(List<Ref> refs, Loader loader) throws RenderException {
        if (refs.isEmpty()) {
            return List.of();
        }
        Map<String, byte[]> content;
        try {
            content = loader.load(new LinkedHashSet<>(refs.stream().map(Ref::sha256).toList()));
        } catch (IllegalStateException e) {
            throw new RenderException("payload.attachments", e.getMessage());
        }
        List<Attachment> attachments = new ArrayList<>(refs.size());
        for (int i = 0; i < refs.size(); i++) {
            Ref r = refs.get(i);
            byte[] bytes = content.get(r.sha256());
            String field = "payload.attachments[" + i + "]";
            if (bytes == null) {
                throw new RenderException(field + ".sha256", "names content that is not stored (" + r.sha256().substring(0, 12)
                        + "...): an erasure or retention removed it, or the email was not enqueued through EmailOutbox.enqueue");
            }
            if (bytes.length != r.size()) {
                throw new RenderException(field + ".size", "is " + r.size() + " but the stored content has " + bytes.length + " bytes");
            }
            attachments.add(new Attachment(r.filename(), r.contentType(), r.contentId(), bytes, r.sha256()));
        }
        try {
            AttachmentRules.check(attachments);
        } catch (InvalidEmailException e) {
            throw new RenderException("payload." + e.field(), e.getMessage().substring(e.field().length() + 1));
        }
        return attachments;
    }
}
