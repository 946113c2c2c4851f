package io.mailroom.templates;

import io.pebbletemplates.pebble.template.PebbleTemplate;
import org.jsoup.nodes.Document;
import org.jsoup.nodes.Element;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import org.unbescape.html.HtmlEscape;

import java.io.IOException;
import java.math.BigDecimal;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** The CSS inlined once into the template source renders exactly what inlining every email does. */
class PreInliningTest {

    private static final List<String> LOCALES = List.of("en", "vi", "vi-VN", "fr", "fr-CA", "de", "ja", "ar");
    private static final List<String> NASTY = List.of("", " ", "\n", "plain", TemplateCatalogue.HOSTILE,
            "</td></tr></table><script>alert(1)</script>", "a & b < c > d \" e ' f", "&amp; &lt; &#39; &copy &nbsp;",
            "\u00a0\u202f\u2028\u0000\u0001\r\n\r", "\uD83D\uDE00 \uDFFF\uD800", "{{ x }} {% if %}", "<!-- c --> <![CDATA[ x ]]>",
            "Nguyễn Thị <Ánh> & \"Co\"");

    /** The module's test templates (src/test/resources/templates) over the built-in layouts. */
    private static TemplateCatalogue catalogue() throws TemplateException {
        try {
            return TemplateCatalogue.load(Path.of(PreInliningTest.class.getClassLoader().getResource("templates").toURI()));
        } catch (java.net.URISyntaxException e) {
            throw new AssertionError(e);
        }
    }

    private static String read(String relative) {
        try (var in = PreInliningTest.class.getClassLoader().getResourceAsStream("templates/" + relative)) {
            return new String(in.readAllBytes(), StandardCharsets.UTF_8);
        } catch (IOException e) {
            throw new AssertionError(e);
        }
    }

    @ParameterizedTest
    @ValueSource(strings = {"receipt", "welcome"})
    void everyTemplateIsPreInlinedAndRendersItsSampleExactlyAsPerRenderInliningInEveryLocale(String name) throws Exception {
        TemplateCatalogue catalogue = catalogue();
        PebbleTemplate fast = catalogue.preInlined(name).orElseThrow(() -> new AssertionError(name + " was not pre-inlined"));
        Map<String, Object> sample = TemplateCatalogue.parseData(name, read(name + "/sample.json"));
        for (String tag : LOCALES) {
            Locale locale = Locale.forLanguageTag(tag);
            String perRender = catalogue.html(name, locale, sample, null);
            assertThat(catalogue.html(name, locale, sample, fast)).as(name + " in " + tag).isEqualTo(perRender);
            assertThat(catalogue.render(name, locale, sample).html()).as("render() of " + name + " in " + tag).isEqualTo(perRender);
        }
    }

    @ParameterizedTest
    @ValueSource(strings = {"receipt"})
    void hostileStringsInEveryFieldRenderExactlyAsPerRenderInlining(String name) throws Exception {
        TemplateCatalogue catalogue = catalogue();
        PebbleTemplate fast = catalogue.preInlined(name).orElseThrow();
        Map<String, Object> sample = TemplateCatalogue.parseData(name, read(name + "/sample.json"));
        int compared = 0;
        for (String tag : List.of("en", "vi", "fr")) {
            Locale locale = Locale.forLanguageTag(tag);
            for (String nasty : NASTY) {
                for (String field : fields(sample)) {
                    Map<String, Object> data = replaced(sample, field, nasty);
                    String perRender;
                    try {
                        perRender = catalogue.html(name, locale, data, null);
                    } catch (TemplateException e) {
                        continue; // a currency or a timestamp must stay one
                    }
                    assertThat(catalogue.html(name, locale, data, fast)).as(name + " " + tag + " " + field + "=" + nasty).isEqualTo(perRender);
                    compared++;
                }
            }
        }
        assertThat(compared).isGreaterThan(50);
    }

    @Test
    void aReceiptWithNoneOneOrManyLinesAndNullsRendersExactlyAsPerRenderInlining() throws Exception {
        TemplateCatalogue catalogue = catalogue();
        PebbleTemplate fast = catalogue.preInlined("receipt").orElseThrow();
        for (int lines = 0; lines <= 7; lines += 1) {
            List<Map<String, Object>> items = new ArrayList<>();
            for (int i = 0; i < lines; i++) {
                items.add(Map.of("sku", "S" + i, "name", NASTY.get(i % NASTY.size()), "quantity", i,
                        "amount", new BigDecimal("1234.5").multiply(BigDecimal.valueOf(i))));
            }
            Map<String, Object> order = new HashMap<>(Map.of("id", "<9>", "currency", lines % 2 == 0 ? "EUR" : "VND",
                    "total", new BigDecimal("99999.99"), "createdAt", "2026-12-03T09:15:00+07:00", "lines", items));
            Map<String, Object> data = Map.of("customer", Map.of("name", "O'Brien & <Sons>"), "order", order);
            for (String tag : LOCALES) {
                Locale locale = Locale.forLanguageTag(tag);
                assertThat(catalogue.html("receipt", locale, data, fast)).as(lines + " lines in " + tag)
                        .isEqualTo(catalogue.html("receipt", locale, data, null));
            }
        }
    }

    /** Every UTF-16 unit, in text, in an attribute and in the title: escaped as jsoup re-serializes it. */
    @Test
    void valuesAreEscapedExactlyAsJsoupReserializesThemForEveryCharacter() {
        for (int from = 0; from < 0x10000; from += 512) {
            StringBuilder chunk = new StringBuilder();
            for (int c = from; c < from + 512; c++) {
                chunk.append((char) c).append('.'); // '.' between: a surrogate stays alone
            }
            String value = chunk.toString();
            String escaped = HtmlEscape.escapeHtml4Xml(value);
            Document doc = CssInliner.parse("<html><head><title>" + escaped + "</title></head><body><p title=\"" + escaped + "\">"
                    + escaped + "</p></body></html>");
            Element p = doc.selectFirst("p");
            String attribute = p.outerHtml();
            attribute = attribute.substring("<p title=\"".length(), attribute.indexOf("\">"));
            assertThat(JsoupEscaping.text(value)).as("text from U+%04X", from).isEqualTo(p.html());
            assertThat(JsoupEscaping.attribute(value)).as("attribute from U+%04X", from).isEqualTo(attribute);
            assertThat(JsoupEscaping.rcdata(value)).as("title from U+%04X", from).isEqualTo(doc.selectFirst("title").html());
        }
        String pairs = "\uD83D\uDE00\uD800\uDC00x\uDBFF\uDFFF";
        Document doc = CssInliner.parse("<p>" + pairs + "</p>");
        assertThat(JsoupEscaping.text(pairs)).isEqualTo(doc.selectFirst("p").html());
    }

    // ---- the fallback: templates the pre-inliner refuses or cannot prove are inlined per render

    private static Map<String, String> hello(String html) {
        Map<String, String> files = new HashMap<>();
        files.put("hello/subject.peb", "Hello");
        files.put("hello/text.peb", "Hi {{ name }}");
        files.put("hello/html.peb", "<style>p { color: red; } td { padding: 2px; } .x { margin: 0; }</style>" + html);
        files.put("hello/messages.properties", "subject=Hello\n");
        files.put("hello/sample.json", "{\"name\": \"An\", \"cls\": \"x\", \"rows\": [\"a\", \"b\"], \"flag\": true}");
        return files;
    }

    private static void assertPerRender(Map<String, String> files, String reason) throws Exception {
        TemplateCatalogue catalogue = TemplateCatalogue.of(files);
        assertThat(catalogue.preInlined("hello")).isEmpty();
        if (reason != null) {
            assertThat(PreInliner.prepare(TemplateFiles.of(files), "hello/html.peb").reason()).contains(reason);
        }
        Map<String, Object> data = TemplateCatalogue.parseData("hello", files.get("hello/sample.json"));
        String html = catalogue.render("hello", Locale.ENGLISH, data).html();
        assertThat(html).isEqualTo(catalogue.html("hello", Locale.ENGLISH, data, null))
                .contains("color: red;");
    }

    @Test
    void aSimpleTemplateWithASampleIsPreInlined() throws Exception {
        Map<String, String> files = hello("<table><tbody>{% for r in rows %}<tr><td>{{ r }}</td></tr>{% endfor %}</tbody></table><p title=\"{{ name }}\">Hi {{ name }}</p>");
        TemplateCatalogue catalogue = TemplateCatalogue.of(files);
        assertThat(catalogue.preInlined("hello")).isPresent();
        assertThat(catalogue.render("hello", Locale.ENGLISH, Map.of("name", "<An>", "rows", List.of("<1>", "\"2\""))).html())
                .contains("<td style=\"padding: 2px;\">&lt;1&gt;</td>", "<td style=\"padding: 2px;\">\"2\"</td>",
                        "<p title=\"&lt;An&gt;\" style=\"color: red;\">Hi &lt;An&gt;</p>");
    }

    @Test
    void aTemplateWithoutSampleIsInlinedPerRender() throws Exception {
        Map<String, String> files = hello("<p>Hi {{ name }}</p>");
        files.remove("hello/sample.json");
        TemplateCatalogue catalogue = TemplateCatalogue.of(files);
        assertThat(catalogue.preInlined("hello")).isEmpty();
        assertThat(catalogue.render("hello", Locale.ENGLISH, Map.of("name", "<An>")).html())
                .contains("<p style=\"color: red;\">Hi &lt;An&gt;</p>");
    }

    @Test
    void aValueInAClassAttributeIsInlinedPerRender() throws Exception {
        assertPerRender(hello("<p class=\"{{ cls }}\">Hi {{ name }}</p>"), "class attribute");
    }

    @Test
    void aValueDirectlyInATableIsInlinedPerRender() throws Exception {
        // the parser moves the value out of the table unless it is blank: only the proof can tell
        assertPerRender(hello("<table>{{ name }}<tr><td>x</td></tr></table><p>a</p>"), null);
        assertThat(PreInliner.prepare(TemplateFiles.of(hello("<table>{{ name }}<tr><td>x</td></tr></table>")), "hello/html.peb").source()).isPresent();
    }

    /** jsoup opens the tbody inside the loop's first row: the loop would repeat it. */
    @Test
    void aForRightAfterTheTableTagIsInlinedPerRender() throws Exception {
        assertPerRender(hello("<table>{% for r in rows %}<tr><td>{{ r }}</td></tr>{% endfor %}</table><p>a</p>"), "not whole HTML elements");
    }

    @Test
    void anIfWhoseBranchesOpenDifferentElementsIsInlinedPerRender() throws Exception {
        assertPerRender(hello("{% if flag %}<div class=\"x\">{% else %}<div>{% endif %}<p>{{ name }}</p></div>"), "not whole HTML elements");
    }

    @Test
    void rawOutputAndSiblingSelectorsAreInlinedPerRender() throws Exception {
        assertPerRender(hello("<p>{{ name | raw }}</p>"), "unescaped");
        Map<String, String> sibling = hello("<p>a</p><p>{{ name }}</p>");
        sibling.put("hello/html.peb", sibling.get("hello/html.peb").replace("td { padding: 2px; }", "p + p { padding: 2px; }"));
        assertPerRender(sibling, "siblings");
    }

    @Test
    void theProofRefusesATemplateThatRendersDifferently() throws Exception {
        Map<String, String> files = hello("<p>Hi {{ name }}</p>");
        TemplateCatalogue catalogue = TemplateCatalogue.of(files);
        assertThat(catalogue.prove("hello", catalogue.preInlined("hello").orElseThrow())).isNull();
        PebbleTemplate wrong = catalogue.compileInlined("<html><head></head><body><p>Hi {{ name }}</p></body></html>");
        assertThat(catalogue.prove("hello", wrong)).contains("differs from per-render inlining in en");
        PebbleTemplate escapesOnlyTheSample = catalogue.compileInlined(
                "<html><head></head><body><p style=\"color: red;\">Hi {% if name == \"An\" %}An{% else %}?{% endif %}</p></body></html>");
        assertThat(catalogue.prove("hello", escapesOnlyTheSample)).contains("for hostile data");
    }

    @Test
    void aFailureInThePreInlinedHtmlPartIsReportedAsBeforeNamingItsFileAndLine() throws Exception {
        Map<String, String> files = hello("<p>Hi {{ name }}</p>\n<p>{{ extra }}</p>");
        files.put("hello/sample.json", "{\"name\": \"An\", \"extra\": \"x\"}");
        TemplateCatalogue catalogue = TemplateCatalogue.of(files);
        assertThat(catalogue.preInlined("hello")).isPresent();
        assertThatThrownBy(() -> catalogue.render("hello", Locale.ENGLISH, Map.of("name", "An")))
                .isInstanceOfSatisfying(TemplateException.class, e -> {
                    assertThat(e.kind()).isEqualTo(TemplateException.Kind.MISSING_VARIABLE);
                    assertThat(e.getMessage()).contains("'extra'").contains("hello/html.peb:2");
                });
    }

    private static List<String> fields(Map<String, Object> data) {
        List<String> out = new ArrayList<>();
        walk("", data, out);
        return out;
    }

    private static void walk(String prefix, Object value, List<String> out) {
        if (value instanceof Map<?, ?> m) {
            m.forEach((k, v) -> walk(prefix + k + ".", v, out));
        } else if (value instanceof List<?> l) {
            for (int i = 0; i < l.size(); i++) {
                walk(prefix + i + ".", l.get(i), out);
            }
        } else if (value instanceof String) {
            out.add(prefix.substring(0, prefix.length() - 1));
        }
    }

    @SuppressWarnings("unchecked")
    private static Map<String, Object> replaced(Map<String, Object> data, String path, String value) {
        return (Map<String, Object>) replace(data, path.split("\\."), 0, value);
    }

    private static Object replace(Object node, String[] path, int at, String value) {
        if (at == path.length) {
            return value;
        }
        if (node instanceof Map<?, ?> m) {
            Map<Object, Object> copy = new LinkedHashMap<>(m);
            copy.put(path[at], replace(m.get(path[at]), path, at + 1, value));
            return copy;
        }
        List<Object> copy = new ArrayList<>((List<?>) node);
        int i = Integer.parseInt(path[at]);
        copy.set(i, replace(copy.get(i), path, at + 1, value));
        return copy;
    }
}
