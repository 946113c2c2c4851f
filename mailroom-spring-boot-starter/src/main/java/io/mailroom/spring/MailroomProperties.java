package io.mailroom.spring;

import io.mailroom.email.api.AttachmentLimits;
import io.mailroom.email.api.EmailOutbox;
import org.springframework.boot.context.properties.ConfigurationProperties;
import org.springframework.boot.context.properties.bind.DefaultValue;

import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Pattern;

/**
 * Mailroom's settings in a Spring Boot application, under {@code mailroom.*}. Bound once at start and
 * immutable; a bad value stops the application with the property named, never a silent clamp.
 *
 * @param migrate           Whether the application migrates Mailroom's own schema at start (its own
 *                          Flyway history, beside and after the application's own migrations); false
 *                          where a DBA or Mailroom's service migrates it
 * @param schema            The PostgreSQL schema that holds Mailroom's tables
 * @param maxPayloadBytes   The largest email envelope (template name, recipient, headers and data as
 *                          JSON) accepted by an enqueue, in UTF-8 bytes: 1 KiB to 16 MiB
 * @param notifyDispatchers Whether an enqueue wakes dispatchers (pg_notify, delivered at commit); they
 *                          poll anyway, so false only trades latency for less contention between
 *                          concurrent business commits
 * @param templates         The template names the dispatchers know; when given, an enqueue of any
 *                          other template is refused in the business transaction, otherwise the
 *                          dispatcher finds the unknown name and fails that email for good
 * @param maxAttachments    The most attachments (inline images included) one email may carry: 0 to 99
 * @param maxAttachmentBytes The largest attachment, in bytes (not counting base64)
 * @param maxAttachmentsTotalBytes The largest total of one email's attachments, in bytes
 */
@ConfigurationProperties(MailroomProperties.PREFIX)
public record MailroomProperties(
        @DefaultValue("true") boolean migrate,
        @DefaultValue(DEFAULT_SCHEMA) String schema,
        @DefaultValue("" + EmailOutbox.DEFAULT_MAX_PAYLOAD_BYTES) int maxPayloadBytes,
        @DefaultValue("true") boolean notifyDispatchers,
        @DefaultValue List<String> templates,
        @DefaultValue("" + AttachmentLimits.DEFAULT_MAX_COUNT) int maxAttachments,
        @DefaultValue("" + AttachmentLimits.DEFAULT_MAX_BYTES_EACH) int maxAttachmentBytes,
        @DefaultValue("" + AttachmentLimits.DEFAULT_MAX_BYTES_TOTAL) int maxAttachmentsTotalBytes) {

    public static final String PREFIX = "mailroom";
    public static final String DEFAULT_SCHEMA = "mailroom";

    static final int MIN_PAYLOAD_BYTES = 1024;
    static final int MAX_PAYLOAD_BYTES = 16 * 1024 * 1024;

    /** The rule Mailroom applies to its schema's name: written unquoted into SQL and Flyway's settings. */
    private static final Pattern SCHEMA = Pattern.compile("[a-z_][a-z0-9_]{0,62}");
    private static final Pattern TEMPLATE = Pattern.compile("[a-z0-9][a-z0-9_.-]{0,63}");

    public MailroomProperties {
        if (schema == null || !SCHEMA.matcher(schema).matches() || schema.startsWith("pg_")
                || schema.equals("information_schema")) {
            throw new IllegalArgumentException(PREFIX + ".schema must be a lower-case identifier that PostgreSQL does"
                    + " not reserve (a letter or _ first, then letters, digits or _, at most 63), got '" + schema + "'");
        }
        if (maxPayloadBytes < MIN_PAYLOAD_BYTES || maxPayloadBytes > MAX_PAYLOAD_BYTES) {
            throw new IllegalArgumentException(PREFIX + ".max-payload-bytes must be between " + MIN_PAYLOAD_BYTES
                    + " and " + MAX_PAYLOAD_BYTES + ", got " + maxPayloadBytes);
        }
        attachmentLimits(maxAttachments, maxAttachmentBytes, maxAttachmentsTotalBytes);
        templates = templates == null ? List.of() : List.copyOf(templates);
        for (String template : templates) {
            if (!TEMPLATE.matcher(template).matches()) {
                throw new IllegalArgumentException(PREFIX + ".templates: '" + template + "' is not a template name"
                        + " (lower-case letters, digits, _ . -, at most 64)");
            }
        }
    }

    /** The limits on attachments at enqueue. */
    AttachmentLimits attachmentLimits() {
        return attachmentLimits(maxAttachments, maxAttachmentBytes, maxAttachmentsTotalBytes);
    }

    private static AttachmentLimits attachmentLimits(int count, int each, int total) {
        try {
            return new AttachmentLimits(count, each, total);
        } catch (IllegalArgumentException e) {
            // AttachmentLimits names its own component first: say the property instead
            String message = e.getMessage();
            String property = message.startsWith("maxCount") ? "max-attachments"
                    : message.startsWith("maxBytesEach") ? "max-attachment-bytes" : "max-attachments-total-bytes";
            throw new IllegalArgumentException(PREFIX + "." + property + message.substring(message.indexOf(' ')));
        }
    }

    /** The known templates, or null when none were given (no check at enqueue). */
    Set<String> knownTemplates() {
        return templates.isEmpty() ? null : new TreeSet<>(templates);
    }
}
