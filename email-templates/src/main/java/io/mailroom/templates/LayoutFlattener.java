package io.mailroom.templates;

import io.mailroom.templates.PebbleTags.Refused;
import io.mailroom.templates.PebbleTags.Tag;

import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import static io.mailroom.templates.PebbleTags.tags;

/**
 * Flattens a template's HTML part into one source for {@link PreInliner}: one level of
 * {@code extends}, its blocks replaced by the child's (or kept as the layout's own), includes of
 * tag-free files pasted in; every other tag is kept where it was. Anything beyond that subset is
 * {@link Refused}.
 */
final class LayoutFlattener {

    private static final Pattern EXTENDS = Pattern.compile("\\{%\\s*extends\\s+(\"[^\"]*\"|'[^']*')\\s*%}");
    private static final Pattern BLOCK = Pattern.compile("block\\s+([A-Za-z_][A-Za-z0-9_]*)");
    private static final Pattern ENDBLOCK = Pattern.compile("endblock(\\s+[A-Za-z_][A-Za-z0-9_]*)?");
    private static final Pattern INCLUDE = Pattern.compile("include\\s+(\"[^\"]*\"|'[^']*')");

    private LayoutFlattener() {
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
}
