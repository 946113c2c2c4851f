package io.mailroom.email.api;

/**
 * How many attachments an email may carry and how large they may be, checked by
 * {@link EmailOutbox} at enqueue; an email over a limit is refused with an
 * {@link InvalidEmailException} that names the field and the limit. The sizes count the
 * attachments' bytes, not their base64 form (about 4/3 of it) in the sent message; the envelope's
 * own size limit ({@code maxPayloadBytes}) does not count them at all.
 *
 * @param maxCount      attachments per email, inline parts included (0: none allowed)
 * @param maxBytesEach  bytes of one attachment
 * @param maxBytesTotal bytes of all attachments of one email together
 */
public record AttachmentLimits(int maxCount, int maxBytesEach, int maxBytesTotal) {

    public static final int DEFAULT_MAX_COUNT = 10;
    public static final int DEFAULT_MAX_BYTES_EACH = 10 * 1024 * 1024;
    public static final int DEFAULT_MAX_BYTES_TOTAL = 20 * 1024 * 1024;
    /** The largest total any configuration allows: the dispatcher holds an email's attachments in memory. */
    public static final int MAX_BYTES_TOTAL = 200 * 1024 * 1024;

    public static final AttachmentLimits DEFAULTS = new AttachmentLimits(DEFAULT_MAX_COUNT, DEFAULT_MAX_BYTES_EACH,
            DEFAULT_MAX_BYTES_TOTAL);

    public AttachmentLimits {
        if (maxCount < 0 || maxCount > AttachmentRules.MAX_COUNT) {
            throw new IllegalArgumentException("maxCount must be between 0 and " + AttachmentRules.MAX_COUNT + ", got " + maxCount);
        }
        if (maxBytesEach < 1 || maxBytesEach > AttachmentRules.MAX_BYTES) {
            throw new IllegalArgumentException("maxBytesEach must be between 1 and " + AttachmentRules.MAX_BYTES + " bytes, got "
                    + maxBytesEach);
        }
        if (maxBytesTotal < maxBytesEach || maxBytesTotal > MAX_BYTES_TOTAL) {
            throw new IllegalArgumentException("maxBytesTotal must be between maxBytesEach (" + maxBytesEach + ") and "
                    + MAX_BYTES_TOTAL + " bytes, got " + maxBytesTotal);
        }
    }

    /** Throws {@link InvalidEmailException} naming the first attachment, or the list, over a limit. */
    void check(java.util.List<Attachment> attachments) {
        if (attachments.size() > maxCount) {
            throw new InvalidEmailException("attachments", "has " + attachments.size() + " attachments, over the limit of "
                    + maxCount);
        }
        long total = 0;
        for (int i = 0; i < attachments.size(); i++) {
            int size = attachments.get(i).size();
            if (size > maxBytesEach) {
                throw new InvalidEmailException("attachments[" + i + "].content", "is " + size
                        + " bytes, over the limit of " + maxBytesEach + " bytes per attachment");
            }
            total += size;
        }
        if (total > maxBytesTotal) {
            throw new InvalidEmailException("attachments", "are " + total + " bytes together, over the limit of "
                    + maxBytesTotal + " bytes per email");
        }
    }
}
