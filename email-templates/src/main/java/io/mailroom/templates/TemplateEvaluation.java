package io.mailroom.templates;

import io.pebbletemplates.pebble.PebbleEngine;
import io.pebbletemplates.pebble.error.AttributeNotFoundException;
import io.pebbletemplates.pebble.error.LoaderException;
import io.pebbletemplates.pebble.error.ParserException;
import io.pebbletemplates.pebble.error.PebbleException;
import io.pebbletemplates.pebble.template.PebbleTemplate;

import java.io.IOException;
import java.io.StringWriter;
import java.util.Locale;
import java.util.Map;

/**
 * Compiles and evaluates one Pebble file, turning every Pebble failure into a
 * {@link TemplateException} of the right {@link TemplateException.Kind}: classified by the
 * exception's type, never its message, which only says where (file and line).
 */
final class TemplateEvaluation {

    private TemplateEvaluation() {
    }

    static PebbleTemplate compile(PebbleEngine engine, String template, String rel) throws TemplateException {
        try {
            return engine.getTemplate(rel);
        } catch (PebbleException e) {
            throw classify(template, rel, e);
        }
    }

    static String evaluate(PebbleEngine engine, String template, String rel, Map<String, Object> data, Locale locale)
            throws TemplateException {
        return evaluate(compile(engine, template, rel), template, rel, data, locale);
    }

    static String evaluate(PebbleTemplate compiled, String template, String rel, Map<String, Object> data, Locale locale)
            throws TemplateException {
        StringWriter out = new StringWriter(8192);
        try {
            compiled.evaluate(out, data, locale);
        } catch (PebbleException e) {
            throw classify(template, rel, e);
        } catch (IOException e) {
            throw new TemplateException(TemplateException.Kind.UNREADABLE, template, rel + ": " + e, e);
        }
        return out.toString();
    }

    /** Classifies by exception type, innermost first; the message only reports where. */
    static TemplateException classify(String template, String rel, PebbleException e) {
        for (Throwable t = e; t != null; t = t.getCause()) {
            if (t instanceof MailroomExtension.Failure f) {
                return new TemplateException(f.kind, template, f.detail + where(f, rel), e);
            }
            if (t instanceof AttributeNotFoundException a) {
                return new TemplateException(TemplateException.Kind.MISSING_VARIABLE, template,
                        "the data has no '" + a.getAttributeName() + "'" + where(a, rel), e);
            }
        }
        for (Throwable t = e; t != null; t = t.getCause()) {
            if (t instanceof ParserException p) {
                return new TemplateException(TemplateException.Kind.SYNTAX, template, p.getPebbleMessage() + where(p, rel), e);
            }
            if (t instanceof LoaderException l) {
                return new TemplateException(TemplateException.Kind.MISSING_PART, template, l.getPebbleMessage() + where(l, rel), e);
            }
        }
        return new TemplateException(TemplateException.Kind.BAD_DATA, template, e.getPebbleMessage() + where(e, rel), e);
    }

    private static String where(PebbleException e, String rel) {
        String file = e.getFileName() == null ? rel : e.getFileName();
        return " (" + file + (e.getLineNumber() == null || e.getLineNumber() < 0 ? "" : ":" + e.getLineNumber()) + ")";
    }
}
