package io.mailroom.templates;

import io.pebbletemplates.pebble.PebbleEngine;
import io.pebbletemplates.pebble.error.PebbleException;
import io.pebbletemplates.pebble.loader.StringLoader;
import io.pebbletemplates.pebble.template.PebbleTemplate;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.IntPredicate;
import java.util.function.UnaryOperator;

/**
 * Chooses, per template, how the CSS of its HTML part is inlined: into the source once, on first
 * use ({@link PreInliner}), when the result is proved to render byte for byte what inlining each
 * rendered email would, for its {@code sample.json} in every locale it is checked in, and for that
 * sample made hostile, empty and blank; otherwise per render, said once in the log. A template is
 * never pre-inlined without that proof.
 */
final class InliningStrategy {

    private static final Logger LOG = LoggerFactory.getLogger(TemplateCatalogue.class);
    /** Every character jsoup re-escapes or drops, and markup, for proving a pre-inlined template. */
    static final String HOSTILE = "<b a=\"1\">&amp;&copy \"Co\" 'x'\u00a0\u0000\uD83D\uDE00\uD800</b>\n";

    private final TemplateFiles files;
    private final TemplateCatalogue catalogue;
    private final PebbleEngine inlined;
    private final Map<String, Optional<PebbleTemplate>> preInlined = new ConcurrentHashMap<>();

    InliningStrategy(TemplateFiles files, TemplateCatalogue catalogue) {
        this.files = files;
        this.catalogue = catalogue;
        this.inlined = new PebbleEngine.Builder()
                .loader(new StringLoader()) // the pre-inlined source is the name; compiled once, kept in preInlined
                .extension(new MailroomExtension())
                .autoEscaping(true)
                .addEscapingStrategy(PreInliner.TEXT, JsoupEscaping::text)
                .addEscapingStrategy(PreInliner.ATTRIBUTE, JsoupEscaping::attribute)
                .addEscapingStrategy(PreInliner.RCDATA, JsoupEscaping::rcdata)
                .defaultEscapingStrategy(PreInliner.TEXT)
                .strictVariables(true)
                .newLineTrimming(true)
                .maxRenderedSize(TemplateCatalogue.MAX_RENDERED_CHARS)
                .cacheActive(false)
                .build();
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
            sample = TemplateData.parse(name, files.read(name + "/sample.json").orElseThrow());
        } catch (TemplateException e) {
            return "sample.json: " + e.detail();
        }
        Set<String> tags = new TreeSet<>(catalogue.locales(name));
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
                    expected = catalogue.html(name, locale, data, null);
                    actual = catalogue.html(name, locale, data, template);
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
            catalogue.html(name, locale, mutated(sample, changed, change), null);
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
    private static Object strings(Object value, IntPredicate which, UnaryOperator<String> change, int[] counter) {
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
}
