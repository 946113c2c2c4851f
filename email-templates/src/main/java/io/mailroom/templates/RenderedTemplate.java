package io.mailroom.templates;

import java.util.Locale;
import java.util.Objects;

/**
 * One template rendered with one payload: a single-line subject, the text part (always present)
 * and the HTML part with its CSS inlined. {@code version} identifies the template files that
 * produced it (see {@link TemplateCatalogue#version}), so it belongs in an idempotency fingerprint.
 */
public record RenderedTemplate(String template, String version, Locale locale, String subject, String text, String html) {

    public RenderedTemplate {
        Objects.requireNonNull(template, "template");
        Objects.requireNonNull(version, "version");
        Objects.requireNonNull(locale, "locale");
        Objects.requireNonNull(subject, "subject");
        Objects.requireNonNull(text, "text");
        Objects.requireNonNull(html, "html");
    }

    @Override
    public String toString() {
        return "RenderedTemplate[" + version + ", " + locale.toLanguageTag() + ", subject " + subject.length()
                + " chars, text " + text.length() + " chars, html " + html.length() + " chars]";
    }
}
