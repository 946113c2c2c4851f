package io.mailroom.templates;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.core.StreamReadFeature;
import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.json.JsonMapper;
import io.pebbletemplates.pebble.PebbleEngine;
import io.pebbletemplates.pebble.error.AttributeNotFoundException;
import io.pebbletemplates.pebble.error.LoaderException;
import io.pebbletemplates.pebble.error.ParserException;
import io.pebbletemplates.pebble.error.PebbleException;
import io.pebbletemplates.pebble.loader.StringLoader;
import io.pebbletemplates.pebble.template.PebbleTemplate;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.io.StringWriter;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.HexFormat;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.SortedSet;
import java.util.TreeSet;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.UnaryOperator;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The email templates a dispatcher can render: an immutable snapshot of an operator's directory
 * ({@code MAILROOM_TEMPLATES_DIR}) over the built-in defaults, rendered by Pebble.
 *
 * <p>Each template is a folder with {@code subject.peb}, {@code html.peb} and {@code text.peb}
 * (the text part is never optional), per-locale {@code messages_xx.properties}, and optionally a
 * {@code sample.json} that {@link #check()} renders in every locale the folder has messages for, and in
 * English, the default wording.
 * The HTML and text parts extend the shared layouts under {@code _layouts/}. In the HTML part
 * every value is HTML-escaped unless a template says {@code | raw}; the subject and text parts are
 * not HTML and are not escaped. A variable the data lacks fails the render with the variable
 * named (Pebble's strict variables), so nothing is ever sent half-rendered.
 *
 * <p>A template's {@link #version} is a hash of every file its rendering can read for a locale,
 * its own files and the shared ones, so the idempotency fingerprint of an email changes exactly
 * when what would be rendered for it can change, and never because of an unrelated template.
 *
 * <p>The CSS of a template's HTML part is inlined into its source once, on first use (see
 * {@link PreInliner}), when the result renders byte for byte what inlining each rendered email
 * would, for its {@code sample.json} in every locale it is checked in, and for that sample made
 * hostile and made empty. A template that cannot be pre-inlined or proved is inlined per render,
 * as before, and says so once in the log.
 */
public final class TemplateCatalogue {

    public static final String ENV_DIR = "MAILROOM_TEMPLATES_DIR";
    public static final int MAX_RENDERED_CHARS = 2 * 1024 * 1024;
    public static final List<String> PARTS = List.of("subject.peb", "html.peb", "text.peb");

    private static final Pattern NAME = Pattern.compile("[a-z0-9][a-z0-9_.-]{0,63}");
    private static final Pattern LOCALE_FILE = Pattern.compile("messages_([A-Za-z]{2,3}(?:_[A-Za-z]{2})?)\\.properties");
    private static final Pattern SPACE = Pattern.compile("\\s+");
    private static final Pattern BLANK_LINES = Pattern.compile("(?:[ \\t]*\\r?\\n){3,}");
    private static final Logger LOG = LoggerFactory.getLogger(TemplateCatalogue.class);
    /** Every character jsoup re-escapes or drops, and markup, for proving a pre-inlined template. */
    static final String HOSTILE = "<b a=\"1\">&amp;&copy \"Co\" 'x'\u00a0\u0000\uD83D\uDE00\uD800</b>\n";
    private static final JsonMapper JSON = JsonMapper.builder()
            .enable(StreamReadFeature.STRICT_DUPLICATE_DETECTION)
            .enable(DeserializationFeature.FAIL_ON_TRAILING_TOKENS)
            .enable(DeserializationFeature.USE_BIG_DECIMAL_FOR_FLOATS)
            .build();

    private final TemplateFiles files;
    private final PebbleEngine html;
    private final PebbleEngine text;
    private final PebbleEngine inlined;
    private final Map<String, Optional<PebbleTemplate>> preInlined = new ConcurrentHashMap<>();
    private final Map<String, String> versions = new ConcurrentHashMap<>();
    private final Map<String, Messages> messages = new ConcurrentHashMap<>();

    private TemplateCatalogue(TemplateFiles files) {
        this.files = files;
        this.html = engine(files, true);
        this.text = engine(files, false);
        this.inlined = new PebbleEngine.Builder()
                .loader(new StringLoader()) // the pre-inlined source is the name; compiled once, kept in preInlined
                .extension(new MailroomExtension())
                .autoEscaping(true)
                .addEscapingStrategy(PreInliner.TEXT, PreInliner.JsoupEscaping::text)
                .addEscapingStrategy(PreInliner.ATTRIBUTE, PreInliner.JsoupEscaping::attribute)
                .addEscapingStrategy(PreInliner.RCDATA, PreInliner.JsoupEscaping::rcdata)
                .defaultEscapingStrategy(PreInliner.TEXT)
                .strictVariables(true)
                .newLineTrimming(true)
                .maxRenderedSize(MAX_RENDERED_CHARS)
                .cacheActive(false)
                .build();
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
                    compile(engineFor(rel), t, rel);
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

    /**
     * The template's version for a locale: its name and the first 16 hex digits of a SHA-256 over
     * every file the render can read (the template's folder and the shared files, but of the
     * messages files only those of the locale's fallback chain).
     */
    public String version(String name, Locale locale) throws TemplateException {
        requireTemplate(name);
        return versions.computeIfAbsent(name + "|" + locale.toLanguageTag(), k -> {
            Set<String> localeChain = Set.copyOf(Messages.files(name, locale));
            MessageDigest sha;
            try {
                sha = MessageDigest.getInstance("SHA-256");
            } catch (NoSuchAlgorithmException e) {
                throw new IllegalStateException(e);
            }
            sha.update("mailroom-template-v1\0".getBytes(StandardCharsets.UTF_8));
            for (String rel : files.paths()) {
                String t = TemplateFiles.templateOf(rel);
                boolean messagesFile = rel.substring(rel.lastIndexOf('/') + 1).startsWith("messages");
                boolean mine = name.equals(t) || t == null;
                if (!mine || rel.equals(name + "/sample.json") || (messagesFile && !localeChain.contains(rel))) {
                    continue;
                }
                sha.update(rel.getBytes(StandardCharsets.UTF_8));
                sha.update((byte) 0);
                sha.update(files.read(rel).orElseThrow().getBytes(StandardCharsets.UTF_8));
                sha.update((byte) 0);
            }
            return name + "@" + HexFormat.of().formatHex(sha.digest(), 0, 8);
        });
    }

    /** Renders with data given as a JSON object. */
    public RenderedTemplate renderJson(String name, Locale locale, String json) throws TemplateException {
        return render(name, locale, parseData(name, json));
    }

    /** Parses template data: a JSON object, decimals kept exact. */
    public static Map<String, Object> parseData(String template, String json) throws TemplateException {
        JsonNode node;
        try {
            node = JSON.readTree(json == null ? "" : json);
        } catch (JsonProcessingException e) {
            throw new TemplateException(TemplateException.Kind.BAD_DATA, template,
                    "data is not valid JSON (line " + e.getLocation().getLineNr() + ", column " + e.getLocation().getColumnNr() + ")", e);
        }
        if (node == null || !node.isObject()) {
            throw new TemplateException(TemplateException.Kind.BAD_DATA, template, "data must be a JSON object");
        }
        @SuppressWarnings("unchecked")
        Map<String, Object> data = JSON.convertValue(node, Map.class);
        return data;
    }

    /** Renders the three parts; any failure is a {@link TemplateException} and nothing is returned. */
    public RenderedTemplate render(String name, Locale locale, Map<String, Object> data) throws TemplateException {
        requireTemplate(name);
        String version = version(name, locale);
        Messages wording = messages(name, locale);
        Optional<PebbleTemplate> fast = preInlined(name); // before the scope: proving it renders
        Messages previous = MailroomExtension.scope.get();
        MailroomExtension.scope.set(wording);
        try {
            String subject = SPACE.matcher(evaluate(text, name, name + "/subject.peb", data, locale)).replaceAll(" ").strip();
            if (subject.isEmpty()) {
                throw new TemplateException(TemplateException.Kind.BAD_OUTPUT, name, "subject.peb rendered an empty subject");
            }
            String body = BLANK_LINES.matcher(evaluate(text, name, name + "/text.peb", data, locale).strip()).replaceAll("\n\n") + "\n";
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
        return CssInliner.inline(evaluate(html, name, name + "/html.peb", data, locale));
    }

    private String fastHtml(PebbleTemplate template, String name, Map<String, Object> data, Locale locale) throws TemplateException {
        try {
            String out = evaluate(template, name, name + "/html.peb", data, locale);
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
        return preInlined.computeIfAbsent(name, this::prepare);
    }

    /** Compiles a source as pre-inlined HTML (for tests). */
    PebbleTemplate compileInlined(String source) {
        return inlined.getTemplate(source);
    }

    private Optional<PebbleTemplate> prepare(String name) {
        PreInliner.Result result = PreInliner.prepare(files, name + "/html.peb");
        String why = result.reason();
        PebbleTemplate template = null;
        if (result.source().isPresent()) {
            if (!files.exists(name + "/sample.json")) {
                why = "no sample.json to prove it on";
            } else {
                try {
                    template = inlined.getTemplate(result.source().get());
                    why = prove(name, template);
                } catch (PebbleException e) {
                    why = "the pre-inlined source does not compile: " + e.getPebbleMessage();
                }
            }
        }
        if (why != null) {
            LOG.info("Template {}: CSS inlined per render ({})", name, why);
            return Optional.empty();
        }
        LOG.debug("Template {}: CSS pre-inlined", name);
        return Optional.of(template);
    }

    /** Null when the pre-inlined template renders exactly what per-render inlining does, else what differs. */
    String prove(String name, PebbleTemplate template) {
        Map<String, Object> sample;
        try {
            sample = parseData(name, files.read(name + "/sample.json").orElseThrow());
        } catch (TemplateException e) {
            return "sample.json: " + e.detail();
        }
        Set<String> tags = new TreeSet<>(locales(name));
        tags.remove("und");
        tags.add("en");
        for (String tag : tags) {
            Locale locale = Locale.forLanguageTag(tag);
            // whitespace too: where the parser treats text by its content (a table, the head), it shows
            List<UnaryOperator<String>> variants = List.of(s -> s, s -> HOSTILE + s, s -> "", s -> " ");
            for (int v = 0; v < variants.size(); v++) {
                Map<String, Object> data = variant(name, locale, sample, variants.get(v));
                if (data == null) {
                    return "sample.json does not render in " + tag;
                }
                String expected;
                String actual;
                try {
                    expected = html(name, locale, data, null);
                    actual = html(name, locale, data, template);
                } catch (TemplateException | RuntimeException e) {
                    return "fails in " + tag + " where per-render inlining does not: " + e.getMessage();
                }
                if (!expected.equals(actual)) {
                    return "differs from per-render inlining in " + tag + List.of("", " for hostile data", " for empty strings", " for blank strings").get(v);
                }
            }
        }
        return null;
    }

    /** The sample with as many of its strings changed as still render (a currency, a date must stay). */
    private Map<String, Object> variant(String name, Locale locale, Map<String, Object> sample, UnaryOperator<String> change) {
        int leaves = count(sample);
        Set<Integer> changed = new HashSet<>();
        for (int i = 0; i < leaves; i++) {
            changed.add(i);
        }
        if (renders(name, locale, changed, sample, change)) {
            return mutated(sample, changed, change);
        }
        changed.clear();
        if (!renders(name, locale, changed, sample, change)) {
            return null;
        }
        for (int i = 0; i < leaves; i++) {
            changed.add(i);
            if (!renders(name, locale, changed, sample, change)) {
                changed.remove(i);
            }
        }
        return mutated(sample, changed, change);
    }

    private boolean renders(String name, Locale locale, Set<Integer> changed, Map<String, Object> sample, UnaryOperator<String> change) {
        try {
            html(name, locale, mutated(sample, changed, change), null);
            return true;
        } catch (TemplateException e) {
            return false;
        }
    }

    @SuppressWarnings("unchecked")
    private static Map<String, Object> mutated(Map<String, Object> sample, Set<Integer> changed, UnaryOperator<String> change) {
        return (Map<String, Object>) strings(sample, changed::contains, change, new int[1]);
    }

    private static int count(Object value) {
        int[] n = new int[1];
        strings(value, i -> false, s -> s, n);
        return n[0];
    }

    /** A copy of the data with the string leaves {@code which} accepts (numbered depth first) changed. */
    private static Object strings(Object value, java.util.function.IntPredicate which, UnaryOperator<String> change, int[] counter) {
        if (value instanceof String s) {
            return which.test(counter[0]++) ? change.apply(s) : s;
        }
        if (value instanceof Map<?, ?> m) {
            Map<Object, Object> copy = new LinkedHashMap<>();
            m.forEach((k, v) -> copy.put(k, strings(v, which, change, counter)));
            return copy;
        }
        if (value instanceof List<?> l) {
            List<Object> copy = new ArrayList<>();
            l.forEach(v -> copy.add(strings(v, which, change, counter)));
            return copy;
        }
        return value;
    }

    /** The HTML part alone: inlined per render (template null) or by the pre-inlined template. */
    String html(String name, Locale locale, Map<String, Object> data, PebbleTemplate template) throws TemplateException {
        Messages previous = MailroomExtension.scope.get();
        try {
            MailroomExtension.scope.set(messages(name, locale));
            return template == null ? inlinedPerRender(name, data, locale) : evaluate(template, name, name + "/html.peb", data, locale);
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

    private static PebbleTemplate compile(PebbleEngine engine, String template, String rel) throws TemplateException {
        try {
            return engine.getTemplate(rel);
        } catch (PebbleException e) {
            throw classify(template, rel, e);
        }
    }

    private static String evaluate(PebbleEngine engine, String template, String rel, Map<String, Object> data, Locale locale)
            throws TemplateException {
        return evaluate(compile(engine, template, rel), template, rel, data, locale);
    }

    private static String evaluate(PebbleTemplate compiled, String template, String rel, Map<String, Object> data, Locale locale)
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
    private static TemplateException classify(String template, String rel, PebbleException e) {
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
