package io.mailroom.templates;

import org.jsoup.nodes.Attribute;
import org.jsoup.nodes.Comment;
import org.jsoup.nodes.DataNode;
import org.jsoup.nodes.Document;
import org.jsoup.nodes.Element;
import org.jsoup.nodes.Node;
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
    private static final Pattern EXTENDS = Pattern.compile("\\{%\\s*extends\\s+(\"[^\"]*\"|'[^']*')\\s*%}");
    private static final Pattern BLOCK = Pattern.compile("block\\s+([A-Za-z_][A-Za-z0-9_]*)");
    private static final Pattern ENDBLOCK = Pattern.compile("endblock(\\s+[A-Za-z_][A-Za-z0-9_]*)?");
    private static final Pattern INCLUDE = Pattern.compile("include\\s+(\"[^\"]*\"|'[^']*')");
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

    private record Tag(int start, int end, char kind, String body) {
        String text(String source) {
            return source.substring(start, end);
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
            flat = flatten(files, rel, source);
        } catch (Refused e) {
            return Result.no(e.getMessage());
        }
        if (flat.indexOf('\r') >= 0 || flat.chars().anyMatch(c -> c >= PRINT_OPEN && c <= CONTROL_CLOSE)) {
            return Result.no("carriage returns or private-use characters in the markup");
        }
        List<Tag> tags;
        try {
            tags = tags(flat);
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

    // ---- flattening the layout into the template

    private static final class Refused extends Exception {
        Refused(String why) {
            super(why);
        }
    }

    /** Pebble's tags in order; string literals inside a tag may contain its closing delimiter. */
    static List<Tag> tags(String s) throws Refused {
        List<Tag> tags = new ArrayList<>();
        int i = 0;
        while (true) {
            int start = s.indexOf('{', i);
            if (start < 0 || start + 1 >= s.length()) {
                return tags;
            }
            char k = s.charAt(start + 1);
            if (k != '{' && k != '%' && k != '#') {
                i = start + 1;
                continue;
            }
            char closeFirst = k == '{' ? '}' : k;
            int j = start + 2;
            int end = -1;
            char quote = 0;
            while (j < s.length() - 1) {
                char c = s.charAt(j);
                if (quote != 0) {
                    if (c == '\\') {
                        j++;
                    } else if (c == quote) {
                        quote = 0;
                    }
                } else if (k != '#' && (c == '"' || c == '\'')) {
                    quote = c;
                } else if (c == closeFirst && s.charAt(j + 1) == '}') {
                    end = j + 2;
                    break;
                }
                j++;
            }
            if (end < 0) {
                throw new Refused("an unclosed tag");
            }
            String body = s.substring(start + 2, end - 2);
            if (k == '%' && body.strip().startsWith("verbatim")) {
                throw new Refused("verbatim");
            }
            tags.add(new Tag(start, end, k, body));
            i = end;
        }
    }

    static String flatten(TemplateFiles files, String rel, String source) throws Refused {
        Matcher ext = EXTENDS.matcher(source);
        int first = firstTag(source);
        if (first >= 0 && ext.find(first) && ext.start() == first && source.substring(0, first).isBlank()) {
            String parentName = resolve(unquote(ext.group(1)), rel);
            String parent = files.read(parentName).orElseThrow(() -> new Refused("no layout " + parentName));
            if (parent.indexOf('\r') >= 0) {
                throw new Refused("carriage returns in " + parentName);
            }
            Map<String, String> blocks = blocks(source, ext.end(), true);
            return expand(files, parentName, parent, blocks);
        }
        return expand(files, rel, source, Map.of());
    }

    private static int firstTag(String s) {
        int i = s.indexOf("{%");
        int p = s.indexOf("{{");
        int c = s.indexOf("{#");
        int min = -1;
        for (int x : new int[]{i, p, c}) {
            if (x >= 0 && (min < 0 || x < min)) {
                min = x;
            }
        }
        return min;
    }

    /** A child's blocks (only blocks, comments and whitespace outside them: Pebble renders nothing else). */
    private static Map<String, String> blocks(String s, int from, boolean child) throws Refused {
        Map<String, String> blocks = new HashMap<>();
        List<Tag> tags = tags(s);
        String name = null;
        int bodyStart = -1;
        int outside = from;
        for (Tag tag : tags) {
            if (tag.start() < from) {
                continue;
            }
            String body = tag.body().strip();
            Matcher b = BLOCK.matcher(body);
            if (tag.kind() == '%' && b.matches()) {
                if (name != null) {
                    throw new Refused("nested blocks");
                }
                if (child && !s.substring(outside, tag.start()).isBlank()) {
                    throw new Refused("text outside the blocks of a template that extends a layout");
                }
                name = b.group(1);
                bodyStart = skipNewline(s, tag.end());
            } else if (tag.kind() == '%' && ENDBLOCK.matcher(body).matches()) {
                if (name == null) {
                    throw new Refused("endblock without block");
                }
                blocks.put(name, s.substring(bodyStart, tag.start()));
                name = null;
                outside = tag.end();
            } else if (name == null && tag.kind() != '#') {
                throw new Refused("the tag '" + body + "' outside the blocks");
            } else if (name == null) {
                if (child && !s.substring(outside, tag.start()).isBlank()) {
                    throw new Refused("text outside the blocks of a template that extends a layout");
                }
                outside = tag.end();
            }
        }
        if (name != null) {
            throw new Refused("unclosed block " + name);
        }
        if (child && !s.substring(outside).isBlank()) {
            throw new Refused("text outside the blocks of a template that extends a layout");
        }
        return blocks;
    }

    /** Replaces blocks (by the child's or their own content) and tag-free includes; keeps every other tag. */
    private static String expand(TemplateFiles files, String rel, String s, Map<String, String> overrides) throws Refused {
        StringBuilder out = new StringBuilder();
        List<Tag> tags = tags(s);
        int at = 0;
        for (int t = 0; t < tags.size(); t++) {
            Tag tag = tags.get(t);
            String body = tag.body().strip();
            Matcher b = BLOCK.matcher(body);
            Matcher inc = INCLUDE.matcher(body);
            if (tag.kind() == '%' && (body.startsWith("extends") || ENDBLOCK.matcher(body).matches())) {
                throw new Refused("'" + body + "' in a layout");
            } else if (tag.kind() == '%' && b.matches()) {
                int end = t + 1;
                while (end < tags.size() && !(tags.get(end).kind() == '%' && ENDBLOCK.matcher(tags.get(end).body().strip()).matches())) {
                    if (tags.get(end).kind() == '%' && BLOCK.matcher(tags.get(end).body().strip()).matches()) {
                        throw new Refused("nested blocks");
                    }
                    end++;
                }
                if (end == tags.size()) {
                    throw new Refused("unclosed block " + b.group(1));
                }
                out.append(s, at, tag.start());
                String own = s.substring(skipNewline(s, tag.end()), tags.get(end).start());
                out.append(expand(files, rel, overrides.getOrDefault(b.group(1), own), Map.of()));
                at = skipNewline(s, tags.get(end).end());
                t = end;
            } else if (tag.kind() == '%' && inc.matches()) {
                String name = resolve(unquote(inc.group(1)), rel);
                String included = files.read(name).orElseThrow(() -> new Refused("no included file " + name));
                if (firstTag(included) >= 0 || included.indexOf('\r') >= 0) {
                    throw new Refused("the included " + name + " has template tags");
                }
                out.append(s, at, tag.start()).append(included);
                at = skipNewline(s, tag.end());
            } else if (tag.kind() == '%' && body.startsWith("include")) {
                throw new Refused("'" + body + "'");
            }
        }
        out.append(s, at, s.length());
        return out.toString();
    }

    private static int skipNewline(String s, int i) {
        return i < s.length() && s.charAt(i) == '\n' ? i + 1 : i;
    }

    private static String unquote(String q) {
        return q.substring(1, q.length() - 1);
    }

    private static String resolve(String name, String anchor) {
        if (name.startsWith("./")) {
            int slash = anchor.lastIndexOf('/');
            return (slash < 0 ? "" : anchor.substring(0, slash + 1)) + name.substring(2);
        }
        return name;
    }

    /**
     * What jsoup's parse and serialization turn a Pebble-escaped value into, without parsing: the
     * value's characters as jsoup writes them in text, in an attribute value, or in a title.
     */
    static final class JsoupEscaping {
        private JsoupEscaping() {
        }

        static String text(String s) {
            return escape(s, false, false);
        }

        static String attribute(String s) {
            return escape(s, true, true);
        }

        static String rcdata(String s) {
            return escape(s, false, true);
        }

        private static String escape(String s, boolean attribute, boolean nulAsReplacement) {
            StringBuilder out = null;
            for (int i = 0; i < s.length(); i++) {
                char c = s.charAt(i);
                String r;
                if (c == '&') {
                    r = "&amp;";
                } else if (c == '<') {
                    r = "&lt;";
                } else if (c == '>') {
                    r = "&gt;";
                } else if (c == '\u00a0') {
                    r = "&nbsp;";
                } else if (c == '"' && attribute) {
                    r = "&quot;";
                } else if (c == '\0') {
                    r = nulAsReplacement ? "\uFFFD" : "";
                } else if (c < ' ' && c != '\t' && c != '\n' && c != '\r') {
                    r = "&#x" + Integer.toHexString(c) + ";";
                } else if (Character.isHighSurrogate(c) && i + 1 < s.length() && Character.isLowSurrogate(s.charAt(i + 1))) {
                    if (out != null) {
                        out.append(c).append(s.charAt(i + 1));
                    }
                    i++;
                    continue;
                } else if (Character.isSurrogate(c)) {
                    r = "&#x" + Integer.toHexString(c) + ";";
                } else {
                    if (out != null) {
                        out.append(c);
                    }
                    continue;
                }
                if (out == null) {
                    out = new StringBuilder(s.length() + 16);
                    out.append(s, 0, i);
                }
                out.append(r);
            }
            return out == null ? s : out.toString();
        }
    }
}
