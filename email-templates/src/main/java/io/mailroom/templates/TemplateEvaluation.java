package io.mailroom.templates;

import io.pebbletemplates.pebble.PebbleEngine;
import io.pebbletemplates.pebble.error.AttributeNotFoundException;
import io.pebbletemplates.pebble.error.LoaderException;
import io.pebbletemplates.pebble.error.ParserException;
import io.pebbletemplates.pebble.error.PebbleException;
import io.pebbletemplates.pebble.template.PebbleTemplate;

import java.io.IOException;
import java.io.Writer;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Compiles and evaluates one Pebble file, turning every Pebble failure into a
 * {@link TemplateException} of the right {@link TemplateException.Kind}: classified by the
 * exception's type, never its message, which only says where (file and line).
 */
final class TemplateEvaluation {

    /** The buffer of a file's first evaluation; later ones start at the largest output seen, with room. */
    private static final int FIRST_CAPACITY = 1024;
    private static final int MAX_CAPACITY = 64 * 1024;
    /**
     * The largest output of each file so far (a little more), by file. A buffer of a fixed 8,192 chars
     * for every part, grown and copied as the output needed, was most of the 130 KB allocated per email.
     */
    private static final Map<String, Integer> SIZES = new ConcurrentHashMap<>();

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
        Integer hint = SIZES.get(rel);
        TextOut out = new TextOut(hint == null ? FIRST_CAPACITY : hint);
        try {
            compiled.evaluate(out, data, locale);
        } catch (PebbleException e) {
            throw classify(template, rel, e);
        } catch (IOException e) {
            throw new TemplateException(TemplateException.Kind.UNREADABLE, template, rel + ": " + e, e);
        }
        int length = out.text.length();
        if (hint == null || length > hint) {
            SIZES.put(rel, Math.min(MAX_CAPACITY, length + length / 8 + 16));
        }
        return out.text.toString();
    }

    /** A {@link Writer} over an unsynchronized builder (a {@code StringWriter}'s buffer locks on every write). */
    private static final class TextOut extends Writer {
        final StringBuilder text;

        TextOut(int capacity) {
            this.text = new StringBuilder(capacity);
        }

        @Override
        public void write(char[] cbuf, int off, int len) {
            text.append(cbuf, off, len);
        }

        @Override
        public void write(String str, int off, int len) {
            text.append(str, off, off + len);
        }

        @Override
        public void write(String str) {
            text.append(str);
        }

        @Override
        public void write(int c) {
            text.append((char) c);
        }

        @Override
        public Writer append(CharSequence csq) {
            text.append(csq);
            return this;
        }

        @Override
        public void flush() {
        }

        @Override
        public void close() {
        }
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
