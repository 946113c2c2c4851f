package io.mailroom.email.api;

import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;
import java.util.Objects;

/**
 * A file sent with an email: a filename, a content type ({@code application/pdf}) and its bytes;
 * with a {@code contentId}, an inline part the HTML body shows by {@code <img src="cid:logo">}.
 * Given through {@link OutgoingEmail.Builder#attach} and {@link OutgoingEmail.Builder#inline}, which
 * check every field ({@link AttachmentRules}).
 *
 * <p>The bytes are stored once per {@link #sha256()} however many emails carry them, and the
 * envelope names only filename, content type, hash, size and content id; the dispatcher loads the
 * bytes by hash when it sends. Two attachments are equal when their metadata and hash are.
 *
 * @param contentId null for an ordinary attachment; the id an inline part is referred to by
 * @param sha256    lower-case hex SHA-256 of {@code content}; computed when null
 */
public record Attachment(String filename, String contentType, String contentId, byte[] content, String sha256) {

    public Attachment {
        Objects.requireNonNull(content, "content");
        if (sha256 == null) {
            sha256 = sha256(content);
        }
    }

    /** An ordinary attachment (no content id). */
    public static Attachment of(String filename, String contentType, byte[] content) {
        return new Attachment(filename, contentType, null, content, null);
    }

    /** An inline part, shown by the HTML body as {@code cid:<contentId>}. */
    public static Attachment inline(String contentId, String filename, String contentType, byte[] content) {
        return new Attachment(filename, contentType, contentId, content, null);
    }

    public boolean isInline() {
        return contentId != null;
    }

    public int size() {
        return content.length;
    }

    /** Lower-case hex SHA-256 of {@code bytes}: the key content is stored under. */
    public static String sha256(byte[] bytes) {
        try {
            return HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256").digest(bytes));
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("every Java runtime has SHA-256", e);
        }
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof Attachment a && filename.equals(a.filename) && contentType.equals(a.contentType)
                && Objects.equals(contentId, a.contentId) && sha256.equals(a.sha256);
    }

    @Override
    public int hashCode() {
        return Objects.hash(filename, contentType, contentId, sha256);
    }

    /** Never the bytes. */
    @Override
    public String toString() {
        return "Attachment[" + filename + ", " + contentType + (contentId == null ? "" : ", cid " + contentId) + ", "
                + content.length + " bytes, sha256 " + sha256.substring(0, 12) + "]";
    }
}
