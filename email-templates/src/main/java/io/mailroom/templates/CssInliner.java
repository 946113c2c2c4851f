package io.mailroom.templates;

import org.jsoup.Jsoup;
import org.jsoup.nodes.Document;
import org.jsoup.nodes.Element;
import org.jsoup.select.Evaluator;
import org.jsoup.select.QueryParser;
import org.jsoup.select.Selector;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.IdentityHashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Moves the rules of a document's {@code <style>} elements into {@code style} attributes, because
 * many mail clients (Gmail's web client on non-Google accounts, Outlook's Word renderer) drop or
 * ignore style sheets. jsoup parses the document and matches the selectors; rules are applied in
 * order of CSS specificity, then source order, and an element's own {@code style} attribute wins
 * over both. What cannot be inlined, {@code @media} queries and pseudo-classes such as
 * {@code :hover}, stays in one {@code <style>} element in the head for the clients that honour it.
 */
final class CssInliner {

    private static final Pattern COMMENT = Pattern.compile("/\\*.*?\\*/", Pattern.DOTALL);
    private static final Pattern PSEUDO = Pattern.compile(":(?!not\\()[a-z-]+|::");
    private static final Pattern ID = Pattern.compile("#[\\w-]+");
    private static final Pattern CLASS_OR_ATTRIBUTE = Pattern.compile("\\.[\\w-]+|\\[[^]]*]");
    private static final Pattern ID_CLASS_OR_ATTRIBUTE = Pattern.compile("#[\\w-]+|\\.[\\w-]+|\\[[^]]*]");
    private static final Pattern ELEMENT = Pattern.compile("(?<![\\w-])[a-zA-Z][\\w-]*");
    private static final int MAX_CACHED_SHEETS = 256;

    /** Style sheets seen before, parsed: every email of a template carries the same one. */
    private static final Map<String, Sheet> SHEETS = new ConcurrentHashMap<>();

    private CssInliner() {
    }

    static String inline(String html) {
        Document doc = parse(html);
        inline(doc);
        return doc.outerHtml();
    }

    static Document parse(String html) {
        Document doc = Jsoup.parse(html);
        doc.outputSettings().prettyPrint(false).charset("UTF-8");
        return doc;
    }

    /** Inlines in place; returns the style sheet that was applied. */
    static Sheet inline(Document doc) {
        StringBuilder css = new StringBuilder();
        for (Element style : doc.select("style")) {
            css.append(style.data()).append('\n');
            style.remove();
        }
        String text = css.toString();
        Sheet sheet = SHEETS.get(text);
        if (sheet == null) {
            sheet = Sheet.parse(text);
            if (SHEETS.size() < MAX_CACHED_SHEETS) {
                SHEETS.put(text, sheet);
            }
        }
        Map<Element, Map<String, String>> computed = new IdentityHashMap<>();
        for (Rule rule : sheet.rules()) {
            for (Element e : doc.select(rule.evaluator())) {
                declarations(rule.declarations(), computed.computeIfAbsent(e, k -> new LinkedHashMap<>()));
            }
        }
        String kept = sheet.kept();
        computed.forEach((element, properties) -> {
            declarations(element.attr("style"), properties); // the element's own style wins
            StringBuilder style = new StringBuilder();
            properties.forEach((name, value) -> style.append(name).append(": ").append(value).append("; "));
            element.attr("style", style.toString().trim());
        });
        if (!kept.isEmpty()) {
            doc.head().appendElement("style").attr("type", "text/css").appendChild(new org.jsoup.nodes.DataNode(kept.toString()));
        }
        return sheet;
    }

    record Rule(String selector, Evaluator evaluator, String declarations, int specificity, int order) {
    }

    /** A parsed style sheet: the rules to inline, in the order they apply, and the CSS kept as it is. */
    record Sheet(List<Rule> rules, String kept) {
        static Sheet parse(String css) {
            StringBuilder kept = new StringBuilder();
            List<Rule> rules = CssInliner.parse(COMMENT.matcher(css).replaceAll(""), kept);
            rules.sort(Comparator.comparingInt(Rule::specificity).thenComparingInt(Rule::order));
            return new Sheet(List.copyOf(rules), kept.toString());
        }
    }

    /** Splits a style sheet into rules; at-rules and pseudo-class rules go to {@code kept} as they are. */
    private static List<Rule> parse(String css, StringBuilder kept) {
        List<Rule> rules = new ArrayList<>();
        int i = 0;
        int order = 0;
        while (i < css.length()) {
            int open = css.indexOf('{', i);
            if (open < 0) {
                break;
            }
            String prelude = css.substring(i, open).trim();
            if (prelude.startsWith("@")) {
                int end = matchingBrace(css, open);
                kept.append(css, i, end + 1).append('\n');
                i = end + 1;
                continue;
            }
            int close = css.indexOf('}', open);
            if (close < 0) {
                break;
            }
            String body = css.substring(open + 1, close).trim();
            for (String selector : prelude.split(",")) {
                String s = selector.trim();
                if (s.isEmpty()) {
                    continue;
                }
                Evaluator evaluator = PSEUDO.matcher(s).find() ? null : evaluator(s);
                if (evaluator == null) {
                    kept.append(s).append('{').append(body).append("}\n");
                } else {
                    rules.add(new Rule(s, evaluator, body, specificity(s), order++));
                }
            }
            i = close + 1;
        }
        return rules;
    }

    /** jsoup's compiled selector, or null for one it cannot parse (kept in the style element). */
    private static Evaluator evaluator(String selector) {
        try {
            return QueryParser.parse(selector);
        } catch (Selector.SelectorParseException e) {
            return null;
        }
    }

    private static int matchingBrace(String css, int open) {
        int depth = 0;
        for (int i = open; i < css.length(); i++) {
            char c = css.charAt(i);
            if (c == '{') {
                depth++;
            } else if (c == '}' && --depth == 0) {
                return i;
            }
        }
        return css.length() - 1;
    }

    /** (ids, classes and attributes, element names) packed into one comparable number. */
    static int specificity(String selector) {
        int ids = count(selector, ID);
        int classes = count(selector, CLASS_OR_ATTRIBUTE);
        int elements = count(ID_CLASS_OR_ATTRIBUTE.matcher(selector).replaceAll(" "), ELEMENT);
        return ids * 10_000 + classes * 100 + elements;
    }

    private static int count(String s, Pattern pattern) {
        Matcher m = pattern.matcher(s);
        int n = 0;
        while (m.find()) {
            n++;
        }
        return n;
    }

    private static void declarations(String block, Map<String, String> into) {
        for (String declaration : block.split(";")) {
            int colon = declaration.indexOf(':');
            if (colon > 0) {
                String name = declaration.substring(0, colon).trim().toLowerCase(java.util.Locale.ROOT);
                String value = declaration.substring(colon + 1).trim();
                if (!name.isEmpty() && !value.isEmpty()) {
                    into.remove(name); // re-insert, so the order shows which declaration won
                    into.put(name, value);
                }
            }
        }
    }
}
