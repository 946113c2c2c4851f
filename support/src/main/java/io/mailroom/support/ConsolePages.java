package io.mailroom.support;

import io.pebbletemplates.pebble.PebbleEngine;
import io.pebbletemplates.pebble.error.PebbleException;
import io.pebbletemplates.pebble.loader.ClasspathLoader;
import io.pebbletemplates.pebble.template.PebbleTemplate;

import java.io.IOException;
import java.io.StringWriter;
import java.io.UncheckedIOException;
import java.net.URLEncoder;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * The console's pages, rendered on the server from the Pebble templates under
 * {@code io/mailroom/support/console/}: one layout, macros for the repeated pieces, a template per
 * page. Everything a template prints is HTML-escaped (autoescaping, strategy {@code html}); no
 * template uses {@code raw}. Variables are strict: a name the model lacks fails the render instead
 * of printing nothing. Every template is compiled when the server starts, so a broken one stops
 * the start rather than a page view.
 *
 * <p>This class turns the service's records into the small models the templates print. Times are
 * written in UTC inside {@code <time datetime>} and turned into the viewer's time zone by
 * {@code app.js} (without script they still read correctly, in UTC). No inline script or style:
 * the Content-Security-Policy allows only this server's own files.
 */
final class ConsolePages {

    /** Where the templates live on the class path. */
    static final String ROOT = "io/mailroom/support/console";
    /** Every console template, compiled at start: the layout and macros, then one per page. */
    static final List<String> TEMPLATES = List.of(
            "layout.peb", "macros/common.peb", "macros/email.peb", "macros/chart.peb",
            "login.peb", "about.peb", "search.peb", "email.peb", "list.peb", "queue.peb", "error.peb", "delivery.peb",
            "suppressions.peb", "dispatchers.peb", "erase.peb",
            "bulk-confirm.peb", "bulk-run.peb", "captured-list.peb", "captured.peb");

    private final Map<String, PebbleTemplate> templates = new HashMap<>();

    /** Compiles every console template; throws, naming the template, if one is missing or broken. */
    ConsolePages() {
        this(ROOT);
    }

    /** With the templates under another class-path folder (tests). */
    ConsolePages(String root) {
        PebbleEngine engine = engine(root);
        for (String name : TEMPLATES) {
            try {
                templates.put(name, engine.getTemplate(name));
            } catch (PebbleException e) {
                throw new IllegalStateException("console template " + root + "/" + name + " cannot be used: " + e.getMessage(), e);
            }
        }
    }

    /** The engine for the templates under {@code root}: HTML-escaping everything printed, strict about variables. */
    static PebbleEngine engine(String root) {
        ClasspathLoader loader = new ClasspathLoader(ConsolePages.class.getClassLoader());
        loader.setPrefix(root);
        return new PebbleEngine.Builder()
                .loader(loader)
                .extension(new ConsoleExtension())
                .autoEscaping(true)
                .defaultEscapingStrategy("html")
                .strictVariables(true)
                // compiled once, at start; the layout and macros a page pulls in come from this cache
                .cacheActive(true)
                .build();
    }

    /** What every page of a signed-in person needs. */
    record Viewer(Actor actor, String csrf) {
        boolean may(Role role) {
            return actor.role().includes(role);
        }

        public String name() {
            return actor.name();
        }

        public String role() {
            return actor.role().word();
        }

        /** May retry, resend, confirm, cancel and close emails. */
        public boolean mayAct() {
            return may(Role.SUPPORT);
        }

        /** May pause and resume sending. */
        public boolean mayControl() {
            return may(Role.OPERATOR);
        }
    }

    /** A percent-encoded query-string value or path segment (then still HTML-escaped where it is placed). */
    static String url(String value) {
        return URLEncoder.encode(value == null ? "" : value, StandardCharsets.UTF_8).replace("+", "%20");
    }

    // ------------------------------------------------------------------------------------ models

    /**
     * One email as a card or a list row shows it.
     *
     * @param email     the email itself; the templates read its fields directly
     * @param to        "Name &lt;address&gt;", the address alone, or null when not known
     * @param error     why it did not go out, or null when that box is not shown (sent or cancelled)
     * @param listError the error shortened for a list row; empty when none is shown
     * @param buttons   the actions open on it, in order, each with its button style
     * @param back      where the action forms send the person back to
     */
    public record Card(EmailView email, String to, String error, String listError, List<Button> buttons, String back) {
    }

    /** @param style primary for the email's main action, else secondary (cancel: danger) */
    public record Button(String action, String style) {
    }

    static Card card(EmailView e, String back) {
        String to = e.recipient() == null ? null
                : e.recipientName() == null ? e.recipient() : e.recipientName() + " <" + e.recipient() + ">";
        String error = e.lastError() != null && e.status() != EmailStatus.SENT && e.status() != EmailStatus.CANCELLED
                ? e.lastError() : null;
        String listError = e.lastError() == null || e.status() == EmailStatus.SENT ? "" : shorten(e.lastError(), 160);
        List<Button> buttons = new ArrayList<>();
        for (String action : e.actions()) {
            String style = switch (action) {
                case EmailView.CANCEL -> "danger";
                case EmailView.RESEND -> "secondary";
                default -> action.equals(e.mainAction()) ? "primary" : "secondary";
            };
            buttons.add(new Button(action, style));
        }
        return new Card(e, to, error, listError, List.copyOf(buttons), back);
    }

    /** The emails about one entity; {@code max} is how many are shown at most. */
    public record AboutModel(About about, boolean truncated, int max, List<Card> cards) {
    }

    /** A choice of the status filter. */
    public record Option(String code, String words, boolean selected) {
    }

    /** The raw filter values as typed, to show them back in the form. */
    record ListInput(String status, String since, String olderThan) {
    }

    /** A number on the queue page; {@code note} may be null. */
    public record Tile(String label, long value, String note, String status) {
    }

    public record WindowRow(String label, QueueStats.Window counts) {
    }

    public record Breaker(String transport, String words) {
    }

    // ------------------------------------------------------------------------------------- pages

    String login(String csrf, String next, String error, boolean demo) {
        Map<String, Object> m = new HashMap<>();
        m.put("csrf", csrf);
        m.put("next", next);
        m.put("error", error);
        m.put("demo", demo);
        return render("login.peb", "Sign in", null, null, null, m);
    }

    /**
     * The lookup by entity; {@code emails} null: the form alone.
     *
     * @param type  the type as typed (or null)
     * @param id    the id as typed (or null)
     * @param types the known entity types, for the suggestions
     */
    String aboutPage(Viewer viewer, Sessions.Flash flash, String type, String id, List<String> types, AboutEmails emails) {
        Map<String, Object> m = new HashMap<>();
        m.put("type", type == null ? "" : type);
        m.put("id", id == null ? "" : id);
        m.put("types", types);
        AboutModel model = null;
        if (emails != null) {
            String back = emails.about().consoleUrl();
            model = new AboutModel(emails.about(), emails.truncated(), SupportService.MAX_EMAILS_PER_ENTITY,
                    emails.emails().stream().map(e -> card(e, back)).toList());
        }
        m.put("about", model);
        return render("about.peb", emails == null ? "Find emails about…" : emails.about().label(), viewer, "about", flash, m);
    }

    String emailPage(Viewer viewer, Sessions.Flash flash, EmailView e) {
        Map<String, Object> m = new HashMap<>();
        m.put("card", card(e, "/console/emails/" + url(e.key())));
        return render("email.peb", e.kind() + " " + e.key(), viewer, null, flash, m);
    }

    String listPage(Viewer viewer, Sessions.Flash flash, ListInput input, EmailPage page, String nextHref, String back) {
        EmailStatus status = page.status();
        Map<String, Object> m = new HashMap<>();
        m.put("heading", listTitle(status));
        m.put("statuses", List.of(EmailStatus.FAILED, EmailStatus.REVIEW, EmailStatus.PENDING, EmailStatus.SCHEDULED, EmailStatus.SENT,
                EmailStatus.CANCELLED, EmailStatus.CLOSED).stream().map(s -> new Option(s.code(), s.words(), s == status)).toList());
        m.put("since", input.since());
        m.put("olderThan", input.olderThan());
        m.put("attention", status == EmailStatus.FAILED || status == EmailStatus.REVIEW);
        m.put("cards", page.emails().stream().map(e -> card(e, back)).toList());
        m.put("next", nextHref);
        String active = switch (status) {
            case FAILED -> "failed";
            case REVIEW -> "review";
            case PENDING -> "pending";
            default -> null;
        };
        return render("list.peb", listTitle(status), viewer, active, flash, m);
    }

    /** A search of the history; {@code model} from {@link SearchModel#of}. */
    String searchPage(Viewer viewer, Sessions.Flash flash, Map<String, Object> model) {
        return render("search.peb", "Search emails", viewer, "search", flash, model);
    }

    /** Bounced or complained emails; {@code orphans} for operators, else null. */
    String deliveryPage(Viewer viewer, Sessions.Flash flash, DeliveryPage page, List<OrphanEvent> orphans, String nextHref) {
        Map<String, Object> m = new HashMap<>();
        String heading = page.delivery().equals("bounced") ? "Bounced emails" : "Emails marked as spam";
        m.put("heading", heading);
        m.put("delivery", page.delivery());
        m.put("cards", page.emails().stream().map(e -> card(e, "/console/delivery?delivery=" + url(page.delivery()))).toList());
        m.put("orphans", orphans);
        m.put("next", nextHref);
        return render("delivery.peb", heading, viewer, page.delivery(), flash, m);
    }

    String suppressionsPage(Viewer viewer, Sessions.Flash flash, List<SuppressionView> entries, String address, boolean lifted,
                            String nextHref) {
        Map<String, Object> m = new HashMap<>();
        m.put("entries", entries);
        m.put("address", address == null ? "" : address);
        m.put("lifted", lifted);
        m.put("next", nextHref);
        return render("suppressions.peb", "Suppressed addresses", viewer, "suppressions", flash, m);
    }

    /** The erasure form (a customer's right to erasure); the outcome of the last one comes as the flash. */
    String erasePage(Viewer viewer, Sessions.Flash flash) {
        return render("erase.peb", "Erase an address", viewer, "suppressions", flash, Map.of());
    }

    static String listTitle(EmailStatus status) {
        return switch (status) {
            case FAILED -> "Failed emails";
            case REVIEW -> "Emails that need review";
            case PENDING, SENDING -> "Emails waiting to be sent";
            case SCHEDULED -> "Scheduled emails";
            case SENT -> "Sent emails";
            case CANCELLED -> "Cancelled emails";
            case CLOSED -> "Closed emails (won't send)";
        };
    }

    private static String shorten(String s, int max) {
        return s.length() <= max ? s : s.substring(0, max - 1) + "…";
    }

    String queuePage(Viewer viewer, Sessions.Flash flash, QueueStats s, ControlState control) {
        return queuePage(viewer, flash, s, control, Map.of());
    }

    String queuePage(Viewer viewer, Sessions.Flash flash, QueueStats s, ControlState control, Map<String, Long> unserved) {
        return queuePage(viewer, flash, s, control, unserved, new TopicStats(ChartRange.HOUR, s.at(), s.at(), 60, null, null, List.of()));
    }

    /**
     * @param unserved emails waiting on each topic no running dispatcher serves (a banner when any)
     * @param byTopic  the charts by topic, over the range chosen by the links above them
     */
    String queuePage(Viewer viewer, Sessions.Flash flash, QueueStats s, ControlState control, Map<String, Long> unserved,
                     TopicStats byTopic) {
        Map<String, Object> m = new HashMap<>();
        m.put("topicCharts", TopicChart.of(byTopic));
        m.put("ranges", java.util.Arrays.stream(ChartRange.values())
                .map(r -> new Option(r.code(), r.code().replaceAll("(\\d+)", "$1 "), r == byTopic.range())).toList());
        m.put("countedUntil", byTopic.countedUntil());
        m.put("unserved", unserved.entrySet().stream().map(e -> e.getValue() + " on " + e.getKey()).toList());
        boolean allPaused = control.allPaused();
        m.put("paused", allPaused
                ? control.switches().stream().filter(x -> x.paused() && x.scope().equals("*")).findFirst().orElseThrow() : null);
        List<String> topics = control.pausedScopes();
        m.put("pausedTopics", allPaused || topics.isEmpty() ? null : String.join(", ", topics));
        m.put("pausedSwitches", control.switches().stream().filter(x -> x.paused() && !x.scope().equals("*")).toList());
        m.put("tiles", List.of(
                new Tile("Waiting", s.counts().getOrDefault("pending", 0L), s.pendingDue() + " due now", "pending"),
                new Tile("Sending now", s.counts().getOrDefault("sending", 0L), null, "sending"),
                new Tile("Failed", s.counts().getOrDefault("failed", 0L), "need a retry or a decision", "failed"),
                new Tile("Needs review", s.counts().getOrDefault("review", 0L), "outcome unknown", "review")));
        m.put("oldestWaiting", s.oldestPendingAgeSeconds() == null ? "–" : ago(s.oldestPendingAgeSeconds()));
        m.put("windows", List.of(new WindowRow("Last minute", s.lastMinute()), new WindowRow("Last hour", s.lastHour())));
        m.put("chart", QueueChart.of(s.perMinute()));
        m.put("transportStateKnown", s.transportStateKnown());
        m.put("transports", s.transports().stream().map(t -> new Breaker(t.transport(), breakerWords(t.breaker()))).toList());
        m.put("at", s.at());
        return render("queue.peb", "Queue", viewer, "queue", flash, m);
    }

    /** Every dispatcher and topic, with the pause switches and the unserved-topic banner ({@link ConsoleDispatchers}). */
    String dispatchersPage(Viewer viewer, Sessions.Flash flash, DispatcherList list) {
        return render("dispatchers.peb", "Dispatchers and topics", viewer, "dispatchers", flash, ConsoleDispatchers.model(list));
    }

    static String ago(long seconds) {
        if (seconds < 60) {
            return seconds + " s";
        }
        long minutes = seconds / 60;
        if (minutes < 60) {
            return minutes + " min";
        }
        long hours = minutes / 60;
        if (hours < 48) {
            return hours + " h " + (minutes % 60) + " min";
        }
        return (hours / 24) + " days";
    }

    static String breakerWords(String state) {
        return switch (state == null ? "unknown" : state.toLowerCase(Locale.ROOT)) {
            case "closed" -> "closed (sending normally)";
            case "open" -> "open (provider failing; sending held back)";
            case "half_open" -> "half open (testing the provider)";
            case "forced_open" -> "forced open (held back by an operator)";
            case "disabled" -> "disabled";
            default -> "unknown";
        };
    }

    /** An error page; {@code viewer} null when nobody is signed in. */
    String error(Viewer viewer, int status, String message, String parameter) {
        Map<String, Object> m = new HashMap<>();
        m.put("message", message);
        m.put("parameter", parameter);
        m.put("signIn", status == 401);
        return render("error.peb", title(status), viewer, null, null, m);
    }

    static String title(int status) {
        return switch (status) {
            case 400 -> "That did not look right";
            case 401 -> "Please sign in";
            case 403 -> "Not allowed";
            case 404 -> "Not found";
            case 409 -> "Not now";
            case 503 -> "Temporarily unavailable";
            default -> "Something went wrong";
        };
    }

    // ------------------------------------------------------------------------------------ render

    /**
     * Renders a page template inside the layout, which needs the title, the viewer, the active tab and
     * the flash (also for the pages of {@link BulkRoutes}).
     */
    String render(String template, String title, Viewer viewer, String active, Sessions.Flash flash,
                          Map<String, Object> page) {
        Map<String, Object> model = new LinkedHashMap<>(page);
        model.put("title", title);
        model.put("viewer", viewer);
        model.put("active", active);
        model.put("flash", flash);
        StringWriter out = new StringWriter(8192);
        try {
            templates.get(template).evaluate(out, model, Locale.ROOT);
        } catch (IOException e) {
            throw new UncheckedIOException(e); // a StringWriter does not throw
        }
        return out.toString();
    }
}
