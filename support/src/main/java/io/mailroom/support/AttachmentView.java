package io.mailroom.support;

import io.mailroom.email.api.AttachmentReads;

/**
 * One attachment of an email as support sees it: what it is, never its bytes (no role may download
 * it here: an invoice is the customer's document, and the viewer role reads the console).
 *
 * @param sha256Prefix the first 12 hex digits of the content's SHA-256, enough to tell two files apart
 * @param contentId    for an inline part, the id the HTML body shows it by ({@code cid:logo}); else null
 */
public record AttachmentView(String filename, String contentType, int size, String sha256Prefix, boolean inline,
                             String contentId) {

    static AttachmentView of(AttachmentReads.Listed a) {
        return new AttachmentView(a.filename(), a.contentType(), a.size(), a.sha256().substring(0, 12), a.inline(), a.contentId());
    }

    /** The size in words: {@code 532 bytes}, {@code 98.4 KiB}, {@code 1.2 MiB}. */
    public String sizeText() {
        if (size < 1024) {
            return size + " bytes";
        }
        if (size < 1024 * 1024) {
            return String.format(java.util.Locale.ROOT, "%.1f KiB", size / 1024.0);
        }
        return String.format(java.util.Locale.ROOT, "%.1f MiB", size / (1024.0 * 1024));
    }
}
