package io.mailroom.email.render;

import com.fasterxml.jackson.databind.JsonNode;
import io.mailroom.email.EmailAddress;

import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;

/**
 * Reads a payload an application enqueued before it used the email API: a document of its own,
 * without the envelope's {@code "v"}, that {@link TemplatedComposer} would otherwise fail. The
 * application that wrote such payloads ships its reader; a dispatcher finds every reader on its
 * class path with {@link java.util.ServiceLoader} ({@code META-INF/services/io.mailroom.email.render.PayloadReader}),
 * so Mailroom itself knows no application's format. A reader keeps the fingerprint its application's
 * old renderer reserved under, so an email sent or in doubt before the upgrade is recognised after it.
 */
public interface PayloadReader {

    /** Whether this reader reads {@code payload} on {@code topic}; asked only for payloads without {@code "v"}. */
    boolean reads(String topic, JsonNode payload);

    /** The email request in the payload; a {@link RenderException} names the field that makes it unsendable. */
    Request read(JsonNode payload) throws RenderException;

    /**
     * What an envelope would have said: the locale, the recipient, the template's data, and the
     * parts of the fingerprint the email is reserved under.
     */
    record Request(Locale locale, EmailAddress to, Map<String, Object> data, List<String> fingerprintParts) {
        public Request {
            Objects.requireNonNull(locale, "locale");
            Objects.requireNonNull(to, "to");
            Objects.requireNonNull(data, "data");
            fingerprintParts = List.copyOf(fingerprintParts);
        }
    }
}
