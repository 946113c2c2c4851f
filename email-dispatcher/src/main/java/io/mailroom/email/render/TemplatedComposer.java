package io.mailroom.email.render;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.json.JsonMapper;
import io.mailroom.email.Email;
import io.mailroom.email.EmailAddress;
import io.mailroom.email.EmailJson;
import io.mailroom.email.InvalidEmailException;
import io.mailroom.email.config.EmailTopics;
import io.mailroom.email.dispatch.EmailComposer;
import io.mailroom.mailbox.MailboxRules;
import io.mailroom.outbox.runtime.ClaimedMessage;
import io.mailroom.templates.RenderedTemplate;
import io.mailroom.templates.TemplateCatalogue;
import io.mailroom.templates.TemplateException;

import java.util.ArrayList;
import java.util.IllformedLocaleException;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.ServiceLoader;
import java.util.TreeMap;

/**
 * Renders the emails business code enqueued through {@code io.mailroom.email.api.EmailOutbox}: reads
 * the envelope ({@code {"v":1,"template","locale","to","replyTo","headers","data"}}, or version 2 with
 * lists of {@code to}, {@code cc}, {@code bcc} and {@code tags}: {@link EnvelopeRecipients}; and
 * {@code "attachments"}, whose bytes {@link EnvelopeAttachments} loads), renders the
 * topic's template from the {@link TemplateCatalogue} with the envelope's data and locale, and
 * builds the {@link Email} with the topic's sender (or the service's default one).
 *
 * <p>A payload without {@code "v"}, written by an application before it used the email API, is
 * read by the {@link PayloadReader} that application ships (found on the class path), so a message
 * still pending at its upgrade is sent; with no reader for it, it fails naming what is missing, and
 * stays in the outbox to be retried once the reader is installed.
 *
 * <p>The topic's configured template wins over the one the envelope names: the operator decides
 * which template a kind of email uses. The fingerprint is the request (recipient, reply-to,
 * headers, locale, template name and the data, canonically ordered), never the rendering, so a
 * template deploy neither resends a sent email nor turns an unknown outcome into a mismatch.
 */
public final class TemplatedComposer implements EmailComposer {

    /** Exact decimals and maps in key order: {@link EmailJson} is configured for this class. */
    private static final JsonMapper JSON = EmailJson.mapper();

    private final TemplateCatalogue catalogue;
    private final Map<String, EmailTopics.Route> routes;
    private final EmailAddress defaultFrom;
    private final long maxBodyBytes;
    private final List<PayloadReader> readers;
    private final EnvelopeAttachments.Loader attachments;

    /** A composer with the {@link #installedReaders() payload readers on the class path}. */
    public TemplatedComposer(TemplateCatalogue catalogue, Map<String, EmailTopics.Route> routes, EmailAddress defaultFrom,
                             long maxBodyBytes) {
        this(catalogue, routes, defaultFrom, maxBodyBytes, installedReaders());
    }

    public TemplatedComposer(TemplateCatalogue catalogue, Map<String, EmailTopics.Route> routes, EmailAddress defaultFrom,
                             long maxBodyBytes, List<PayloadReader> readers) {
        this(catalogue, routes, defaultFrom, maxBodyBytes, readers, EnvelopeAttachments.Loader.NONE);
    }

    /** @param attachments where an envelope's attachments are loaded from ({@link EnvelopeAttachments#database}) */
    public TemplatedComposer(TemplateCatalogue catalogue, Map<String, EmailTopics.Route> routes, EmailAddress defaultFrom,
                             long maxBodyBytes, List<PayloadReader> readers, EnvelopeAttachments.Loader attachments) {
        this.attachments = Objects.requireNonNull(attachments, "attachments");
        this.catalogue = Objects.requireNonNull(catalogue, "catalogue");
        this.routes = Map.copyOf(routes);
        this.defaultFrom = Objects.requireNonNull(defaultFrom, "defaultFrom");
        this.maxBodyBytes = maxBodyBytes;
        this.readers = List.copyOf(readers);
    }

    /** The payload readers applications put on the dispatcher's class path. */
    public static List<PayloadReader> installedReaders() {
        return ServiceLoader.load(PayloadReader.class, TemplatedComposer.class.getClassLoader()).stream()
                .map(ServiceLoader.Provider::get).toList();
    }

    @Override
    public Composed compose(ClaimedMessage message) throws RenderException {
        EmailTopics.Route route = routes.get(message.topic());
        if (route == null) {
            throw new RenderException("topic", "'" + message.topic() + "' has no template configured (MAILROOM_TOPICS)");
        }
        JsonNode envelope;
        try {
            envelope = EmailJson.strict().readTree(message.payloadJson()); // no duplicate key, nothing after it
        } catch (JsonProcessingException e) {
            throw new RenderException("payload", "is not valid JSON");
        }
        if (envelope == null || !envelope.isObject()) {
            throw new RenderException("payload", "must be a JSON object (an email envelope)");
        }
        if (!envelope.has("v")) {
            for (PayloadReader reader : readers) {
                if (reader.reads(message.topic(), envelope)) {
                    PayloadReader.Request r = reader.read(envelope);
                    return render(route, r.locale(), r.to(), null, new LinkedHashMap<>(), r.data(), r.fingerprintParts(), List.of());
                }
            }
            throw new RenderException("payload.v", "is missing: not an email envelope, and no payload reader on this"
                    + " dispatcher's class path reads topic " + message.topic() + " (an application that enqueued its own"
                    + " documents before the email API ships one; install it, then retry the email)");
        }
        int version = envelope.path("v").isInt() ? envelope.get("v").intValue() : 0;
        if (version != 1 && version != 2) {
            throw new RenderException("payload.v", "must be 1 or 2 (the envelope versions this dispatcher reads), got " + envelope.get("v"));
        }
        Locale locale = locale(envelope.get("locale"));
        EnvelopeRecipients recipients = version == 2 ? EnvelopeRecipients.v2(envelope) : null;
        EmailAddress to = recipients != null ? recipients.to().getFirst() : mailbox("to", envelope.get("to"));
        EmailAddress replyTo = envelope.hasNonNull("replyTo") ? mailbox("replyTo", envelope.get("replyTo")) : null;
        Map<String, String> headers = headers(envelope.get("headers"));
        JsonNode dataNode = envelope.get("data");
        if (dataNode == null || !dataNode.isObject()) {
            throw new RenderException("payload.data", "must be a JSON object");
        }
        @SuppressWarnings("unchecked")
        Map<String, Object> data = JSON.convertValue(dataNode, LinkedHashMap.class);

        List<String> parts = new ArrayList<>();
        // v1's parts are kept as they were: an email reserved before the upgrade is still recognised
        parts.add(recipients == null ? "email-envelope-v1" : "email-envelope-v2");
        parts.add(route.template());
        parts.add(locale.toLanguageTag());
        parts.add(to.address());
        parts.add(Objects.toString(to.displayName(), ""));
        parts.add(replyTo == null ? "" : replyTo.address() + " " + Objects.toString(replyTo.displayName(), ""));
        parts.add(canonical(new TreeMap<>(headers)));
        if (recipients != null) {
            parts.addAll(recipients.fingerprintParts());
        }
        parts.add(canonical(data));
        List<EnvelopeAttachments.Ref> refs = EnvelopeAttachments.read(envelope.get("attachments"));
        if (!refs.isEmpty()) {
            parts.add(EnvelopeAttachments.fingerprint(refs)); // absent without attachments: earlier fingerprints stay
        }
        return render(route, locale, to, replyTo, headers, data, parts, EnvelopeAttachments.load(refs, attachments), recipients);
    }

    /** The email, with the template and locale the catalogue actually used (stored for support with the reservation). */
    private Composed render(EmailTopics.Route route, Locale locale, EmailAddress to, EmailAddress replyTo,
                            Map<String, String> headers, Map<String, Object> data, List<String> fingerprintParts,
                            List<io.mailroom.email.api.Attachment> attachments) throws RenderException {
        return render(route, locale, to, replyTo, headers, data, fingerprintParts, attachments, null);
    }

    /** With a v2 envelope's {@code recipients}: the email built once with them, its bodies checked once. */
    private Composed render(EmailTopics.Route route, Locale locale, EmailAddress to, EmailAddress replyTo,
                            Map<String, String> headers, Map<String, Object> data, List<String> fingerprintParts,
                            List<io.mailroom.email.api.Attachment> attachments, EnvelopeRecipients recipients) throws RenderException {
        RenderedTemplate rendered;
        try {
            rendered = catalogue.render(route.template(), locale, data);
        } catch (TemplateException e) {
            throw new RenderException("template", e.getMessage());
        }
        // RFC 3834: tells auto-responders (vacation replies) not to answer; the version is for people reading headers
        Map<String, String> all = new LinkedHashMap<>(headers);
        all.keySet().removeIf(h -> h.equalsIgnoreCase("X-Mailroom-Template"));
        all.put("Auto-Submitted", "auto-generated");
        all.put("X-Mailroom-Template", rendered.version());
        EmailAddress from = route.from() != null ? route.from() : defaultFrom;
        Template template = new Template(rendered.template(), rendered.locale().toLanguageTag());
        if (recipients != null) {
            try {
                Email email = new Email(from, to, rendered.subject(), rendered.text(), rendered.html(), all, rendered.version(), replyTo,
                        recipients.to(), recipients.cc(), recipients.bcc(), recipients.tags(), attachments).requireBodyWithin(maxBodyBytes);
                return new Composed(email, fingerprintParts, template);
            } catch (InvalidEmailException e) {
                // the two steps below, for the failure they report, in the order they report it
            }
        }
        Email email = new Email(from, to, rendered.subject(), rendered.text(), rendered.html(), all, rendered.version(), replyTo,
                attachments).requireBodyWithin(maxBodyBytes);
        if (recipients == null) {
            return new Composed(email, fingerprintParts, template);
        }
        try {
            return new Composed(email.withRecipients(recipients.to(), recipients.cc(), recipients.bcc(), recipients.tags()),
                    fingerprintParts, template);
        } catch (InvalidEmailException e) {
            throw new RenderException("payload", e.getMessage()); // an address twice: not an envelope the email API wrote
        }
    }

    private static Locale locale(JsonNode node) throws RenderException {
        if (node == null || node.isNull()) {
            return Locale.ENGLISH;
        }
        try {
            Locale l = new Locale.Builder().setLanguageTag(node.asText()).build();
            if (l.getLanguage().isEmpty()) {
                throw new RenderException("payload.locale", "names no language: '" + node.asText() + "'");
            }
            return l;
        } catch (IllformedLocaleException e) {
            throw new RenderException("payload.locale", "is not a BCP 47 language tag: '" + node.asText() + "'");
        }
    }

    static EmailAddress mailbox(String field, JsonNode node) throws RenderException {
        if (node == null || !node.isObject() || !node.path("address").isTextual()) {
            throw new RenderException("payload." + field, "must be an object with an address");
        }
        JsonNode name = node.get("name");
        if (name != null && !name.isNull()) {
            // the email API's rule: a name that is given must be one (a blank one is not "no name")
            if (!name.isTextual()) {
                throw new RenderException("payload." + field, "displayName: must be a string");
            }
            Optional<String> problem = MailboxRules.displayNameProblem(name.textValue());
            if (problem.isPresent()) {
                throw new RenderException("payload." + field, "displayName: " + problem.get());
            }
        }
        try {
            return EmailAddress.of(node.get("address").textValue(), name == null || name.isNull() ? null : name.textValue());
        } catch (InvalidEmailException e) {
            throw new RenderException("payload." + field, e.getMessage());
        }
    }

    private static Map<String, String> headers(JsonNode node) throws RenderException {
        Map<String, String> headers = new LinkedHashMap<>();
        if (node == null || node.isNull()) {
            return headers;
        }
        if (!node.isObject()) {
            throw new RenderException("payload.headers", "must be an object of header names to values");
        }
        for (Map.Entry<String, JsonNode> h : node.properties()) {
            if (!h.getValue().isTextual()) {
                throw new RenderException("payload.headers." + h.getKey(), "must be a string");
            }
            headers.put(h.getKey(), h.getValue().textValue());
        }
        return headers;
    }

    private static String canonical(Object value) {
        try {
            return JSON.writeValueAsString(value);
        } catch (JsonProcessingException e) {
            throw new IllegalStateException("template data that was just read cannot be written", e);
        }
    }
}
