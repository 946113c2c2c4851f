package io.mailroom.email.api;

import io.mailroom.outbox.EnqueuedMessage;
import io.mailroom.outbox.NewMessage;
import io.mailroom.outbox.OutboxEnqueuer;
import io.mailroom.outbox.PendingChange;
import io.mailroom.outbox.PendingMessages;
import org.jooq.DSLContext;

import java.nio.charset.StandardCharsets;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
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
 * <p>An email with {@link OutgoingEmail#sendAt()} waits until then (at most {@link #DEFAULT_MAX_SEND_AHEAD}
 * ahead, or the bound given); until a dispatcher claims it, {@link #cancel} and {@link #reschedule}
 * change it by its idempotency key, in the caller's transaction ({@link PendingMessages}).
 *
 * <p>The payload is an envelope the dispatcher reads: {@code {"v":1,"template":...,"locale":...,
 * "to":{"address":...,"name":...},"replyTo":...,"headers":{...},"data":{...}}}. An email with
 * several To, any Cc or Bcc, tags or attachments is written as version 2 instead ({@link #ENVELOPE_V2}):
 * {@code to} is then an array, and {@code cc}, {@code bcc} (arrays), {@code headers}, {@code tags} (objects)
 * and {@code attachments} appear when not empty, in the order {@code v, template, locale, to, cc, bcc,
 * replyTo, headers, tags, attachments, data}. An email that uses none of them keeps the version 1 bytes,
 * which every dispatcher reads. The envelope names each attachment's filename, content type, SHA-256,
 * size and content id; its bytes are stored once per hash beside the outbox ({@link AttachmentStore}),
 * within {@link AttachmentLimits}, not counted in the payload's size.
 */
public final class EmailOutbox {

    public static final int DEFAULT_MAX_PAYLOAD_BYTES = 256 * 1024;
    public static final int ENVELOPE_VERSION = 1;
    /** How far ahead an email may be scheduled by default (the SQL function's bound too). */
    public static final Duration DEFAULT_MAX_SEND_AHEAD = Duration.ofDays(30);
    /** The envelope version of an email with several recipients, tags or attachments. */
    public static final int ENVELOPE_V2 = 2;

    private final OutboxEnqueuer enqueuer;
    private final Supplier<? extends java.util.Set<String>> templates;
    private final int maxPayloadBytes;
    private final SendTime sendTime;
    private final PendingMessages pending;
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
        this(enqueuer, templates, maxPayloadBytes, null, DEFAULT_MAX_SEND_AHEAD, AttachmentLimits.DEFAULTS);
    }

    /** @param attachmentLimits how many attachments an email may carry, and how large */
    public EmailOutbox(OutboxEnqueuer enqueuer, Supplier<? extends java.util.Set<String>> templates, int maxPayloadBytes,
                       AttachmentLimits attachmentLimits) {
        this(enqueuer, templates, maxPayloadBytes, null, DEFAULT_MAX_SEND_AHEAD, attachmentLimits);
    }

    /** With the default attachment limits. */
    public EmailOutbox(OutboxEnqueuer enqueuer, Supplier<? extends java.util.Set<String>> templates, int maxPayloadBytes,
                       Clock clock, Duration maxSendAhead) {
        this(enqueuer, templates, maxPayloadBytes, clock, maxSendAhead, AttachmentLimits.DEFAULTS);
    }

    /**
     * @param clock            what {@code sendAt} is compared with, and the time cancel and reschedule write;
     *                         null for the system clock and the database's time (use the enqueuer's clock in tests)
     * @param maxSendAhead     how far ahead {@code sendAt} may be ({@link #DEFAULT_MAX_SEND_AHEAD}), at least a minute
     * @param attachmentLimits how many attachments an email may carry, and how large
     */
    public EmailOutbox(OutboxEnqueuer enqueuer, Supplier<? extends java.util.Set<String>> templates, int maxPayloadBytes,
                       Clock clock, Duration maxSendAhead, AttachmentLimits attachmentLimits) {
        this.sendTime = new SendTime(clock == null ? Clock.systemUTC() : clock, maxSendAhead);
        this.attachmentLimits = Objects.requireNonNull(attachmentLimits, "attachmentLimits");
        this.enqueuer = Objects.requireNonNull(enqueuer, "enqueuer");
        this.templates = templates;
        if (maxPayloadBytes < 1024 || maxPayloadBytes > 16 * 1024 * 1024) {
            throw new IllegalArgumentException("maxPayloadBytes must be between 1 KiB and 16 MiB, got " + maxPayloadBytes);
        }
        this.maxPayloadBytes = maxPayloadBytes;
        this.pending = new PendingMessages(clock, enqueuer.schema());
    }

    /** Writes the email into the outbox in {@code tx}'s transaction; nothing is written if it throws. */
    public EnqueuedMessage enqueue(DSLContext tx, OutgoingEmail email) {
        EnqueuedMessage enqueued = enqueuer.enqueue(tx, message(email));
        AttachmentStore.write(enqueuer.schema().join(tx), enqueued.idempotencyKey(), email.attachments());
        return enqueued;
    }

    /**
     * Cancels the email of {@code idempotencyKey} in {@code tx}'s transaction, if no dispatcher has
     * claimed it yet: {@link PendingChange.Outcome#CANCELLED}, else TOO_LATE with the status that
     * says why (running: being sent; done: sent) or NOT_FOUND. A claim racing with it has one winner.
     */
    public PendingChange cancel(DSLContext tx, String idempotencyKey) {
        return pending.cancel(tx, idempotencyKey);
    }

    /**
     * Moves the email of {@code idempotencyKey} to {@code sendAt} (a time in the past means now) in
     * {@code tx}'s transaction, if no dispatcher has claimed it yet. The same bound as at enqueue.
     *
     * @throws InvalidEmailException naming {@code sendAt} when it is beyond the bound
     */
    public PendingChange reschedule(DSLContext tx, String idempotencyKey, Instant sendAt) {
        Objects.requireNonNull(sendAt, "sendAt");
        sendTime.availableAt(sendAt); // the bound; a time past is made now by PendingMessages, in the database's time
        return pending.reschedule(tx, idempotencyKey, sendAt);
    }

    /** How far ahead an email may be scheduled. */
    public Duration maxSendAhead() {
        return sendTime.maxAhead();
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
        Instant availableAt = sendTime.availableAt(email.sendAt());
        String payload = envelope(email);
        int bytes = payload.getBytes(StandardCharsets.UTF_8).length;
        if (bytes > maxPayloadBytes) {
            throw new InvalidEmailException("data", "makes a payload of " + bytes + " bytes, over the limit of " + maxPayloadBytes);
        }
        try {
            NewMessage message = NewMessage.of(email.topic(), email.aggregateType(), email.aggregateId(), email.idempotencyKey(),
                    payload).withSearchTerms(SearchTerms.of(email)).withAvailableAt(availableAt);
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
        boolean v2 = email.needsEnvelopeV2();
        out.append("{\"v\":").append(v2 ? ENVELOPE_V2 : ENVELOPE_VERSION).append(",\"template\":");
        Json.string(out, email.template());
        out.append(",\"locale\":");
        Json.string(out, email.locale().toLanguageTag());
        out.append(",\"to\":");
        if (v2) {
            mailboxes(out, email.toList());
            if (!email.cc().isEmpty()) {
                out.append(",\"cc\":");
                mailboxes(out, email.cc());
            }
            if (!email.bcc().isEmpty()) {
                out.append(",\"bcc\":");
                mailboxes(out, email.bcc());
            }
        } else {
            mailbox(out, email.to());
        }
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
        if (!email.tags().isEmpty()) {
            out.append(",\"tags\":{");
            boolean firstTag = true;
            for (Map.Entry<String, String> t : email.tags().entrySet()) {
                if (!firstTag) {
                    out.append(',');
                }
                firstTag = false;
                Json.string(out, t.getKey());
                out.append(':');
                Json.string(out, t.getValue());
            }
            out.append('}');
        }
        AttachmentEnvelope.write(out, email.attachments());
        out.append(",\"data\":").append(Json.write(email.data())).append('}');
        return out.toString();
    }

    private static void mailboxes(StringBuilder out, java.util.List<OutgoingEmail.Mailbox> list) {
        out.append('[');
        for (int i = 0; i < list.size(); i++) {
            if (i > 0) {
                out.append(',');
            }
            mailbox(out, list.get(i));
        }
        out.append(']');
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
