package io.mailroom.templates;

import org.jsoup.nodes.Attribute;
import org.jsoup.nodes.Comment;
import org.jsoup.nodes.DataNode;
import org.jsoup.nodes.Document;
import org.jsoup.nodes.Element;
import org.jsoup.nodes.TextNode;
import org.jsoup.select.NodeTraversor;

import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import io.mailroom.templates.PebbleTags.Refused;
import io.mailroom.templates.PebbleTags.Tag;

/**
 * Inlines the CSS of a template's HTML part into its Pebble source once, so that a render is only
 * Pebble's evaluation. The layout is flattened into the template (one level of {@code extends},
 * blocks, includes of tag-free files), every Pebble tag is swapped for a placeholder jsoup keeps in
 * place (a comment for {@code {% %}} and {@code {# #}}, marker text for {@code {{ }}}), the result
 * is parsed, inlined and serialized like a rendered email, and the tags are put back. Values then
 * go out escaped the way jsoup would have re-serialized them ({@link JsoupEscaping}), text and
 * attribute values each their own way.
 *
 * <p>Only a conservative subset is accepted (anything else returns a reason and the template is
 * inlined per render): no {@code raw}, macros, {@code parent()}, autoescape tags, markup in string
 * literals; no value in a {@code class}, {@code id}, {@code style} or boolean attribute, in a
 * style element, comment, or where the HTML parser treats text by what it is (tables, head, pre);
 * no sibling or attribute selectors; if/for bodies that are whole runs of sibling nodes. The
 * catalogue then proves the result on the template's sample data before using it.
 */
final class PreInliner {

    static final String TEXT = "mailroom_text";
    static final String ATTRIBUTE = "mailroom_attribute";
    static final String RCDATA = "mailroom_rcdata";

    private static final char PRINT_OPEN = '\uE000';
    private static final char PRINT_CLOSE = '\uE001';
    private static final char CONTROL_OPEN = '\uE002';
    private static final char CONTROL_CLOSE = '\uE003';
    private static final Pattern CONTROL = Pattern.compile("(if|elseif|else|endif|for|endfor|set)\\b.*", Pattern.DOTALL);
    private static final Pattern UNSAFE_WORD = Pattern.compile("\\b(raw|parent|block|escape|e|i18n|autoescape|macro|import|verbatim|embed|filter|cache|parallel|from)\\b");
    private static final Pattern UNSAFE_LITERAL = Pattern.compile("[^A-Za-z0-9_ .,:;!?/+*%()\\[\\]{}=~|-]");
    private static final Pattern OPEN_REFERENCE = Pattern.compile("(&[#A-Za-z0-9]*|<[/!?]?[A-Za-z0-9-]*)$");
    private static final Pattern RESTORE = Pattern.compile(
            PRINT_OPEN + " (\\d+) " + PRINT_CLOSE + "|<!--" + CONTROL_OPEN + " (\\d+) " + CONTROL_CLOSE + "-->"
                    + "|&lt;!--" + CONTROL_OPEN + " (\\d+) " + CONTROL_CLOSE + "--&gt;");
    /** Parents under which the tree builder treats text by its content (or drops a leading newline). */
    private static final Set<String> TEXT_SENSITIVE = Set.of("html", "head", "table", "tbody", "thead", "tfoot", "tr",
            "colgroup", "select", "optgroup", "option", "frameset", "template", "pre", "listing", "textarea",
            "script", "style", "noscript", "iframe", "noembed", "noframes", "xmp", "plaintext", "math", "svg");

    private PreInliner() {
    }

    /** The pre-inlined source, or why this template is inlined per render. */
    record Result(Optional<String> source, String reason) {
        static Result no(String reason) {
            return new Result(Optional.empty(), reason);
        }
    }

    static Result prepare(TemplateFiles files, String rel) {
        String source = files.read(rel).orElse(null);
        if (source == null) {
            return Result.no("no " + rel);
        }
        if (source.indexOf('\r') >= 0) {
            return Result.no("carriage returns in " + rel);
        }
        String flat;
        try {
            flat = LayoutFlattener.flatten(files, rel, source);
        } catch (Refused e) {
            return Result.no(e.getMessage());
        }
        if (flat.indexOf('\r') >= 0 || flat.chars().anyMatch(c -> c >= PRINT_OPEN && c <= CONTROL_CLOSE)) {
            return Result.no("carriage returns or private-use characters in the markup");
        }
        List<Tag> tags;
        try {
            tags = PebbleTags.tags(flat);
        } catch (Refused e) {
            return Result.no(e.getMessage());
        }
        StringBuilder protectedSource = new StringBuilder();
        int at = 0;
        for (int i = 0; i < tags.size(); i++) {
            Tag tag = tags.get(i);
            String before = flat.substring(at, tag.start());
            protectedSource.append(before);
            if (OPEN_REFERENCE.matcher(protectedSource).find()) {
                return Result.no("a tag right after '&' or '<' (" + tag.text(flat).strip() + ")");
            }
            String problem = unsupported(tag);
            if (problem != null) {
                return Result.no(problem);
            }
            if (tag.kind() == '{') {
                protectedSource.append(PRINT_OPEN).append(' ').append(i).append(' ').append(PRINT_CLOSE);
            } else {
                protectedSource.append("<!--").append(CONTROL_OPEN).append(' ').append(i).append(' ').append(CONTROL_CLOSE).append("-->");
            }
            at = tag.end();
        }
        protectedSource.append(flat, at, flat.length());

        Document doc = CssInliner.parse(protectedSource.toString());
        CssInliner.Sheet sheet = CssInliner.inline(doc);
        for (CssInliner.Rule rule : sheet.rules()) {
            if (rule.selector().matches(".*[+~\\[].*")) {
                return Result.no("selector '" + rule.selector() + "' depends on siblings or attribute values");
            }
        }
        Map<Integer, String> strategies = new HashMap<>();
        Map<Integer, Object> containers = new HashMap<>();
        String problem = scan(doc, strategies, containers);
        if (problem != null) {
            return Result.no(problem);
        }
        problem = nesting(tags, containers);
        if (problem != null) {
            return Result.no(problem);
        }

        String html = doc.outerHtml();
        StringBuilder out = new StringBuilder(html.length() + 256);
        Matcher m = RESTORE.matcher(html);
        int expected = 0;
        int last = 0;
        while (m.find()) {
            int index = Integer.parseInt(m.group(1) != null ? m.group(1) : m.group(2) != null ? m.group(2) : m.group(3));
            if (index != expected) {
                return Result.no("the HTML parser moved a template tag (" + tags.get(Math.min(index, tags.size() - 1)).text(flat).strip() + ")");
            }
            out.append(html, last, m.start());
            Tag tag = tags.get(index);
            String strategy = strategies.get(index);
            if (tag.kind() == '{' && !TEXT.equals(strategy)) {
                out.append("{% autoescape \"").append(strategy).append("\" %}").append(tag.text(flat)).append("{% endautoescape %}");
            } else {
                out.append(tag.text(flat));
            }
            last = m.end();
            expected++;
        }
        out.append(html, last, html.length());
        if (expected != tags.size() || hasMarker(out.toString())) {
            return Result.no("the HTML parser moved or dropped a template tag");
        }
        return new Result(Optional.of(out.toString()), null);
    }

    /** Where each placeholder ended up: its escaping, and the node holding it (for the nesting check). */
    private static String scan(Document doc, Map<Integer, String> strategies, Map<Integer, Object> containers) {
        String[] problem = new String[1];
        NodeTraversor.traverse((node, depth) -> {
            if (problem[0] != null) {
                return;
            }
            if (node instanceof TextNode t) {
                String text = t.getWholeText();
                Element parent = t.parent() instanceof Element e ? e : null;
                String parentName = parent == null ? "#document" : parent.normalName();
                boolean rcdata = "title".equals(parentName);
                for (int i : markers(text, PRINT_OPEN, PRINT_CLOSE)) {
                    if (!rcdata && (parent == null || TEXT_SENSITIVE.contains(parentName))) {
                        problem[0] = "a value directly inside <" + parentName + ">";
                        return;
                    }
                    strategies.put(i, rcdata ? RCDATA : TEXT);
                    containers.put(i, t.parent());
                }
                for (int i : markers(text, CONTROL_OPEN, CONTROL_CLOSE)) {
                    if (!rcdata) {
                        problem[0] = "a template tag inside <" + parentName + "> text";
                        return;
                    }
                    containers.put(i, t);
                }
            } else if (node instanceof Comment c) {
                String data = c.getData();
                List<Integer> controls = markers(data, CONTROL_OPEN, CONTROL_CLOSE);
                if (!markers(data, PRINT_OPEN, PRINT_CLOSE).isEmpty()
                        || !controls.isEmpty() && !data.equals(CONTROL_OPEN + " " + controls.get(0) + " " + CONTROL_CLOSE)) {
                    problem[0] = "a template tag inside an HTML comment";
                    return;
                }
                if (!controls.isEmpty()) {
                    containers.put(controls.get(0), c.parent());
                }
            } else if (node instanceof DataNode d) {
                if (hasMarker(d.getWholeData())) {
                    problem[0] = "a template tag inside a style or script element";
                }
            } else if (node instanceof Element e) {
                for (Attribute a : e.attributes()) {
                    if (hasMarker(a.getKey())) {
                        problem[0] = "a template tag in place of an attribute of <" + e.normalName() + ">";
                        return;
                    }
                    if (!hasMarker(a.getValue())) {
                        continue;
                    }
                    String key = a.getKey().toLowerCase(java.util.Locale.ROOT);
                    if (key.equals("class") || key.equals("id") || key.equals("style")
                            || new Attribute(a.getKey(), "").html().equals(a.getKey())) {
                        problem[0] = "a template tag in the " + key + " attribute of <" + e.normalName() + ">";
                        return;
                    }
                    Object container = e.normalName() + "@" + System.identityHashCode(e) + "." + key;
                    for (int i : markers(a.getValue(), PRINT_OPEN, PRINT_CLOSE)) {
                        strategies.put(i, ATTRIBUTE);
                        containers.put(i, container);
                    }
                    for (int i : markers(a.getValue(), CONTROL_OPEN, CONTROL_CLOSE)) {
                        containers.put(i, container);
                    }
                }
            } else if (hasMarker(node.outerHtml())) {
                problem[0] = "a template tag inside a " + node.nodeName();
            }
        }, doc);
        return problem[0];
    }

    /** Every if/for must open and close (and branch) under the same parent: its body is a run of whole nodes. */
    private static String nesting(List<Tag> tags, Map<Integer, Object> containers) {
        Deque<Integer> open = new ArrayDeque<>();
        for (int i = 0; i < tags.size(); i++) {
            Tag tag = tags.get(i);
            if (tag.kind() != '%') {
                continue;
            }
            String word = tag.body().strip().split("\\s+", 2)[0];
            switch (word) {
                case "if", "for" -> open.push(i);
                case "elseif", "else", "endif", "endfor" -> {
                    if (open.isEmpty() || containers.get(i) == null || !java.util.Objects.equals(containers.get(open.peek()), containers.get(i))) {
                        return "the body of '" + tags.get(open.isEmpty() ? i : open.peek()).body().strip() + "' is not whole HTML elements";
                    }
                    if (word.startsWith("end")) {
                        open.pop();
                    }
                }
                default -> {
                }
            }
        }
        return open.isEmpty() ? null : "an unclosed tag";
    }

    private static String unsupported(Tag tag) {
        String body = tag.body().strip();
        if (body.startsWith("-") || body.endsWith("-")) {
            return "whitespace control in '" + body + "'";
        }
        if (tag.kind() == '#') {
            return null;
        }
        if (tag.kind() == '%' && !CONTROL.matcher(body).matches()) {
            return "the tag '" + body + "'";
        }
        String code = body.replaceAll("\"(?:[^\"\\\\]|\\\\.)*\"|'(?:[^'\\\\]|\\\\.)*'", "\"\"");
        if (UNSAFE_WORD.matcher(code).find()) {
            return "'" + body + "' may print unescaped markup";
        }
        Matcher literal = Pattern.compile("\"((?:[^\"\\\\]|\\\\.)*)\"|'((?:[^'\\\\]|\\\\.)*)'").matcher(body);
        while (literal.find()) {
            String value = literal.group(1) != null ? literal.group(1) : literal.group(2);
            if (UNSAFE_LITERAL.matcher(value).find()) {
                return "the string literal in '" + body + "' may be printed as markup";
            }
        }
        return null;
    }

    private static boolean hasMarker(String s) {
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            if (c >= PRINT_OPEN && c <= CONTROL_CLOSE) {
                return true;
            }
        }
        return false;
    }

    private static List<Integer> markers(String s, char open, char close) {
        List<Integer> found = new ArrayList<>();
        int from = 0;
        while (true) {
            int start = s.indexOf(open, from);
            if (start < 0) {
                return found;
            }
            int end = s.indexOf(close, start);
            if (end < 0) {
                return found;
            }
            found.add(Integer.parseInt(s.substring(start + 1, end).strip()));
            from = end + 1;
        }
    }
}
