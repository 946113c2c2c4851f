package io.mailroom.support;

import io.pebbletemplates.pebble.error.PebbleException;
import io.pebbletemplates.pebble.extension.AbstractExtension;
import io.pebbletemplates.pebble.extension.Filter;
import io.pebbletemplates.pebble.template.EvaluationContext;
import io.pebbletemplates.pebble.template.PebbleTemplate;

import java.time.Instant;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * The console templates' own filters. Both return plain strings, so what they give is still
 * HTML-escaped where it is printed:
 * <ul>
 *   <li>{@code value | urlpart}: percent-encoded for a path segment or query-string value
 *       ({@link ConsolePages#url});</li>
 *   <li>{@code instant | utc}: {@code 2026-01-31 09:05:00 UTC}, the text a {@code <time>} shows
 *       until {@code app.js} turns it into the viewer's zone.</li>
 * </ul>
 */
final class ConsoleExtension extends AbstractExtension {

    static final DateTimeFormatter UTC_TEXT = DateTimeFormatter.ofPattern("yyyy-MM-dd HH:mm:ss 'UTC'", Locale.ROOT)
            .withZone(ZoneOffset.UTC);

    @Override
    public Map<String, Filter> getFilters() {
        return Map.of("urlpart", new UrlPart(), "utc", new Utc());
    }

    private static final class UrlPart implements Filter {
        @Override
        public List<String> getArgumentNames() {
            return List.of();
        }

        @Override
        public Object apply(Object input, Map<String, Object> args, PebbleTemplate self, EvaluationContext context, int line) {
            if (input == null) {
                throw new PebbleException(null, "urlpart got null: a link needs a value", line, self.getName());
            }
            return ConsolePages.url(input.toString());
        }
    }

    private static final class Utc implements Filter {
        @Override
        public List<String> getArgumentNames() {
            return List.of();
        }

        @Override
        public Object apply(Object input, Map<String, Object> args, PebbleTemplate self, EvaluationContext context, int line) {
            if (!(input instanceof Instant t)) {
                throw new PebbleException(null, "utc needs an Instant, not " + (input == null ? "null" : input.getClass().getSimpleName()),
                        line, self.getName());
            }
            return UTC_TEXT.format(t);
        }
    }
}
