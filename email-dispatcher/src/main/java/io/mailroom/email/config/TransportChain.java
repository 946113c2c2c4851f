package io.mailroom.email.config;

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * A topic's (or the service's default) transports in the order they are tried: {@code smtp},
 * {@code http,smtp}, {@code capture}. The next one is tried only when the one before proved that
 * it accepted nothing ({@code FallbackTransport}). Checked when read, naming what is wrong: known
 * names only, none twice, and {@code capture} alone, because a chain that may end in capture would
 * quietly keep real mail from its recipients, and one that starts with it never reaches the next.
 */
public final class TransportChain {

    /** The staging transport: stores the message for support and sends nothing. */
    public static final String CAPTURE = "capture";
    /** The transports a topic can name; which of them a service has is the service's business. */
    public static final List<String> NAMES = List.of("smtp", "http", CAPTURE);

    private TransportChain() {
    }

    /**
     * The names of {@code value} ({@code "smtp,http"}, blanks around names allowed) in order.
     *
     * @throws IllegalArgumentException saying what is wrong
     */
    public static List<String> parse(String value) {
        if (value == null || value.isBlank()) {
            throw new IllegalArgumentException("needs at least one of " + String.join(", ", NAMES));
        }
        List<String> names = new ArrayList<>();
        for (String part : value.split(",", -1)) {
            String name = part.strip().toLowerCase(Locale.ROOT);
            if (!NAMES.contains(name)) {
                throw new IllegalArgumentException("must be one of " + String.join(", ", NAMES)
                        + " or an ordered list of them such as smtp,http; got '" + value + "'");
            }
            if (names.contains(name)) {
                throw new IllegalArgumentException("names " + name + " twice in '" + value + "'");
            }
            names.add(name);
        }
        if (names.size() > 1 && names.contains(CAPTURE)) {
            throw new IllegalArgumentException("capture cannot be part of a fallback list ('" + value
                    + "'): it stands alone, so staging never sends and production never captures");
        }
        return List.copyOf(names);
    }

    /** The list as it is configured and logged: names joined by commas, no blanks. */
    public static String canonical(String value) {
        return String.join(",", parse(value));
    }
}
