package io.mailroom.templates;

import java.util.Objects;

/**
 * A template that cannot be used, or data it cannot be rendered with. The {@link Kind} says which,
 * and {@link #permanent()} whether trying the same data again could ever succeed: a payload that
 * lacks a variable fails the same way every time, so a dispatcher fails that message for good.
 * The message names the template, the file and line where known, and the variable or key.
 */
public final class TemplateException extends Exception {

    public enum Kind {
        /** No template of that name in the catalogue. */
        UNKNOWN_TEMPLATE,
        /** A required part (subject, html, text) is missing from the template's folder. */
        MISSING_PART,
        /** A file does not parse. */
        SYNTAX,
        /** The data lacks a variable the template reads. */
        MISSING_VARIABLE,
        /** The template asks for a message key that no messages file for the locale has. */
        MISSING_MESSAGE,
        /** The data is not usable (not a JSON object, a value of the wrong kind for a filter, ...). */
        BAD_DATA,
        /** The rendered output is unusable (an empty subject, over the size limit, ...). */
        BAD_OUTPUT,
        /** The template directory itself could not be read. */
        UNREADABLE
    }

    private final Kind kind;
    private final String template;
    private final String detail;

    public TemplateException(Kind kind, String template, String detail) {
        this(kind, template, detail, null);
    }

    public TemplateException(Kind kind, String template, String detail, Throwable cause) {
        super("template " + (template == null ? "?" : "'" + template + "'") + ": " + detail, cause);
        this.kind = Objects.requireNonNull(kind, "kind");
        this.template = template;
        this.detail = detail;
    }

    public Kind kind() {
        return kind;
    }

    /** The template's name, or null where the problem is not one template's. */
    public String template() {
        return template;
    }

    /** What was wrong, without the template's name. */
    public String detail() {
        return detail;
    }

    /** True when the same template and data would fail the same way again. */
    public boolean permanent() {
        return kind != Kind.UNREADABLE;
    }
}
