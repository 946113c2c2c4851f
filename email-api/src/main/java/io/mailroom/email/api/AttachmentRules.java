package io.mailroom.email.api;

import java.util.HashSet;
import java.util.List;
import java.util.Locale;
import java.util.Set;
import java.util.regex.Pattern;

/**
 * What an attachment must be before it is enqueued, whatever the limits: a filename a mail client
 * can save (no path, no control character, at most {@value #MAX_FILENAME_LENGTH} characters), a
 * content type {@code type/subtype} (RFC 6838 names, no parameters, not a multipart or message
 * type, which a client would parse as structure), a content id a {@code cid:} URL can name, unique
 * in the email, and at least one byte. A refusal names the field: {@code attachments[2].filename}.
 */
public final class AttachmentRules {

    public static final int MAX_FILENAME_LENGTH = 255;
    public static final int MAX_CONTENT_ID_LENGTH = 100;
    /** The most attachments any configuration allows (the table's own bound). */
    public static final int MAX_COUNT = 99;
    /** The largest attachment any configuration allows (the table's own bound): 100 MiB. */
    public static final int MAX_BYTES = 100 * 1024 * 1024;

    private static final Pattern CONTENT_TYPE = Pattern.compile(
            "[A-Za-z0-9][A-Za-z0-9!#$&^_.+-]{0,126}/[A-Za-z0-9][A-Za-z0-9!#$&^_.+-]{0,126}");
    private static final Pattern CONTENT_ID = Pattern.compile("[A-Za-z0-9][A-Za-z0-9._@+-]{0," + (MAX_CONTENT_ID_LENGTH - 1) + "}");

    private AttachmentRules() {
    }

    /** Checks every attachment of an email; throws {@link InvalidEmailException} naming the first bad field. */
    public static void check(List<Attachment> attachments) {
        if (attachments.size() > MAX_COUNT) {
            throw new InvalidEmailException("attachments", "has " + attachments.size() + " attachments, more than "
                    + MAX_COUNT + ", the most any configuration allows");
        }
        Set<String> contentIds = new HashSet<>();
        for (int i = 0; i < attachments.size(); i++) {
            Attachment a = attachments.get(i);
            String field = "attachments[" + i + "]";
            filename(field + ".filename", a.filename());
            contentType(field + ".contentType", a.contentType());
            if (a.contentId() != null) {
                if (!CONTENT_ID.matcher(a.contentId()).matches()) {
                    throw new InvalidEmailException(field + ".contentId", "must be 1-" + MAX_CONTENT_ID_LENGTH
                            + " of A-Z, a-z, 0-9, '.', '_', '@', '+', '-', starting with a letter or digit, got '" + a.contentId() + "'");
                }
                if (!contentIds.add(a.contentId().toLowerCase(Locale.ROOT))) {
                    throw new InvalidEmailException(field + ".contentId", "'" + a.contentId() + "' is given twice");
                }
            }
            if (a.size() == 0) {
                throw new InvalidEmailException(field + ".content", "has no bytes");
            }
            if (a.size() > MAX_BYTES) {
                throw new InvalidEmailException(field + ".content", "is " + a.size() + " bytes, more than " + MAX_BYTES
                        + ", the most any configuration allows");
            }
        }
    }

    private static void filename(String field, String name) {
        if (name == null || name.isBlank()) {
            throw new InvalidEmailException(field, "is missing");
        }
        if (name.length() > MAX_FILENAME_LENGTH) {
            throw new InvalidEmailException(field, "is longer than " + MAX_FILENAME_LENGTH + " characters");
        }
        if (!name.equals(name.strip())) {
            throw new InvalidEmailException(field, "starts or ends with white space");
        }
        if (name.equals(".") || name.equals("..")) {
            throw new InvalidEmailException(field, "is '" + name + "', not a file's name");
        }
        for (int i = 0; i < name.length(); i++) {
            char c = name.charAt(i);
            if (c == '/' || c == '\\') {
                throw new InvalidEmailException(field, "contains a path separator '" + c + "' at index " + i
                        + ": give the file's name only");
            }
            if (Character.isISOControl(c) || c == '\u2028' || c == '\u2029') {
                throw new InvalidEmailException(field, "contains the control character " + String.format("U+%04X", (int) c)
                        + " at index " + i);
            }
            if (Character.isHighSurrogate(c) && i + 1 < name.length() && Character.isLowSurrogate(name.charAt(i + 1))) {
                i++;
            } else if (Character.isSurrogate(c)) {
                throw new InvalidEmailException(field, "contains an unpaired surrogate at index " + i);
            }
        }
    }

    private static void contentType(String field, String type) {
        if (type == null || !CONTENT_TYPE.matcher(type).matches()) {
            throw new InvalidEmailException(field, "must be a media type type/subtype without parameters, like"
                    + " application/pdf, got " + (type == null ? "nothing" : "'" + type + "'"));
        }
        String top = type.substring(0, type.indexOf('/')).toLowerCase(Locale.ROOT);
        if (top.equals("multipart") || top.equals("message")) {
            throw new InvalidEmailException(field, "is a " + top + " type, which mail clients read as the message's"
                    + " structure; send it as application/octet-stream");
        }
    }
}
