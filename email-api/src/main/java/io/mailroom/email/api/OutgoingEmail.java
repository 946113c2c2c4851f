package io.mailroom.email.api;

import io.mailroom.mailbox.MailboxRules;
import io.mailroom.mailbox.TagRules;

import java.time.Instant;
import java.util.ArrayList;
import java.util.Collections;
import java.util.IllformedLocaleException;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Pattern;

/**
 * One transactional email, as business code asks for it: which template, in which language, to
 * whom, with what data, about which business entity, and under which idempotency key. Built with
 * {@link #template(String)}; {@link Builder#build()} checks every field and refuses a bad one with
 * an {@link InvalidEmailException} naming it, so nothing invalid reaches the outbox.
 *
 * <pre>{@code
 * OutgoingEmail email = OutgoingEmail.template("order_shipped")
 *         .to("an@example.com", "Nguyễn Văn An")
 *         .locale("vi")
 *         .about("order", "102")
 *         .idempotencyKey("email-order-102-shipped")
 *         .orderingKey("order-102")
 *         .data(Map.of("order", Map.of("id", "102", "carrier", "VNPost")))
 *         .build();
 * }</pre>
 *
 * @param topic       the outbox topic, {@code email.<template>} unless given: the dispatcher's topic
 *                    configuration maps it to a template, a sender and a transport
 * @param orderingKey optional: emails with the same key go out one at a time, in the order they were
 *                    enqueued (whatever their topics), e.g. {@code order-102} for every email of an
 *                    order; null: no order is kept
 * @param to          the first of {@code toList}, for callers written when an email had one recipient
 * @param toList      every To recipient, in order ({@link RecipientRules} has the limits)
 * @param cc          Cc recipients, possibly none
 * @param bcc         Bcc recipients, possibly none: in the SMTP envelope only, never in a header
 * @param tags        {@code name=value} tags ({@link io.mailroom.mailbox.TagRules}), in the order given
 * @param sendAt      optional: not sent before this instant (a time in the past means now); at most
 *                    {@link EmailOutbox#DEFAULT_MAX_SEND_AHEAD} ahead, checked at enqueue; null: at once
 * @param attachments files and inline images, in the order given (empty: none); see {@link Attachment}
 */
public record OutgoingEmail(String topic, String template, Locale locale, Mailbox to, Mailbox replyTo,
                            Map<String, String> headers, Map<String, Object> data, String aggregateType,
                            String aggregateId, String idempotencyKey, String orderingKey,
                            List<Mailbox> toList, List<Mailbox> cc, List<Mailbox> bcc, Map<String, String> tags,
                            Instant sendAt, List<Attachment> attachments) {

    public static final String TOPIC_PREFIX = "email.";
    public static final int MAX_HEADER_VALUE_LENGTH = 900;
    /** Extra headers a caller may set: X-*, and the list headers mailbox providers look for. */
    public static final Set<String> LIST_HEADERS = Set.of("List-Unsubscribe", "List-Unsubscribe-Post", "List-Id");

    private static final Pattern TEMPLATE = Pattern.compile("[a-z0-9][a-z0-9_.-]{0,63}");
    private static final Pattern TOPIC = Pattern.compile("[a-z0-9][a-z0-9_.-]{0,127}");
    private static final Pattern X_HEADER = Pattern.compile("X-[A-Za-z0-9][A-Za-z0-9-]{0,73}");

    /** An address and an optional display name, both checked by {@link MailboxRules}. */
    public record Mailbox(String address, String name) {
        public Mailbox {
            if (address != null) {
                address = address.strip();
            }
        }
    }

    public OutgoingEmail {
        headers = Collections.unmodifiableMap(new LinkedHashMap<>(headers));
        data = Collections.unmodifiableMap(new LinkedHashMap<>(data));
        toList = toList == null || toList.isEmpty() ? (to == null ? List.of() : List.of(to)) : List.copyOf(toList);
        cc = cc == null ? List.of() : List.copyOf(cc);
        bcc = bcc == null ? List.of() : List.copyOf(bcc);
        tags = tags == null ? Map.of() : Collections.unmodifiableMap(new LinkedHashMap<>(tags));
        attachments = attachments == null ? List.of() : List.copyOf(attachments);
    }

    /** An email to one recipient, without cc, bcc, tags or attachments, sent at once (the record as it was before they existed). */
    public OutgoingEmail(String topic, String template, Locale locale, Mailbox to, Mailbox replyTo,
                         Map<String, String> headers, Map<String, Object> data, String aggregateType,
                         String aggregateId, String idempotencyKey, String orderingKey) {
        this(topic, template, locale, to, replyTo, headers, data, aggregateType, aggregateId, idempotencyKey, orderingKey,
                null, null, null, null, null, null);
    }

    /** Whether the envelope needs version 2: several To, any Cc or Bcc, tags or attachments (else it is v1, byte for byte). */
    public boolean needsEnvelopeV2() {
        return toList.size() > 1 || !cc.isEmpty() || !bcc.isEmpty() || !tags.isEmpty() || !attachments.isEmpty();
    }

    public static Builder template(String template) {
        return new Builder(template);
    }

    public static final class Builder {
        private final String template;
        private String topic;
        private String locale = "en";
        private final List<Mailbox> to = new ArrayList<>();
        private final List<Mailbox> cc = new ArrayList<>();
        private final List<Mailbox> bcc = new ArrayList<>();
        private final Map<String, String> tags = new LinkedHashMap<>();
        private Mailbox replyTo;
        private final Map<String, String> headers = new LinkedHashMap<>();
        private Map<String, ?> data = Map.of();
        private String aggregateType;
        private String aggregateId;
        private String idempotencyKey;
        private String orderingKey;
        private Instant sendAt;
        private final List<Attachment> attachments = new ArrayList<>();

        private Builder(String template) {
            this.template = template;
        }

        public Builder topic(String topic) {
            this.topic = topic;
            return this;
        }

        /** A BCP 47 language tag: {@code vi}, {@code en-GB}. Default {@code en}. */
        public Builder locale(String tag) {
            this.locale = tag;
            return this;
        }

        /** Adds a To recipient; call it again for more (at most {@link RecipientRules#MAX_TO}). */
        public Builder to(String address, String name) {
            to.add(new Mailbox(address, name));
            return this;
        }

        /** Adds a Cc recipient (at most {@link RecipientRules#MAX_CC}). */
        public Builder cc(String address, String name) {
            cc.add(new Mailbox(address, name));
            return this;
        }

        /** Adds a Bcc recipient (at most {@link RecipientRules#MAX_BCC}): sent the email, named in no header. */
        public Builder bcc(String address, String name) {
            bcc.add(new Mailbox(address, name));
            return this;
        }

        /**
         * A tag ({@link io.mailroom.mailbox.TagRules}: at most 10, e.g. {@code category=invoice}): sent to
         * the provider, echoed in its delivery events, searchable in support ({@code tag:category=invoice}).
         */
        public Builder tag(String name, String value) {
            if (name != null && tags.keySet().stream().anyMatch(name::equalsIgnoreCase)) {
                throw new InvalidEmailException("tags." + name, "is given twice");
            }
            tags.put(name, value);
            return this;
        }

        public Builder replyTo(String address, String name) {
            this.replyTo = new Mailbox(address, name);
            return this;
        }

        /** An extra header: {@code X-...}, or one of {@link #LIST_HEADERS}. */
        public Builder header(String name, String value) {
            if (name != null && headers.keySet().stream().anyMatch(name::equalsIgnoreCase)) {
                throw new InvalidEmailException("headers." + name, "is given twice");
            }
            headers.put(name, value);
            return this;
        }

        /** The template's data; see {@link EmailOutbox} for the values it may hold. */
        public Builder data(Map<String, ?> data) {
            this.data = Objects.requireNonNullElse(data, Map.of());
            return this;
        }

        /** The business entity the email is about, e.g. ("order", "102"): support finds emails by it. */
        public Builder about(String aggregateType, String aggregateId) {
            this.aggregateType = aggregateType;
            this.aggregateId = aggregateId;
            return this;
        }

        /** The business effect, stable across retries: {@code email-order-102-shipped}. */
        public Builder idempotencyKey(String key) {
            this.idempotencyKey = key;
            return this;
        }

        /**
         * Keeps this email behind every earlier email of the same key that is still waiting or being
         * sent (a later one is not claimed before it), so a customer reads them in the order they
         * were written: one key per business entity, {@code order-102}. An earlier email that failed
         * for good, or was cancelled, no longer holds the later ones back. Unset: no order is kept.
         */
        public Builder orderingKey(String key) {
            this.orderingKey = key;
            return this;
        }

        /**
         * Not before {@code at}: the email waits in the outbox until then (a time in the past means
         * now). {@link EmailOutbox} refuses one more than its bound ahead (30 days by default) with
         * {@link InvalidEmailException} naming {@code sendAt}. Until a dispatcher claims it, it can be
         * cancelled or rescheduled by its idempotency key ({@link EmailOutbox#cancel}, {@link EmailOutbox#reschedule}).
         */
        public Builder sendAt(Instant at) {
            this.sendAt = at;
            return this;
        }

        /**
         * Attaches a file: {@code attach("Hóa đơn 102.pdf", "application/pdf", pdf)}. The bytes are
         * copied; limits are checked at enqueue ({@link AttachmentLimits}), the rest at {@link #build()}.
         */
        public Builder attach(String filename, String contentType, byte[] bytes) {
            attachments.add(Attachment.of(filename, contentType, copy(bytes)));
            return this;
        }

        /**
         * An inline part for the HTML body, which shows it by {@code <img src="cid:logo">} for
         * {@code contentId} {@code logo}.
         */
        public Builder inline(String contentId, String filename, String contentType, byte[] bytes) {
            attachments.add(Attachment.inline(contentId, filename, contentType, copy(bytes)));
            return this;
        }

        private byte[] copy(byte[] bytes) {
            if (bytes == null) {
                throw new InvalidEmailException("attachments[" + attachments.size() + "].content", "is missing");
            }
            return bytes.clone();
        }

        public OutgoingEmail build() {
            if (template == null || !TEMPLATE.matcher(template).matches()) {
                throw new InvalidEmailException("template", "must be 1-64 of a-z, 0-9, '_', '.', '-', starting with a letter or digit, got "
                        + quote(template));
            }
            String t = topic == null ? TOPIC_PREFIX + template : topic;
            if (!TOPIC.matcher(t).matches()) {
                throw new InvalidEmailException("topic", "must be 1-128 of a-z, 0-9, '_', '.', '-', got " + quote(t));
            }
            Locale l;
            try {
                l = new Locale.Builder().setLanguageTag(locale == null ? "" : locale).build();
            } catch (IllformedLocaleException e) {
                throw new InvalidEmailException("locale", "is not a BCP 47 language tag: " + quote(locale));
            }
            if (l.getLanguage().isEmpty()) {
                throw new InvalidEmailException("locale", "names no language: " + quote(locale));
            }
            RecipientRules.check(to, cc, bcc);
            TagRules.problem(tags).ifPresent(p -> {
                throw new InvalidEmailException(p[0], p[1]);
            });
            if (replyTo != null) {
                RecipientRules.mailbox("replyTo", replyTo);
            }
            for (Map.Entry<String, String> h : headers.entrySet()) {
                checkHeader(h.getKey(), h.getValue());
            }
            AttachmentRules.check(attachments);
            Map<String, Object> copy = new LinkedHashMap<>();
            data.forEach((k, v) -> copy.put(k, v));
            return new OutgoingEmail(t, template, l, to.getFirst(), replyTo, headers, copy, aggregateType, aggregateId,
                    idempotencyKey, orderingKey, to, cc, bcc, tags, sendAt, attachments);
        }

        private static void checkHeader(String name, String value) {
            String field = "headers." + name;
            if (name == null || !(X_HEADER.matcher(name).matches() || LIST_HEADERS.contains(name))) {
                throw new InvalidEmailException(name == null ? "headers" : field,
                        "is not a header a caller may set: only X-* and " + new TreeSet<>(LIST_HEADERS));
            }
            if (name.equalsIgnoreCase("X-Mailroom-Tag")) {
                throw new InvalidEmailException(field, "is the header the dispatcher writes the tags in; give tags with tag(name, value)");
            }
            if (value == null || value.isBlank()) {
                throw new InvalidEmailException(field, "has no value");
            }
            if (value.length() > MAX_HEADER_VALUE_LENGTH) {
                throw new InvalidEmailException(field, "is longer than " + MAX_HEADER_VALUE_LENGTH + " characters");
            }
            for (int i = 0; i < value.length(); i++) {
                char c = value.charAt(i);
                if (c < 0x20 || c > 0x7E) {
                    throw new InvalidEmailException(field, "contains " + (c == '\r' || c == '\n' ? "a line break" : String.format("U+%04X", (int) c))
                            + " at index " + i + ": header values are printable ASCII on one line");
                }
            }
            MailboxRules.headerTextProblem(value).ifPresent(p -> {
                throw new InvalidEmailException(field, p);
            });
        }

        private static String quote(String s) {
            return s == null ? "nothing" : "'" + s + "'";
        }
    }
}
