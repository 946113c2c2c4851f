package io.mailroom.support;

import com.fasterxml.jackson.annotation.JsonInclude;

import java.time.Instant;

/**
 * What an email was rendered to when it was last sent (or is being sent): the dispatcher stores it
 * before the send, so it is what the customer got, even when the outcome is unknown.
 *
 * @param template   the template's name, null for an email not rendered from a named template (custom)
 * @param version    the template version (a content hash of the template files), as the dispatcher recorded it
 * @param locale     the BCP 47 tag the template was rendered in, null when not known
 * @param subject    the rendered subject
 * @param text       the text part, verbatim
 * @param hasHtml    whether an HTML part is stored; it is served only as a sandboxed preview ({@code previewUrl})
 * @param renderedAt when the rendering was stored (just before its send)
 * @param attempt    the attempt of the timeline it belongs to
 * @param previewUrl the API path of the HTML preview ({@code /api/emails/{key}/preview}), null without HTML
 */
public record Rendering(String template, String version, String locale, String subject, String text, boolean hasHtml,
                        Instant renderedAt, int attempt, @JsonInclude(JsonInclude.Include.NON_NULL) String previewUrl) {

    /** What the CLI and console show for an email without a named template. */
    public static final String CUSTOM = "custom";

    /** The template's name, or {@link #CUSTOM}. */
    public String templateName() {
        return template == null ? CUSTOM : template;
    }
}
