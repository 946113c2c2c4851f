package io.mailroom.bench;

import com.github.mustachejava.DefaultMustacheFactory;
import com.github.mustachejava.Mustache;
import freemarker.template.Configuration;
import freemarker.template.Template;
import gg.jte.CodeResolver;
import gg.jte.ContentType;
import gg.jte.TemplateEngine;
import gg.jte.output.StringOutput;
import io.mailroom.templates.TemplateCatalogue;
import io.pebbletemplates.pebble.PebbleEngine;
import io.pebbletemplates.pebble.loader.FileLoader;
import io.pebbletemplates.pebble.template.PebbleTemplate;
import org.thymeleaf.context.Context;
import org.thymeleaf.templatemode.TemplateMode;
import org.thymeleaf.templateresolver.FileTemplateResolver;

import java.io.IOException;
import java.io.StringWriter;
import java.io.UncheckedIOException;
import java.io.Writer;
import java.math.BigDecimal;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.function.Supplier;

/**
 * The engine comparison behind the choice of Pebble for email templates: the same order email
 * (a shared layout, a loop over the lines, a hostile customer name that must come out escaped)
 * loaded from a directory at run time and rendered by Pebble, FreeMarker ({@code .ftlh}),
 * Mustache.java, Thymeleaf and jte, each with HTML escaping on. Prints microseconds per render
 * (median of rounds) and checks every output escaped the name. Then the cost of Mailroom's own
 * full render of the built-in order confirmation (Pebble, three parts, messages, CSS inlined by
 * jsoup), which is what a send pays.
 *
 * <pre>java -cp tools/benchmarks/target/classes:$(cat tools/benchmarks/target/classpath.txt) io.mailroom.bench.TemplateEngines [renders per round]</pre>
 */
public final class TemplateEngines {

    static final String HOSTILE = "Nguyễn Thị <Ánh> & \"Co\"";

    public static void main(String[] args) throws Exception {
        int renders = args.length > 0 ? Integer.parseInt(args[0]) : 20_000;
        int rounds = 5;
        Path dir = Files.createTempDirectory("mailroom-engines");
        write(dir);
        Map<String, Object> data = data();

        Map<String, Supplier<String>> engines = new LinkedHashMap<>();
        engines.put("Pebble 4.1", pebble(dir, data));
        engines.put("FreeMarker 2.3 (.ftlh)", freemarker(dir, data));
        engines.put("Mustache.java 0.9", mustache(dir, data));
        engines.put("Thymeleaf 3.1", thymeleaf(dir, data));
        engines.put("jte 3.2 (compiled at run time)", jte(dir));

        System.out.printf("Template engines: one order email (layout + 5 lines), loaded from a directory, HTML escaping on;%n"
                + "%,d renders per round, median of %d rounds, JDK %s, %d cores, load average %.2f%n%n",
                renders, rounds, Runtime.version(), Runtime.getRuntime().availableProcessors(), LoadAverage.oneMinute());
        System.out.printf("| engine | µs per render | output chars | name escaped |%n|---|---:|---:|---|%n");
        for (Map.Entry<String, Supplier<String>> e : engines.entrySet()) {
            String out = e.getValue().get();
            boolean escaped = out.contains("&lt;Ánh&gt;") && !out.contains("<Ánh>");
            double micros = measure(e.getValue(), renders, rounds);
            System.out.printf("| %s | %.1f | %,d | %s |%n", e.getKey(), micros, out.length(), escaped ? "yes" : "NO");
        }

        java.nio.file.Path shop = io.mailroom.orders.ShopTemplates.temporaryCopy(); // the example shop's templates
        TemplateCatalogue catalogue = TemplateCatalogue.load(shop);
        String sample = java.nio.file.Files.readString(shop.resolve("order_confirmation/sample.json"));
        Map<String, Object> sampleData = TemplateCatalogue.parseData("order_confirmation", sample);
        Locale vi = Locale.forLanguageTag("vi");
        Supplier<String> full = () -> {
            try {
                return catalogue.render("order_confirmation", vi, sampleData).html();
            } catch (Exception ex) {
                throw new IllegalStateException(ex);
            }
        };
        System.out.printf("%nMailroom's full render of order_confirmation (vi: subject + text + html, messages, CSS inlined): %.1f µs%n",
                measure(full, Math.max(1, renders / 10), rounds));
    }

    private static double measure(Supplier<String> render, int renders, int rounds) {
        long sink = 0;
        for (int i = 0; i < renders; i++) { // warm-up
            sink += render.get().length();
        }
        double[] perRender = new double[rounds];
        for (int r = 0; r < rounds; r++) {
            long start = System.nanoTime();
            for (int i = 0; i < renders; i++) {
                sink += render.get().length();
            }
            perRender[r] = (System.nanoTime() - start) / 1_000.0 / renders;
        }
        if (sink == 42) {
            System.out.print(""); // keeps the renders observable
        }
        Arrays.sort(perRender);
        return perRender[rounds / 2];
    }

    static Map<String, Object> data() {
        List<Map<String, Object>> lines = new ArrayList<>();
        for (int i = 1; i <= 5; i++) {
            lines.add(Map.of("sku", "SKU-" + i, "name", "Bánh mì <số " + i + "> & pa-tê", "quantity", i,
                    "amount", new BigDecimal("45000").multiply(BigDecimal.valueOf(i))));
        }
        return Map.of("title", "Đơn hàng #102", "customer", Map.of("name", HOSTILE),
                "order", Map.of("id", "102", "total", new BigDecimal("675000"), "lines", lines));
    }

    /** jte takes typed parameters, not maps: the same data as records. */
    public record Line(String sku, String name, int quantity, BigDecimal amount) {
    }

    public record Order(String title, String customerName, String id, BigDecimal total, List<Line> lines) {
    }

    static Order order() {
        List<Line> lines = new ArrayList<>();
        for (int i = 1; i <= 5; i++) {
            lines.add(new Line("SKU-" + i, "Bánh mì <số " + i + "> & pa-tê", i, new BigDecimal("45000").multiply(BigDecimal.valueOf(i))));
        }
        return new Order("Đơn hàng #102", HOSTILE, "102", new BigDecimal("675000"), lines);
    }

    private static final String TABLE_ROW = "<tr><td>%s</td><td>%s</td><td>%s</td><td>%s</td></tr>";

    private static void write(Path dir) throws IOException {
        String headOpen = "<!DOCTYPE html><html lang=\"vi\"><head><meta charset=\"utf-8\"><title>";
        String bodyOpen = "</title></head><body><div class=\"wrap\">";
        String bodyClose = "<p class=\"footer\">Mailroom</p></div></body></html>";
        // Pebble: inheritance
        Files.writeString(dir.resolve("layout.peb"), headOpen + "{{ title }}" + bodyOpen + "{% block content %}{% endblock %}" + bodyClose);
        Files.writeString(dir.resolve("page.peb"), "{% extends \"layout.peb\" %}{% block content %}<h1>{{ title }}</h1>"
                + "<p>Xin chào {{ customer.name }},</p><table>{% for l in order.lines %}"
                + TABLE_ROW.formatted("{{ l.sku }}", "{{ l.name }}", "{{ l.quantity }}", "{{ l.amount }}")
                + "{% endfor %}</table><p>Tổng: {{ order.total }}</p>{% endblock %}");
        // FreeMarker: a layout macro, auto-escaping from the .ftlh extension
        Files.writeString(dir.resolve("layout.ftlh"), "<#macro page title>" + headOpen + "${title}" + bodyOpen + "<#nested>"
                + bodyClose + "</#macro>");
        Files.writeString(dir.resolve("page.ftlh"), "<#import \"layout.ftlh\" as l><@l.page title=title><h1>${title}</h1>"
                + "<p>Xin chào ${customer.name},</p><table><#list order.lines as l>"
                + TABLE_ROW.formatted("${l.sku}", "${l.name}", "${l.quantity?c}", "${l.amount?c}")
                + "</#list></table><p>Tổng: ${order.total?c}</p></@l.page>");
        // Mustache.java: template inheritance ({{<parent}} with {{$block}})
        Files.writeString(dir.resolve("layout.mustache"), headOpen + "{{title}}" + bodyOpen + "{{$content}}{{/content}}" + bodyClose);
        Files.writeString(dir.resolve("page.mustache"), "{{<layout}}{{$content}}<h1>{{title}}</h1><p>Xin chào {{customer.name}},</p>"
                + "<table>{{#order.lines}}" + TABLE_ROW.formatted("{{sku}}", "{{name}}", "{{quantity}}", "{{amount}}")
                + "{{/order.lines}}</table><p>Tổng: {{order.total}}</p>{{/content}}{{/layout}}");
        // Thymeleaf: a layout fragment taking the content as a parameter
        Files.writeString(dir.resolve("layout.html"), "<!DOCTYPE html><html lang=\"vi\" th:fragment=\"page(title, content)\"><head>"
                + "<meta charset=\"utf-8\"><title th:text=\"${title}\">t</title></head><body><div class=\"wrap\">"
                + "<th:block th:replace=\"${content}\"/><p class=\"footer\">Mailroom</p></div></body></html>");
        Files.writeString(dir.resolve("page.html"), "<html th:replace=\"~{layout :: page(${title}, ~{::main})}\"><main>"
                + "<h1 th:text=\"${title}\">t</h1><p>Xin chào <span th:text=\"${customer.name}\">n</span>,</p><table>"
                + "<tr th:each=\"l : ${order.lines}\"><td th:text=\"${l.sku}\"></td><td th:text=\"${l.name}\"></td>"
                + "<td th:text=\"${l.quantity}\"></td><td th:text=\"${l.amount}\"></td></tr></table>"
                + "<p>Tổng: <span th:text=\"${order.total}\">0</span></p></main></html>");
        // jte: a layout taking gg.jte.Content
        Files.writeString(dir.resolve("layout.jte"), "@param String title\n@param gg.jte.Content content\n" + headOpen + "${title}"
                + bodyOpen + "${content}" + bodyClose);
        Files.writeString(dir.resolve("page.jte"), "@import io.mailroom.bench.TemplateEngines.Order\n@param Order o\n"
                + "@template.layout(title = o.title(), content = @`<h1>${o.title()}</h1><p>Xin chào ${o.customerName()},</p><table>"
                + "@for(var l : o.lines())" + TABLE_ROW.formatted("${l.sku()}", "${l.name()}", "${l.quantity()}", "${l.amount().toPlainString()}")
                + "@endfor</table><p>Tổng: ${o.total().toPlainString()}</p>`)");
    }

    private static Supplier<String> pebble(Path dir, Map<String, Object> data) {
        FileLoader loader = new FileLoader(dir.toString());
        PebbleTemplate t = new PebbleEngine.Builder().loader(loader).strictVariables(true).build().getTemplate("page.peb");
        return () -> {
            StringWriter w = new StringWriter(4096);
            try {
                t.evaluate(w, data);
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
            return w.toString();
        };
    }

    private static Supplier<String> freemarker(Path dir, Map<String, Object> data) throws IOException {
        Configuration cfg = new Configuration(Configuration.VERSION_2_3_34);
        cfg.setDirectoryForTemplateLoading(dir.toFile());
        cfg.setDefaultEncoding("UTF-8");
        cfg.setRecognizeStandardFileExtensions(true); // .ftlh: HTML output format, auto-escaping
        Template t = cfg.getTemplate("page.ftlh");
        return () -> {
            StringWriter w = new StringWriter(4096);
            try {
                t.process(data, w);
            } catch (Exception e) {
                throw new IllegalStateException(e);
            }
            return w.toString();
        };
    }

    private static Supplier<String> mustache(Path dir, Map<String, Object> data) {
        Mustache m = new DefaultMustacheFactory(dir.toFile()).compile("page.mustache");
        return () -> {
            Writer w = new StringWriter(4096);
            m.execute(w, data);
            return w.toString();
        };
    }

    private static Supplier<String> thymeleaf(Path dir, Map<String, Object> data) {
        FileTemplateResolver resolver = new FileTemplateResolver();
        resolver.setPrefix(dir + "/");
        resolver.setSuffix(".html");
        resolver.setTemplateMode(TemplateMode.HTML);
        resolver.setCharacterEncoding("UTF-8");
        resolver.setCacheable(true);
        org.thymeleaf.TemplateEngine engine = new org.thymeleaf.TemplateEngine();
        engine.setTemplateResolver(resolver);
        Context context = new Context(Locale.forLanguageTag("vi"), data);
        return () -> engine.process("page", context);
    }

    private static Supplier<String> jte(Path dir) throws IOException {
        CodeResolver resolver = new gg.jte.resolve.DirectoryCodeResolver(dir);
        Path classes = Files.createTempDirectory("mailroom-jte");
        TemplateEngine engine = TemplateEngine.create(resolver, classes, ContentType.Html);
        engine.setClassPath(List.of(System.getProperty("java.class.path").split(java.io.File.pathSeparator)));
        Order o = order();
        return () -> {
            StringOutput out = new StringOutput(4096);
            engine.render("page.jte", o, out);
            return out.toString();
        };
    }
}
