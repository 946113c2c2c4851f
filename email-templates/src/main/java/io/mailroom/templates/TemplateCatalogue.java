package io.mailroom.templates;

import io.pebbletemplates.pebble.PebbleEngine;
import io.pebbletemplates.pebble.template.PebbleTemplate;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.SortedSet;
import java.util.TreeSet;
import java.util.concurrent.ConcurrentHashMap;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The email templates a dispatcher can render: an immutable snapshot of an operator's directory
 * over the built-in defaults, rendered by Pebble. This class loads, checks and renders; the parts it
 * uses hold the other roles: {@link TemplateVersions} (what a version covers),
 * {@link InliningStrategy} (pre-inlined or per-render CSS), {@link TemplateEvaluation} (Pebble
 * failures as {@link TemplateException} kinds) and {@link TemplateData} (data as JSON).
 *
 * <p>Each template is a folder with {@code subject.peb}, {@code html.peb} and {@code text.peb}
 * (the text part is never optional), per-locale {@code messages_xx.properties}, and optionally a
 * {@code sample.json} that {@link #check()} renders in every locale the folder has messages for, and in
 * English, the default wording.
 * The HTML and text parts extend the shared layouts under {@code _layouts/}. In the HTML part
 * every value is HTML-escaped unless a template says {@code | raw}; the subject and text parts are
 * not HTML and are not escaped. A variable the data lacks fails the render with the variable
 * named (Pebble's strict variables), so nothing is ever sent half-rendered.
 */
public final class TemplateCatalogue {

    public static final int MAX_RENDERED_CHARS = 2 * 1024 * 1024;
    public static final List<String> PARTS = List.of("subject.peb", "html.peb", "text.peb");

    private static final Pattern NAME = Pattern.compile("[a-z0-9][a-z0-9_.-]{0,63}");
    private static final Pattern LOCALE_FILE = Pattern.compile("messages_([A-Za-z]{2,3}(?:_[A-Za-z]{2})?)\\.properties");
    private static final Logger LOG = LoggerFactory.getLogger(TemplateCatalogue.class);
    static final String HOSTILE = InliningStrategy.HOSTILE;

    private final TemplateFiles files;
    private final PebbleEngine html;
    private final PebbleEngine text;
    private final TemplateVersions versions;
    private final InliningStrategy inlining;
    private final Map<String, Messages> messages = new ConcurrentHashMap<>();

    private TemplateCatalogue(TemplateFiles files) {
        this.files = files;
        this.html = engine(files, true);
        this.text = engine(files, false);
        this.versions = new TemplateVersions(files);
        this.inlining = new InliningStrategy(files, this);
    }

    private static PebbleEngine engine(TemplateFiles files, boolean escapeHtml) {
        return new PebbleEngine.Builder()
                .loader(new FilesLoader(files))
                .extension(new MailroomExtension())
                .autoEscaping(escapeHtml)
                .defaultEscapingStrategy("html")
                .strictVariables(true)
                // HTML ignores the newline after a tag; in the text part it is the author's
                // line break and stays.
                .newLineTrimming(escapeHtml)
                .maxRenderedSize(MAX_RENDERED_CHARS)
                .cacheActive(true) // the snapshot never changes
                .build();
    }

    /** The templates of {@code directory} (null: none) over the built-in ones. */
    public static TemplateCatalogue load(Path directory) throws TemplateException {
        return new TemplateCatalogue(TemplateFiles.load(directory, true));
    }

    /** The templates of {@code directory} alone, without the built-in ones. */
    public static TemplateCatalogue loadOnly(Path directory) throws TemplateException {
        return new TemplateCatalogue(TemplateFiles.load(directory, false));
    }

    /** The built-in templates, as shipped in the jar. */
    public static TemplateCatalogue builtIn() throws TemplateException {
        return load(null);
    }

    /** A catalogue of the given files (relative path to content), for tests and tools. */
    public static TemplateCatalogue of(Map<String, String> files) {
        return new TemplateCatalogue(TemplateFiles.of(files));
    }

    public SortedSet<String> names() {
        return new TreeSet<>(files.templateNames());
    }

    public boolean has(String name) {
        return name != null && files.templateNames().contains(name);
    }

    /** The locales a template has its own or shared messages for ({@code und} for the default file). */
    public SortedSet<String> locales(String name) {
        SortedSet<String> locales = new TreeSet<>();
        for (String rel : files.paths()) {
            String t = TemplateFiles.templateOf(rel);
            String file = rel.substring(rel.lastIndexOf('/') + 1);
            if ((name.equals(t) || (t == null && rel.indexOf('/') < 0))) {
                Matcher m = LOCALE_FILE.matcher(file);
                if (m.matches()) {
                    locales.add(m.group(1).replace('_', '-'));
                }
            }
        }
        return locales;
    }

    /** Where a file of the snapshot was read from (the directory's path, or "built-in ..."). */
    public String origin(String relativePath) {
        return files.origin(relativePath);
    }

    /**
     * Every problem a start-up should refuse to run with: a folder name that is not a template
     * name, a missing part, a file that does not parse, a messages file that does not load, and
     * any failure to render a template's {@code sample.json} in each of its locales. Empty means
     * every template can be used.
     */
    public List<TemplateException> check() {
        List<TemplateException> problems = new ArrayList<>();
        for (String rel : files.paths()) {
            if (rel.endsWith(".peb")) {
                String t = TemplateFiles.templateOf(rel);
                try {
                    TemplateEvaluation.compile(engineFor(rel), t, rel);
                } catch (TemplateException e) {
                    problems.add(e);
                }
            }
        }
        for (String name : names()) {
            if (!NAME.matcher(name).matches()) {
                problems.add(new TemplateException(TemplateException.Kind.SYNTAX, name,
                        "folder name must be 1-64 of a-z, 0-9, '_', '.', '-', starting with a letter or digit"));
                continue;
            }
            for (String part : PARTS) {
                if (!files.exists(name + "/" + part)) {
                    problems.add(new TemplateException(TemplateException.Kind.MISSING_PART, name, "has no " + part));
                }
            }
            if (files.exists(name + "/sample.json")) {
                Set<String> locales = new TreeSet<>(locales(name));
                locales.remove("und");
                // the default wording too: every locale without a file of its own falls back to it
                locales.add("en");
                for (String tag : locales) {
                    try {
                        renderJson(name, Locale.forLanguageTag(tag), files.read(name + "/sample.json").orElseThrow());
                    } catch (TemplateException e) {
                        problems.add(new TemplateException(e.kind(), name,
                                "sample.json in " + tag + ": " + e.detail(), e));
                    }
                }
            }
        }
        return problems;
    }

    public String version(String name, Locale locale) throws TemplateException {
        requireTemplate(name);
        return versions.version(name, locale);
    }

    /** Renders with data given as a JSON object. */
    public RenderedTemplate renderJson(String name, Locale locale, String json) throws TemplateException {
        return render(name, locale, parseData(name, json));
    }

    /** Parses template data: a JSON object, decimals kept exact. */
    public static Map<String, Object> parseData(String template, String json) throws TemplateException {
        return TemplateData.parse(template, json);
    }

    /** Renders the three parts; any failure is a {@link TemplateException} and nothing is returned. */
    public RenderedTemplate render(String name, Locale locale, Map<String, Object> data) throws TemplateException {
        requireTemplate(name);
        String version = version(name, locale);
        Messages wording = messages(name, locale);
        Optional<PebbleTemplate> fast = inlining.preInlined(name); // before the scope: proving it renders
        Messages previous = MailroomExtension.scope.get();
        MailroomExtension.scope.set(wording);
        try {
            String subject = TextLayout.oneLine(TemplateEvaluation.evaluate(text, name, name + "/subject.peb", data, locale));
            if (subject.isEmpty()) {
                throw new TemplateException(TemplateException.Kind.BAD_OUTPUT, name, "subject.peb rendered an empty subject");
            }
            String body = TextLayout.blankLinesCollapsed(TemplateEvaluation.evaluate(text, name, name + "/text.peb", data, locale).strip()) + "\n";
            String markup = fast.isPresent() ? fastHtml(fast.get(), name, data, locale) : inlinedPerRender(name, data, locale);
            return new RenderedTemplate(name, version, locale, subject, body, markup);
        } finally {
            if (previous == null) {
                MailroomExtension.scope.remove();
            } else {
                MailroomExtension.scope.set(previous);
            }
        }
    }

    private String inlinedPerRender(String name, Map<String, Object> data, Locale locale) throws TemplateException {
        return CssInliner.inline(TemplateEvaluation.evaluate(html, name, name + "/html.peb", data, locale));
    }

    private String fastHtml(PebbleTemplate template, String name, Map<String, Object> data, Locale locale) throws TemplateException {
        try {
            String out = TemplateEvaluation.evaluate(template, name, name + "/html.peb", data, locale);
            // Far below the limit the per-render path would have hit on its larger, unescaped output
            if (out.length() <= MAX_RENDERED_CHARS / 8) {
                return out;
            }
        } catch (TemplateException | RuntimeException e) {
            // the per-render path below fails the same way, naming the original file and line
        }
        return inlinedPerRender(name, data, locale);
    }

    /** The template's pre-inlined HTML part, once proved; empty: inline per render. */
    Optional<PebbleTemplate> preInlined(String name) {
        return inlining.preInlined(name);
    }

    /** Compiles a source as pre-inlined HTML (for tests). */
    PebbleTemplate compileInlined(String source) {
        return inlining.compileInlined(source);
    }

    /** Null when the pre-inlined template renders exactly what per-render inlining does, else what differs. */
    String prove(String name, PebbleTemplate template) {
        return inlining.prove(name, template);
    }

    /** The HTML part alone: inlined per render (template null) or by the pre-inlined template. */
    String html(String name, Locale locale, Map<String, Object> data, PebbleTemplate template) throws TemplateException {
        Messages previous = MailroomExtension.scope.get();
        try {
            MailroomExtension.scope.set(messages(name, locale));
            return template == null ? inlinedPerRender(name, data, locale) : TemplateEvaluation.evaluate(template, name, name + "/html.peb", data, locale);
        } finally {
            if (previous == null) {
                MailroomExtension.scope.remove();
            } else {
                MailroomExtension.scope.set(previous);
            }
        }
    }

    private Messages messages(String name, Locale locale) throws TemplateException {
        String key = name + "|" + locale.toLanguageTag();
        Messages m = messages.get(key);
        if (m == null) {
            m = Messages.load(files, name, locale);
            messages.put(key, m);
        }
        return m;
    }

    private void requireTemplate(String name) throws TemplateException {
        if (!has(name)) {
            throw new TemplateException(TemplateException.Kind.UNKNOWN_TEMPLATE, name,
                    "no such template (known: " + String.join(", ", names()) + ")");
        }
        for (String part : PARTS) {
            if (!files.exists(name + "/" + part)) {
                throw new TemplateException(TemplateException.Kind.MISSING_PART, name, "has no " + part);
            }
        }
    }

    private PebbleEngine engineFor(String rel) {
        String file = rel.substring(rel.lastIndexOf('/') + 1);
        return file.equals("html.peb") || file.endsWith(".html.peb") ? html : text;
    }
}
