package io.mailroom.email.config;

import io.mailroom.delivery.suppression.SuppressionPolicy;
import io.mailroom.outbox.InvalidSettingException;

import io.mailroom.email.EmailAddress;
import io.mailroom.email.InvalidEmailException;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.regex.Pattern;

/**
 * Which email each outbox topic is: its template and, optionally, its own sender and transport.
 * Adding a kind of email means a template folder under {@code MAILROOM_TEMPLATES_DIR} and, when it
 * needs more than the defaults, one line here; no Java:
 *
 * <pre>
 * # topic                = template          [from="Display Name &lt;address&gt;"] [transport=smtp|http|capture|smtp,http]
 * #                                           [suppression=strict|allow-complained]
 * shop.shipped           = order_shipped
 * email.password_reset   = password_reset     from="Security &lt;security@shop.example&gt;" transport=http suppression=allow-complained
 * </pre>
 *
 * {@code suppression=allow-complained} lets a topic's emails past suppressions caused by complaints
 * (mail the recipient asked for right now, like a password reset); nothing gets past a hard bounce.
 * The default is {@code strict}. {@code transport} may be an ordered list ({@code transport=smtp,http}):
 * see {@link TransportChain}.
 *
 * Lines come from the file {@code MAILROOM_TOPICS_FILE} and from {@code MAILROOM_TOPICS} (the same
 * lines, separated by newlines or ';'); a topic named twice is refused. Every mistake is refused at
 * start with the setting, the line and what was wrong.
 *
 * <p>Every template of the catalogue is served on topic {@code email.<template>} ({@link #routesFor}),
 * the topic the email API gives an email by default, with the service's sender and transport: a new
 * template folder is a new kind of email with no line at all. A configured line adds a topic or
 * changes a default one (another template, sender or transport); it never takes the others away, so
 * adding a line cannot strand the messages of a kind it does not name.
 *
 * @param templatesDir {@code MAILROOM_TEMPLATES_DIR}: laid over the built-in templates; null for built-in only
 */
public record EmailTopics(Path templatesDir, Map<String, Route> routes) {

    /** The topic prefix of the default routes, the same as the email API's default topic. */
    public static final String DEFAULT_TOPIC_PREFIX = "email.";

    private static final Pattern TOPIC = Pattern.compile("[a-z0-9][a-z0-9_.-]{0,127}");
    private static final Pattern TEMPLATE = Pattern.compile("[a-z0-9][a-z0-9_.-]{0,63}");

    /** The transports a topic can name; which of them a service has is the service's business. */
    public static final List<String> TRANSPORTS = TransportChain.NAMES;

    /**
     * One topic's email: its template, its From when it is not the service's default, and the
     * transport it goes through ({@code smtp} or {@code http}) when it is not the service's default.
     */
    public record Route(String topic, String template, EmailAddress from, String transport, SuppressionPolicy suppression) {
        public Route {
            if (transport != null) {
                try {
                    transport = TransportChain.canonical(transport);
                } catch (IllegalArgumentException e) {
                    throw new IllegalArgumentException("transport " + e.getMessage(), e);
                }
            }
            if (suppression == null) {
                suppression = SuppressionPolicy.STRICT;
            }
        }

        public Route(String topic, String template, EmailAddress from, String transport) {
            this(topic, template, from, transport, SuppressionPolicy.STRICT);
        }

        /** A route with the service's default transport. */
        public Route(String topic, String template, EmailAddress from) {
            this(topic, template, from, null);
        }

        /** This route's transport, or {@code defaultTransport} when it names none. */
        public String transportOr(String defaultTransport) {
            return transport == null ? defaultTransport : transport;
        }

        /** The transports this route tries in order ({@link TransportChain}), {@code defaultTransport} when it names none. */
        public List<String> transportsOr(String defaultTransport) {
            return TransportChain.parse(transportOr(defaultTransport));
        }
    }

    public EmailTopics {
        routes = Collections.unmodifiableMap(new LinkedHashMap<>(routes));
    }

    /**
     * The routes to serve: each of {@code templates} on {@code email.<template>} with the default
     * sender and transport, then the configured lines, which add topics or replace a default one.
     */
    public Map<String, Route> routesFor(Collection<String> templates) {
        Map<String, Route> all = new LinkedHashMap<>();
        for (String template : templates) {
            if (TEMPLATE.matcher(template).matches()) {
                all.put(DEFAULT_TOPIC_PREFIX + template, new Route(DEFAULT_TOPIC_PREFIX + template, template, null));
            }
        }
        all.putAll(routes);
        return Collections.unmodifiableMap(all);
    }

    /** The transports the configured lines name (the defaults use the service's own). */
    public java.util.Set<String> namedTransports() {
        java.util.Set<String> named = new java.util.TreeSet<>();
        routes.values().forEach(r -> {
            if (r.transport() != null) {
                named.addAll(TransportChain.parse(r.transport()));
            }
        });
        return named;
    }

    public static EmailTopics none() {
        return new EmailTopics(null, Map.of());
    }

    /** Parses lines of {@code topic = template [from="..."]} into {@code into}; {@code where} names the source. */
    public static void parse(String where, List<String> lines, Map<String, Route> into) {
        String setting = where.split(" ")[0];
        for (int i = 0; i < lines.size(); i++) {
            String line = lines.get(i).strip();
            if (line.isEmpty() || line.startsWith("#")) {
                continue;
            }
            String at = where + (lines.size() > 1 ? " line " + (i + 1) : "") + ": ";
            int eq = line.indexOf('=');
            if (eq < 0) {
                throw new InvalidSettingException(setting, at + "expected 'topic = template', got '" + line + "'");
            }
            String topic = line.substring(0, eq).strip();
            if (!TOPIC.matcher(topic).matches()) {
                throw new InvalidSettingException(setting, at + "topic '" + topic + "' must be 1-128 of a-z, 0-9, '_', '.', '-'");
            }
            List<String> tokens = tokens(setting, at, line.substring(eq + 1));
            if (tokens.isEmpty() || !TEMPLATE.matcher(tokens.getFirst()).matches()) {
                throw new InvalidSettingException(setting, at + "topic " + topic + " needs a template name (1-64 of a-z, 0-9, '_', '.', '-')"
                        + (tokens.isEmpty() ? "" : ", got '" + tokens.getFirst() + "'"));
            }
            EmailAddress from = null;
            String transport = null;
            SuppressionPolicy suppression = SuppressionPolicy.STRICT;
            java.util.Set<String> seen = new java.util.HashSet<>();
            for (String attribute : tokens.subList(1, tokens.size())) {
                int e = attribute.indexOf('=');
                String name = e < 0 ? attribute : attribute.substring(0, e);
                String value = e < 0 ? null : unquote(attribute.substring(e + 1));
                if (!(name.equals("from") || name.equals("transport") || name.equals("suppression"))
                        || value == null || value.isBlank()) {
                    throw new InvalidSettingException(setting, at + "unknown or empty setting '" + attribute
                            + "' for topic " + topic + " (known: from=\"Name <address>\", transport=smtp|http|capture or a list such as smtp,http,"
                            + " suppression=strict|allow-complained)");
                }
                if (!seen.add(name)) {
                    throw new InvalidSettingException(setting, at + name + " is given twice for topic " + topic);
                }
                if (name.equals("suppression")) {
                    try {
                        suppression = SuppressionPolicy.parse(value);
                    } catch (IllegalArgumentException ex) {
                        throw new InvalidSettingException(setting, at + "topic " + topic + ": " + ex.getMessage());
                    }
                    continue;
                }
                if (name.equals("transport")) {
                    try {
                        transport = TransportChain.canonical(value);
                    } catch (IllegalArgumentException ex) {
                        throw new InvalidSettingException(setting, at + "transport of topic " + topic + " " + ex.getMessage());
                    }
                    continue;
                }
                try {
                    from = EmailAddress.parseMailbox(value);
                } catch (InvalidEmailException ex) {
                    throw new InvalidSettingException(setting, at + "from of topic " + topic + ": " + ex.getMessage());
                }
            }
            if (into.putIfAbsent(topic, new Route(topic, tokens.getFirst(), from, transport, suppression)) != null) {
                throw new InvalidSettingException(setting, at + "topic " + topic + " is configured twice");
            }
        }
    }

    /** Splits on blanks, keeping "quoted values" (with \" inside) whole. */
    private static List<String> tokens(String setting, String at, String text) {
        List<String> tokens = new ArrayList<>();
        StringBuilder current = new StringBuilder();
        boolean quoted = false;
        for (int i = 0; i < text.length(); i++) {
            char c = text.charAt(i);
            if (quoted && c == '\\' && i + 1 < text.length()) {
                current.append(c).append(text.charAt(++i));
            } else if (c == '"') {
                quoted = !quoted;
                current.append(c);
            } else if (!quoted && Character.isWhitespace(c)) {
                if (!current.isEmpty()) {
                    tokens.add(current.toString());
                    current.setLength(0);
                }
            } else {
                current.append(c);
            }
        }
        if (quoted) {
            throw new InvalidSettingException(setting, at + "a quote is not closed");
        }
        if (!current.isEmpty()) {
            tokens.add(current.toString());
        }
        return tokens;
    }

    private static String unquote(String v) {
        if (v.length() >= 2 && v.startsWith("\"") && v.endsWith("\"")) {
            return v.substring(1, v.length() - 1).replace("\\\"", "\"").replace("\\\\", "\\");
        }
        return v;
    }
}
