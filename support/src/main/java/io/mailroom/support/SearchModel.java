package io.mailroom.support;

import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Function;

/** The model of the console's search page ({@code search.peb}). */
final class SearchModel {

    private SearchModel() {
    }

    /** The inputs shown back in the form, as typed. */
    static Map<String, String> input(Function<String, String> get) {
        Map<String, String> in = new HashMap<>();
        for (String name : EmailSearch.PARAMETERS) {
            String v = get.apply(name);
            in.put(name, v == null ? "" : v.strip());
        }
        return in;
    }

    static Map<String, Object> of(Map<String, String> input, EmailSearch search, SearchPage page, List<String> topics,
                                  List<String> templates, String next, String back) {
        Map<String, Object> m = new HashMap<>();
        m.put("input", input);
        m.put("statuses", List.of(EmailStatus.FAILED, EmailStatus.REVIEW, EmailStatus.PENDING, EmailStatus.SCHEDULED, EmailStatus.SENDING,
                        EmailStatus.SENT, EmailStatus.CANCELLED, EmailStatus.CLOSED).stream()
                .map(s -> new ConsolePages.Option(s.code(), s.words(), s == search.status())).toList());
        m.put("deliveries", EmailSearch.DELIVERY_STATES.stream().sorted()
                .map(d -> new ConsolePages.Option(d, d.substring(0, 1).toUpperCase(java.util.Locale.ROOT) + d.substring(1),
                        d.equals(search.delivery()))).toList());
        m.put("topics", topics);
        m.put("templates", templates);
        m.put("cards", page.emails().stream().map(e -> ConsolePages.card(e, back)).toList());
        m.put("count", page.emails().size());
        m.put("next", next);
        return m;
    }
}
