package io.mailroom.templates;

import java.util.ArrayList;
import java.util.List;

/**
 * Finds Pebble's tags ({@code {{ }}}, {@code {% %}}, {@code {# #}}) in a source, in order, without
 * evaluating it; a string literal inside a tag may contain the tag's closing delimiter. Anything it
 * cannot read with certainty is {@link Refused}, so the template is inlined per render instead.
 */
final class PebbleTags {

    private PebbleTags() {
    }

    /** One tag: where it starts and ends in the source, its kind ({@code '{'}, {@code '%'}, {@code '#'}) and body. */
    record Tag(int start, int end, char kind, String body) {
        String text(String source) {
            return source.substring(start, end);
        }
    }

    /** Why a source cannot be pre-inlined; its message is the reason logged. */
    static final class Refused extends Exception {
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
}
