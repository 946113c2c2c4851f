package io.mailroom.email.api;

import io.mailroom.outbox.EnqueuedMessage;
import io.mailroom.outbox.NewMessage;
import io.mailroom.outbox.OutboxEnqueuer;
import org.jooq.DSLContext;

import java.nio.charset.StandardCharsets;
import java.util.Map;
import java.util.Objects;
import java.util.SortedSet;
import java.util.TreeSet;
import java.util.function.Supplier;

/**
 * Business code's way to send a transactional email: {@link #enqueue} writes it into the outbox
 * with the caller's {@link DSLContext}, so the email exists exactly when the business change that
 * caused it commits. Everything that can be checked at this point fails here, inside the
 * transaction, with the field named ({@link InvalidEmailException}): the address and display
 * name ({@link io.mailroom.mailbox.MailboxRules}, the same rule the dispatcher applies), header
 * injection, the template's name (and, when a catalogue of template names is given, that it
 * exists), the data's values and the payload's size. A duplicate idempotency key fails with
 * {@link io.mailroom.outbox.DuplicateIdempotencyKeyException}, as for any outbox message.
 *
 * <p>The payload is an envelope the dispatcher reads: {@code {"v":1,"template":...,"locale":...,
 * "to":{"address":...,"name":...},"replyTo":...,"headers":{...},"data":{...}}}. An email with
 * attachments is written as {@code "v":2} ({@code "to"} a list, {@code "attachments"} before
 * {@code "data"}, {@code "headers"} only when there are some); the envelope names each attachment's
 * filename, content type, SHA-256, size and content id, and its bytes are stored once per hash beside
 * the outbox ({@link AttachmentStore}), within {@link AttachmentLimits}, not counted in the payload's size.
 */
public final class EmailOutbox {

    public static final int DEFAULT_MAX_PAYLOAD_BYTES = 256 * 1024;
    public static final int ENVELOPE_VERSION = 1;
    /** The envelope of an email that uses a field version 1 has no place for (attachments). */
    public static final int ENVELOPE_VERSION_2 = 2;

    private final OutboxEnqueuer enqueuer;
    private final Supplier<? extends java.util.Set<String>> templates;
    private final int maxPayloadBytes;
    private final AttachmentLimits attachmentLimits;

    /** Enqueues without checking template names against a catalogue. */
    public EmailOutbox(OutboxEnqueuer enqueuer) {
        this(enqueuer, null, DEFAULT_MAX_PAYLOAD_BYTES);
    }

    /**
     * @param templates       the template names the dispatchers know, or null where the catalogue is
     *                        not reachable from the business application (then an unknown template
     *                        is found by the dispatcher, which fails that email for good)
     * @param maxPayloadBytes the largest envelope accepted, in UTF-8 bytes
     */
    public EmailOutbox(OutboxEnqueuer enqueuer, Supplier<? extends java.util.Set<String>> templates, int maxPayloadBytes) {
        this(enqueuer, templates, maxPayloadBytes, AttachmentLimits.DEFAULTS);
    }

    /** @param attachmentLimits how many attachments an email may carry, and how large */
    public EmailOutbox(OutboxEnqueuer enqueuer, Supplier<? extends java.util.Set<String>> templates, int maxPayloadBytes,
                       AttachmentLimits attachmentLimits) {
        this.attachmentLimits = Objects.requireNonNull(attachmentLimits, "attachmentLimits");
        this.enqueuer = Objects.requireNonNull(enqueuer, "enqueuer");
        this.templates = templates;
        if (maxPayloadBytes < 1024 || maxPayloadBytes > 16 * 1024 * 1024) {
            throw new IllegalArgumentException("maxPayloadBytes must be between 1 KiB and 16 MiB, got " + maxPayloadBytes);
        }
        this.maxPayloadBytes = maxPayloadBytes;
    }

    /** Writes the email into the outbox in {@code tx}'s transaction; nothing is written if it throws. */
    public EnqueuedMessage enqueue(DSLContext tx, OutgoingEmail email) {
        EnqueuedMessage enqueued = enqueuer.enqueue(tx, message(email));
        AttachmentStore.write(enqueuer.schema().join(tx), enqueued.idempotencyKey(), email.attachments());
        return enqueued;
    }

    /**
     * The outbox message {@link #enqueue} would write, after every check. An email's attachments are
     * not in it (only named by hash): enqueue such an email with {@link #enqueue}, which stores them.
     */
    public NewMessage message(OutgoingEmail email) {
        Objects.requireNonNull(email, "email");
        if (templates != null) {
            java.util.Set<String> known = templates.get();
            if (known != null && !known.contains(email.template())) {
                SortedSet<String> sorted = new TreeSet<>(known);
                throw new InvalidEmailException("template", "'" + email.template() + "' is not in the template catalogue (known: "
                        + String.join(", ", sorted) + ")");
            }
        }
        attachmentLimits.check(email.attachments());
        String payload = envelope(email);
        int bytes = payload.getBytes(StandardCharsets.UTF_8).length;
        if (bytes > maxPayloadBytes) {
            throw new InvalidEmailException("data", "makes a payload of " + bytes + " bytes, over the limit of " + maxPayloadBytes);
        }
        try {
            NewMessage message = NewMessage.of(email.topic(), email.aggregateType(), email.aggregateId(), email.idempotencyKey(),
                    payload).withSearchTerms(SearchTerms.of(email));
            return email.orderingKey() == null ? message : message.withOrderingKey(email.orderingKey());
        } catch (IllegalArgumentException e) {
            // NewMessage names the argument first ("idempotencyKey must not be blank"): keep it as the field
            String message = e.getMessage();
            int space = message.indexOf(' ');
            throw new InvalidEmailException(space > 0 ? message.substring(0, space) : "message",
                    space > 0 ? message.substring(space + 1) : message);
        }
    }

    static String envelope(OutgoingEmail email) {
        StringBuilder out = new StringBuilder(512);
        boolean v2 = !email.attachments().isEmpty();
        out.append("{\"v\":").append(v2 ? ENVELOPE_VERSION_2 : ENVELOPE_VERSION).append(",\"template\":");
        Json.string(out, email.template());
        out.append(",\"locale\":");
        Json.string(out, email.locale().toLanguageTag());
        out.append(v2 ? ",\"to\":[" : ",\"to\":");
        mailbox(out, email.to());
        out.append(v2 ? "]" : "");
        if (email.replyTo() != null) {
            out.append(",\"replyTo\":");
            mailbox(out, email.replyTo());
        }
        if (!v2 || !email.headers().isEmpty()) { // version 2 omits an empty key
            out.append(",\"headers\":{");
            boolean first = true;
            for (Map.Entry<String, String> h : email.headers().entrySet()) {
                if (!first) {
                    out.append(',');
                }
                first = false;
                Json.string(out, h.getKey());
                out.append(':');
                Json.string(out, h.getValue());
            }
            out.append('}');
        }
        AttachmentEnvelope.write(out, email.attachments());
        out.append(",\"data\":").append(Json.write(email.data())).append('}');
        return out.toString();
    }

    private static void mailbox(StringBuilder out, OutgoingEmail.Mailbox m) {
        out.append("{\"address\":");
        Json.string(out, m.address());
        if (m.name() != null) {
            out.append(",\"name\":");
            Json.string(out, m.name());
        }
        out.append('}');
    }
}
