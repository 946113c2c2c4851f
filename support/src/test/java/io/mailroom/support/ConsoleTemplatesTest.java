package io.mailroom.support;

import io.pebbletemplates.pebble.error.PebbleException;
import io.pebbletemplates.pebble.template.PebbleTemplate;
import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.io.StringWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeSet;
import java.util.regex.Pattern;
import java.util.stream.Stream;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * The console's templates without a server: every template file is compiled at start, a broken or
 * missing one stops the start, printing escapes and unknown variables fail, and every page, in
 * every branch the sample records reach, renders with hostile text escaped.
 */
class ConsoleTemplatesTest {

    static final Path SOURCES = Path.of("src", "main", "resources", ConsolePages.ROOT);
    /** A display name or reason as hostile as it gets, a failure that tries to close a textarea, and Vietnamese. */
    static final String HOSTILE = "<script>alert(1)</script>\"'& </textarea> Nguyễn Thị Ánh";
    static final String ESCAPED = "&lt;script&gt;alert(1)&lt;/script&gt;&quot;&#39;&amp; &lt;/textarea&gt; Nguyễn Thị Ánh";

    static final Pattern INLINE = Pattern.compile("<style|\\sstyle=|\\son[a-z]+=", Pattern.CASE_INSENSITIVE);

    private final ConsolePages pages = new ConsolePages();
    private final ConsoleSamples samples = new ConsoleSamples(HOSTILE);

    @Test
    void everyConsoleTemplateIsCompiledAtStart() throws IOException {
        List<String> files = new ArrayList<>();
        try (Stream<Path> walk = Files.walk(SOURCES)) {
            walk.filter(p -> p.toString().endsWith(".peb"))
                    .forEach(p -> files.add(SOURCES.relativize(p).toString().replace('\\', '/')));
        }
        assertThat(files).isNotEmpty();
        // a template file the list misses would be compiled only when a page first needs it
        assertThat(new TreeSet<>(ConsolePages.TEMPLATES)).isEqualTo(new TreeSet<>(files));
        var engine = ConsolePages.engine(ConsolePages.ROOT);
        for (String name : ConsolePages.TEMPLATES) {
            assertThat(engine.getTemplate(name)).as(name).isNotNull();
        }
    }

    @Test
    void aBrokenOrMissingTemplateStopsTheStart() {
        assertThatThrownBy(() -> new ConsolePages("io/mailroom/support/console-test"))
                .isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("console template io/mailroom/support/console-test/layout.peb cannot be used");
        assertThatThrownBy(() -> new ConsolePages("io/mailroom/support/no-such-folder"))
                .isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("no-such-folder/layout.peb");
    }

    @Test
    void theEngineEscapesForHtmlAndRefusesUnknownVariables() throws IOException {
        PebbleTemplate print = ConsolePages.engine("io/mailroom/support/console-test").getTemplate("print.peb");
        StringWriter out = new StringWriter();
        print.evaluate(out, Map.of("value", HOSTILE));
        assertThat(out.toString()).isEqualTo("<p title=\"" + ESCAPED + "\">" + ESCAPED + "</p>\n");
        assertThatThrownBy(() -> print.evaluate(new StringWriter(), Map.of("other", "x")))
                .isInstanceOf(PebbleException.class).hasMessageContaining("value");
    }

    @Test
    void noTemplateTurnsEscapingOff() throws IOException {
        Pattern raw = Pattern.compile("\\|\\s*raw\\b|\\{%-?\\s*autoescape");
        for (String name : ConsolePages.TEMPLATES) {
            assertThat(raw.matcher(Files.readString(SOURCES.resolve(name))).find()).as(name).isFalse();
        }
    }

    /** Every page, for every role, in the branches the samples reach. */
    private Map<String, String> everyPage() {
        Map<String, String> out = new LinkedHashMap<>();
        Sessions.Flash flash = new Sessions.Flash("flash " + HOSTILE, true);
        out.put("login", pages.login("csrf", "/console/emails?status=failed&since=1h", "error " + HOSTILE, false));
        out.put("login demo", pages.login("csrf", "next " + HOSTILE, null, true));
        out.put("error 401", pages.error(null, 401, "message " + HOSTILE, null));
        for (Role role : Role.values()) {
            ConsolePages.Viewer viewer = new ConsolePages.Viewer(new Actor("name " + HOSTILE, role), "csrf-token");
            out.put(role + " lookup", pages.aboutPage(viewer, null, null, null, List.of("order", "user " + HOSTILE), null));
            out.put(role + " order", pages.aboutPage(viewer, flash, "order", "7", List.of("order"),
                    new AboutEmails(new About("order", "7"), samples.everyStatus(true), true)));
            out.put(role + " entity without emails", pages.aboutPage(viewer, null, "user " + HOSTILE, "8 " + HOSTILE, List.of(),
                    new AboutEmails(new About("user " + HOSTILE, "8 " + HOSTILE), List.of(), false)));
            for (EmailView e : samples.everyStatus(true)) {
                out.put(role + " email " + e.key(), pages.emailPage(viewer, flash, e));
            }
            for (EmailStatus status : EmailStatus.values()) {
                out.put(role + " list " + status, pages.listPage(viewer, flash,
                        new ConsolePages.ListInput(status.code(), HOSTILE, HOSTILE),
                        new EmailPage(status, samples.everyStatus(false), "cursor"), "/console/emails?status=failed&cursor=x",
                        "/console/emails?status=failed"));
            }
            out.put(role + " empty list", pages.listPage(viewer, null, new ConsolePages.ListInput(null, null, null),
                    new EmailPage(EmailStatus.FAILED, List.of(), null), null, "/console/emails?status=failed"));
            out.put(role + " queue paused", pages.queuePage(viewer, flash, samples.stats(true,
                    List.of(new TransportStatus.TransportState("smtp " + HOSTILE, "OPEN"))), samples.paused()));
            out.put(role + " queue topic paused", pages.queuePage(viewer, null, samples.stats(true, List.of()), samples.topicPaused()));
            out.put(role + " queue running", pages.queuePage(viewer, null, samples.stats(false, List.of()), new ControlState(List.of())));
            for (ChartRange range : ChartRange.values()) {
                out.put(role + " queue by topic " + range.code(), pages.queuePage(viewer, null, samples.stats(false, List.of()),
                        new ControlState(List.of()), java.util.Map.of(), samples.topics(range)));
            }
            out.put(role + " error", pages.error(viewer, 404, "message " + HOSTILE, "key " + HOSTILE));
            out.put(role + " dispatchers", pages.dispatchersPage(viewer, flash, samples.dispatchers(false)));
            out.put(role + " dispatchers all paused", pages.dispatchersPage(viewer, flash, samples.dispatchers(true)));
            out.put(role + " dispatchers none", pages.dispatchersPage(viewer, flash,
                    new DispatcherList(ConsoleSamples.T0, List.of(), Map.of(), List.of(), null)));
            List<EmailView> delivered = samples.everyStatus(false).stream().filter(e -> e.delivery() != null).toList();
            for (String which : List.of("bounced", "complained")) {
                out.put(role + " delivery " + which, pages.deliveryPage(viewer, flash, new DeliveryPage(which, delivered, "c"),
                        role == Role.OPERATOR ? List.of(samples.orphan()) : null, "/console/delivery?delivery=" + which + "&cursor=c"));
            }
            out.put(role + " delivery empty", pages.deliveryPage(viewer, flash, new DeliveryPage("bounced", List.of(), null), List.of(), null));
            out.put(role + " suppressions", pages.suppressionsPage(viewer, flash, samples.suppressions(), "filter " + HOSTILE, true,
                    "/console/suppressions?before=1"));
            out.put(role + " suppressions empty", pages.suppressionsPage(viewer, flash, List.of(), null, false, null));
        }
        return out;
    }

    @Test
    void hostileTextIsEscapedOnEveryPageThatShowsIt() {
        Map<String, String> all = everyPage();
        assertThat(all).hasSizeGreaterThan(60);
        all.forEach((name, html) -> {
            assertThat(html).as(name).startsWith("<!doctype html>").endsWith("</html>\n")
                    .doesNotContain("<script>alert").doesNotContain("</textarea>")
                    .doesNotContain("\"'&");
            // every page shows the hostile text somewhere (a name, a reason, a message) and only escaped
            assertThat(html).as(name).contains(ESCAPED);
            // the CSP allows this server's own files only: one script, app.js; no inline style or handlers
            assertThat(html.split("<script", -1)).as(name).hasSize(2);
            assertThat(html).as(name).contains("<script src=\"/console/assets/app.js\" defer></script>");
            assertThat(INLINE.matcher(html).find()).as(name + " has inline style or an event handler").isFalse();
        });
        String order = all.get("SUPPORT order");
        // the recipient's name, the failure, the provider's words, the person's name and reason in the history
        for (String shown : List.of("Ann " + ESCAPED + " &lt;ann@example.com&gt;", "last error " + ESCAPED, "421 busy " + ESCAPED,
                "250 reply " + ESCAPED, "alice " + ESCAPED + " (support)", "“reason " + ESCAPED + "”", "name " + ESCAPED)) {
            assertThat(order).contains(shown);
            assertThat(all.get("VIEWER email email-order-7-failed")).contains(shown);
        }
        assertThat(all.get("OPERATOR queue paused")).contains("by olga " + ESCAPED).contains("“pause " + ESCAPED + "”")
                .contains("smtp " + ESCAPED);
        assertThat(all.get("VIEWER queue topic paused")).contains("Paused for: email.shipped " + ESCAPED + ".")
                .doesNotContain("data-action=\"resume-topic\"");
        assertThat(all.get("OPERATOR queue topic paused")).contains("data-action=\"resume-topic\">Resume email.shipped " + ESCAPED)
                .contains("name=\"scope\" value=\"email.shipped " + ESCAPED + "\"");
        // every dispatcher, the dead one marked; its breakers in words; the unserved topic at the top
        String dispatchers = all.get("VIEWER dispatchers");
        assertThat(dispatchers).contains("worker " + ESCAPED).contains("host " + ESCAPED).contains("1.0 " + ESCAPED)
                .contains("smtp " + ESCAPED + ": closed (sending normally)").contains("http: open (provider failing")
                .contains("class=\"dead\" data-worker=\"old-worker\"").contains("not live").contains("10 s ago")
                .contains("data-claims=\"7\"").contains("1 of 2 dispatchers live")
                .contains("Paused by olga " + ESCAPED).contains("“pause " + ESCAPED + "”")
                .doesNotContain("data-action=");
        assertThat(dispatchers.indexOf("id=\"unserved-topics\"")).isPositive().isLessThan(dispatchers.indexOf("<h1>"));
        assertThat(dispatchers).contains("4 on email.password_reset").contains("(4 emails waiting with nobody to send them)");
        String operating = all.get("OPERATOR dispatchers");
        assertThat(operating).contains("data-action=\"resume-topic\"").contains("data-action=\"pause-topic\"")
                .contains("data-action=\"pause\"").contains("data-action=\"pause-named-topic\"")
                .contains("name=\"back\" value=\"/console/dispatchers\"").doesNotContain("data-action=\"resume\"");
        assertThat(all.get("OPERATOR dispatchers all paused")).contains("data-action=\"resume\"")
                .contains("All sending is paused").contains("“all " + ESCAPED + "”").contains("Held: all sending is paused");
        assertThat(all.get("VIEWER dispatchers none")).contains("No dispatcher is running").contains("No dispatcher has registered");
        // the charts by topic: the topic's name escaped, one chart each, the chosen range marked, its axis in words
        for (ChartRange range : ChartRange.values()) {
            String page = all.get("VIEWER queue by topic " + range.code());
            assertThat(page).contains("<h3 class=\"topic-title\">email.shipped " + ESCAPED)
                    .contains("id=\"topic-chart-1\"").contains("id=\"topic-chart-2\"")
                    .contains("href=\"/console/queue?range=" + range.code() + "#by-topic\" class=\"active\" aria-current=\"page\"")
                    .contains(range.startWords()).contains("rect class=\"bounced\"").contains("data-live id=\"live-topics\"");
        }
        // a gap in the samples breaks the waiting line in pieces
        assertThat(all.get("VIEWER queue by topic 1h").split("polyline class=\"depth\"", -1).length).isGreaterThan(4);
        assertThat(all.get("VIEWER queue running")).contains("No emails in this range.").doesNotContain("Reload the page");
        assertThat(all.get("SUPPORT list FAILED")).contains("value=\"" + ESCAPED + "\"").contains("last error " + ESCAPED);
        assertThat(all.get("login")).contains("value=\"/console/emails?status=failed&amp;since=1h\"");
        // the provider's words in the history and the bounce lists, the reasons on the suppression list
        assertThat(all.get("VIEWER email email-order-7-sent")).contains("smtp; 550 5.1.1 " + ESCAPED)
                .contains("Bounced (hard)").contains("reported late")
                .contains("No: bounced (hard): smtp; 550 " + ESCAPED);
        assertThat(all.get("OPERATOR delivery bounced")).contains("hard bounce: smtp; 550 " + ESCAPED).contains("orphan " + ESCAPED);
        assertThat(all.get("VIEWER delivery bounced")).doesNotContain("Reports that match no email");
        assertThat(all.get("SUPPORT suppressions")).contains("“lift " + ESCAPED + "”").contains("detail " + ESCAPED)
                .contains("data-action=\"lift\"").contains("data-action=\"suppress\"");
        assertThat(all.get("VIEWER suppressions")).doesNotContain("data-action=");
    }

    @Test
    void theSamplesReachEveryActionForm() {
        String order = everyPage().get("SUPPORT order");
        for (String action : List.of("retry", "close", "confirm-sent", "resend", "cancel")) {
            assertThat(order).contains("data-action=\"" + action + "\"");
        }
        assertThat(everyPage().get("SUPPORT list REVIEW")).contains("Won't send…").contains("Send again…");
        assertThat(everyPage().get("OPERATOR queue running")).contains("data-action=\"pause\"");
        assertThat(everyPage().get("OPERATOR queue paused")).contains("data-action=\"resume\"");
        assertThat(everyPage().get("VIEWER order")).doesNotContain("data-action=");
    }
}
