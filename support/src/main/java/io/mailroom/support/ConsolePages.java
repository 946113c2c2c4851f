package io.mailroom.support;

import java.time.Instant;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;
import java.util.List;
import java.util.Locale;

import static io.mailroom.support.Html.esc;
import static io.mailroom.support.Html.url;

/**
 * The console's pages, rendered on the server. Every value that comes from the database or the
 * request passes through {@link Html#esc}; URLs built from values are percent-encoded first. Times
 * are written in UTC inside {@code <time datetime>} and turned into the viewer's time zone by
 * {@code app.js} (without script they still read correctly, in UTC). No inline script or style:
 * the Content-Security-Policy allows only this server's own files.
 */
final class ConsolePages {

    private static final DateTimeFormatter UTC_TEXT = DateTimeFormatter.ofPattern("yyyy-MM-dd HH:mm:ss 'UTC'", Locale.ROOT)
            .withZone(ZoneOffset.UTC);

    private ConsolePages() {
    }

    /** What every page of a signed-in person needs. */
    record Viewer(Actor actor, String csrf) {
        boolean may(Role role) {
            return actor.role().includes(role);
        }
    }

    // ------------------------------------------------------------------------------------ layout

    static String layout(String title, Viewer viewer, String active, Sessions.Flash flash, String body) {
        StringBuilder h = new StringBuilder(8192);
        h.append("<!doctype html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">")
                .append("<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">")
                .append("<title>").append(esc(title)).append(" · Mailroom support</title>")
                .append("<link rel=\"stylesheet\" href=\"/console/assets/app.css\">")
                .append("<script src=\"/console/assets/app.js\" defer></script></head><body>");
        h.append("<header class=\"top\"><a class=\"brand\" href=\"/console/orders\">Mailroom <span>support</span></a>");
        if (viewer != null) {
            h.append("<nav>");
            nav(h, "orders", active, "/console/orders", "Find an order");
            nav(h, "failed", active, "/console/emails?status=failed", "Failed");
            nav(h, "review", active, "/console/emails?status=review", "Needs review");
            nav(h, "pending", active, "/console/emails?status=pending", "Waiting");
            nav(h, "queue", active, "/console/queue", "Queue");
            h.append("</nav><div class=\"who\"><span class=\"who-name\">").append(esc(viewer.actor().name()))
                    .append("</span> <span class=\"role\">").append(esc(viewer.actor().role().word())).append("</span>")
                    .append("<form method=\"post\" action=\"/console/logout\">").append(csrf(viewer))
                    .append("<button class=\"link\" type=\"submit\">Sign out</button></form></div>");
        }
        h.append("</header><main>");
        if (flash != null) {
            h.append("<div class=\"flash ").append(flash.error() ? "flash-error" : "flash-ok").append("\" role=\"status\">")
                    .append(esc(flash.message())).append("</div>");
        }
        h.append(body);
        h.append("</main><footer>Times are shown in <span id=\"tz\">UTC</span>.</footer></body></html>");
        return h.toString();
    }

    private static void nav(StringBuilder h, String name, String active, String href, String text) {
        h.append("<a href=\"").append(esc(href)).append("\"").append(name.equals(active) ? " class=\"active\" aria-current=\"page\"" : "")
                .append(">").append(esc(text)).append("</a>");
    }

    private static String csrf(Viewer viewer) {
        return "<input type=\"hidden\" name=\"csrf\" value=\"" + esc(viewer.csrf()) + "\">";
    }

    static String time(Instant t) {
        if (t == null) {
            return "<span class=\"muted\">–</span>";
        }
        return "<time datetime=\"" + esc(t.toString()) + "\">" + esc(UTC_TEXT.format(t)) + "</time>";
    }

    static String badge(EmailStatus s) {
        return "<span class=\"badge s-" + esc(s.code()) + "\">" + esc(s.words()) + "</span>";
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

    // ------------------------------------------------------------------------------------ login

    static String login(String csrf, String next, String error, boolean demo) {
        StringBuilder b = new StringBuilder();
        b.append("<section class=\"login\"><h1>Sign in</h1>");
        b.append("<p>Use the access token you were given. It identifies you and decides what you may do.</p>");
        if (error != null) {
            b.append("<p class=\"form-error\" role=\"alert\">").append(esc(error)).append("</p>");
        }
        b.append("<form method=\"post\" action=\"/console/login\" class=\"stack\">")
                .append("<input type=\"hidden\" name=\"csrf\" value=\"").append(esc(csrf)).append("\">")
                .append("<input type=\"hidden\" name=\"next\" value=\"").append(esc(next)).append("\">")
                .append("<label for=\"token\">Access token</label>")
                .append("<input id=\"token\" name=\"token\" type=\"password\" autocomplete=\"current-password\" maxlength=\"512\"")
                .append(demo ? "" : " required").append(" autofocus>")
                .append("<button type=\"submit\" class=\"primary\" id=\"sign-in\">Sign in</button>");
        if (demo) {
            b.append("<button type=\"submit\" name=\"demo\" value=\"1\" class=\"secondary\" id=\"demo\" formnovalidate>")
                    .append("Enter the demo without a token</button>")
                    .append("<p class=\"muted\">Demo mode is on: anyone on this machine can act as an operator.</p>");
        }
        b.append("</form></section>");
        return b.toString();
    }

    // ------------------------------------------------------------------------------------ orders

    static String orderPage(String orderIdInput, OrderEmails order, Viewer viewer) {
        StringBuilder b = new StringBuilder();
        b.append("<h1>Find an order</h1>");
        b.append("<form class=\"lookup\" method=\"get\" action=\"/console/orders\">")
                .append("<label for=\"orderId\">Order number</label>")
                .append("<input id=\"orderId\" name=\"orderId\" inputmode=\"numeric\" maxlength=\"19\" required autofocus value=\"")
                .append(esc(orderIdInput == null ? "" : orderIdInput)).append("\">")
                .append("<button type=\"submit\" class=\"primary\" id=\"look-up\">Look up</button></form>");
        if (order == null) {
            b.append("<p class=\"muted\">Type the order number to see every email sent for it, and what happened to each.</p>");
            return b.toString();
        }
        int n = order.emails().size();
        b.append("<h2 id=\"order-heading\">Order ").append(esc(order.orderId())).append(" <span class=\"muted\">· ")
                .append(n == 0 ? "no emails" : n == 1 ? "1 email" : n + " emails").append("</span></h2>");
        if (n == 0) {
            b.append("<p class=\"empty\">No email has been queued for order ").append(esc(order.orderId()))
                    .append(". Check the order number; an order that was never saved has no emails.</p>");
        }
        if (order.truncated()) {
            b.append("<p class=\"muted\">Only the first ").append(SupportService.MAX_EMAILS_PER_ORDER).append(" emails are shown.</p>");
        }
        String back = "/console/orders?orderId=" + url(order.orderId());
        for (EmailView e : order.emails()) {
            b.append(emailCard(e, viewer, back, false));
        }
        return b.toString();
    }

    static String emailPage(EmailView e, Viewer viewer) {
        StringBuilder b = new StringBuilder();
        b.append("<p class=\"crumbs\"><a href=\"/console/orders?orderId=").append(esc(url(e.orderId()))).append("\">← Order ")
                .append(esc(e.orderId())).append("</a></p>");
        b.append(emailCard(e, viewer, "/console/emails/" + url(e.key()), true));
        return b.toString();
    }

    /** One email: what it is, its status in words, its facts, the actions open to this viewer, its timeline. */
    static String emailCard(EmailView e, Viewer viewer, String back, boolean alone) {
        StringBuilder b = new StringBuilder();
        b.append("<section class=\"email s-").append(esc(e.status().code())).append("\" data-key=\"").append(esc(e.key()))
                .append("\" data-status=\"").append(esc(e.status().code())).append("\">");
        b.append("<div class=\"email-head\">").append(alone ? "<h1>" : "<h3>").append(esc(e.kind())).append(alone ? "</h1>" : "</h3>")
                .append(badge(e.status()))
                .append("<a class=\"key\" href=\"/console/emails/").append(esc(url(e.key()))).append("\">").append(esc(e.key())).append("</a></div>");
        b.append("<p class=\"explain\">").append(esc(e.status().explanation())).append("</p>");

        b.append("<dl class=\"facts\">");
        fact(b, "To", e.recipient() == null ? null
                : e.recipientName() == null ? e.recipient() : e.recipientName() + " <" + e.recipient() + ">");
        if (e.subject() != null) {
            fact(b, "Subject", e.subject());
        }
        b.append("<dt>Queued</dt><dd>").append(time(e.createdAt())).append("</dd>");
        if (e.sentAt() != null) {
            b.append("<dt>Sent</dt><dd>").append(time(e.sentAt())).append("</dd>");
        }
        if (e.nextAttemptAt() != null) {
            b.append("<dt>Next try</dt><dd>").append(time(e.nextAttemptAt())).append("</dd>");
        }
        fact(b, "Attempts", e.attempts() + " of " + e.maxAttempts());
        if (e.providerMessageId() != null) {
            b.append("<dt>Provider's id</dt><dd><code>").append(esc(e.providerMessageId())).append("</code></dd>");
        }
        if (e.providerReply() != null) {
            // an SMTP server's reply names its queue id, which the mail admin can look up
            b.append("<dt>Server's reply</dt><dd><code>").append(esc(e.providerReply())).append("</code></dd>");
        }
        if (e.resendOf() != null) {
            b.append("<dt>Resend of</dt><dd><a href=\"/console/emails/").append(esc(url(e.resendOf()))).append("\">")
                    .append(esc(e.resendOf())).append("</a></dd>");
        }
        if (!e.resentAs().isEmpty()) {
            b.append("<dt>Resent as</dt><dd>");
            for (int i = 0; i < e.resentAs().size(); i++) {
                String k = e.resentAs().get(i);
                b.append(i == 0 ? "" : ", ").append("<a href=\"/console/emails/").append(esc(url(k))).append("\">").append(esc(k)).append("</a>");
            }
            b.append("</dd>");
        }
        b.append("</dl>");

        if (e.lastError() != null && e.status() != EmailStatus.SENT && e.status() != EmailStatus.CANCELLED) {
            b.append("<div class=\"error-box\"><strong>Why it did not go out</strong><p class=\"error-text\">")
                    .append(esc(e.lastError())).append("</p></div>");
        }
        b.append(actions(e, viewer, back, true));
        b.append(timeline(e.timeline()));
        b.append("</section>");
        return b.toString();
    }

    private static void fact(StringBuilder b, String name, String value) {
        b.append("<dt>").append(esc(name)).append("</dt><dd>")
                .append(value == null ? "<span class=\"muted\">not known</span>" : esc(value)).append("</dd>");
    }

    /**
     * The action forms open to this viewer, the email's main action styled as the main button;
     * {@code full} adds the reason fields (lists show short forms).
     */
    static String actions(EmailView e, Viewer viewer, String back, boolean full) {
        if (!viewer.may(Role.SUPPORT) || e.actions().isEmpty()) {
            return "";
        }
        StringBuilder b = new StringBuilder("<div class=\"actions\" id=\"actions-" + esc(e.key()) + "\">");
        String base = "/console/emails/" + url(e.key()) + "/";
        for (String action : e.actions()) {
            String style = action.equals(e.mainAction()) ? "primary" : "secondary";
            switch (action) {
                case EmailView.RETRY -> b.append(form(base + "retry", viewer, back))
                        .append("<button type=\"submit\" class=\"").append(style).append("\" data-action=\"retry\">Retry now</button></form>");
                case EmailView.CLOSE -> {
                    if (full) {
                        b.append(form(base + "close", viewer, back))
                                .append("<input name=\"reason\" required maxlength=\"500\" placeholder=\"Why will it not be sent?\" aria-label=\"Why will it not be sent\">")
                                .append("<button type=\"submit\" class=\"").append(style)
                                .append("\" data-action=\"close\" data-confirm=\"Close this email? It will not be sent, and this cannot be undone.\">")
                                .append("Won't send: close it</button></form>");
                    } else {
                        b.append("<a class=\"button ").append(style).append("\" href=\"/console/emails/").append(esc(url(e.key())))
                                .append("#actions-").append(esc(e.key())).append("\">Won't send…</a>");
                    }
                }
                case EmailView.CONFIRM_SENT -> {
                    b.append(form(base + "confirm-sent", viewer, back));
                    if (full) {
                        b.append("<input name=\"providerMessageId\" maxlength=\"500\" placeholder=\"Provider's id (optional)\" aria-label=\"Provider's id\">");
                    }
                    b.append("<button type=\"submit\" class=\"").append(style).append("\" data-action=\"confirm-sent\">It was sent</button></form>");
                }
                case EmailView.RESEND -> {
                    if (full) {
                        b.append(form(base + "resend", viewer, back))
                                .append("<input name=\"reason\" required maxlength=\"500\" placeholder=\"Why send it again?\" aria-label=\"Why send it again\">")
                                .append("<button type=\"submit\" class=\"secondary\" data-action=\"resend\">Send again as a new email</button></form>");
                    } else {
                        b.append("<a class=\"button secondary\" href=\"/console/emails/").append(esc(url(e.key())))
                                .append("#actions-").append(esc(e.key())).append("\">Send again…</a>");
                    }
                }
                case EmailView.CANCEL -> b.append(form(base + "cancel", viewer, back))
                        .append("<button type=\"submit\" class=\"danger\" data-action=\"cancel\" data-confirm=\"Cancel this email? It will not be sent.\">Cancel</button></form>");
                default -> {
                    // no form for actions this page does not know
                }
            }
        }
        return b.append("</div>").toString();
    }

    private static String form(String action, Viewer viewer, String back) {
        return "<form method=\"post\" action=\"" + esc(action) + "\" class=\"inline\">" + csrf(viewer)
                + "<input type=\"hidden\" name=\"back\" value=\"" + esc(back) + "\">";
    }

    static String timeline(List<TimelineEntry> entries) {
        if (entries == null) {
            return "";
        }
        StringBuilder b = new StringBuilder("<h4>History</h4>");
        if (entries.isEmpty()) {
            return b.append("<p class=\"muted timeline-empty\">Nothing has happened yet: no attempt so far.</p>").toString();
        }
        b.append("<table class=\"timeline\"><thead><tr><th>When</th><th>What happened</th><th>Details</th></tr></thead><tbody>");
        for (TimelineEntry t : entries) {
            switch (t) {
                case TimelineEntry.Attempt a -> {
                    b.append("<tr class=\"attempt o-").append(esc(a.outcome())).append("\"><td>").append(time(a.finishedAt()))
                            .append("</td><td>Attempt ").append(a.attempt()).append(": ").append(esc(a.outcomeText())).append("</td><td>");
                    StringBuilder d = new StringBuilder();
                    if (a.error() != null) {
                        d.append("<p class=\"error-text\">").append(esc(a.error())).append("</p>");
                    }
                    StringBuilder small = new StringBuilder();
                    if (a.transport() != null) {
                        small.append("via ").append(esc(a.transport()));
                    }
                    if (a.providerStatus() != null) {
                        small.append(small.isEmpty() ? "" : " · ").append("provider answered ").append(esc(a.providerStatus()));
                    }
                    if (a.providerMessageId() != null) {
                        small.append(small.isEmpty() ? "" : " · ").append("id <code>").append(esc(a.providerMessageId())).append("</code>");
                    }
                    if (a.providerReply() != null) {
                        small.append(small.isEmpty() ? "" : " · ").append("server replied <code>").append(esc(a.providerReply())).append("</code>");
                    }
                    small.append(small.isEmpty() ? "" : " · ").append("sender ").append(esc(a.worker()));
                    d.append("<span class=\"muted\">").append(small).append("</span>");
                    b.append(d).append("</td></tr>");
                }
                case TimelineEntry.Action a -> {
                    b.append("<tr class=\"action\"><td>").append(time(a.at())).append("</td><td>").append(esc(a.actionText()))
                            .append("</td><td>");
                    if (a.reason() != null) {
                        b.append("“").append(esc(a.reason())).append("”");
                    }
                    if (a.newKey() != null) {
                        b.append(a.reason() != null ? " · " : "").append("<a href=\"/console/emails/").append(esc(url(a.newKey())))
                                .append("\">").append(esc(a.newKey())).append("</a>");
                    }
                    b.append("</td></tr>");
                }
            }
        }
        return b.append("</tbody></table>").toString();
    }

    // ------------------------------------------------------------------------------------- lists

    /** The raw filter values as typed, to show them back in the form. */
    record ListInput(String status, String since, String olderThan) {
    }

    static String listPage(ListInput input, EmailPage page, String nextHref, Viewer viewer, String back) {
        StringBuilder b = new StringBuilder();
        EmailStatus status = page.status();
        b.append("<h1>").append(esc(listTitle(status))).append("</h1>");
        b.append("<form class=\"filters\" method=\"get\" action=\"/console/emails\">")
                .append("<label>Status <select name=\"status\">");
        for (EmailStatus s : List.of(EmailStatus.FAILED, EmailStatus.REVIEW, EmailStatus.PENDING, EmailStatus.SENT, EmailStatus.CANCELLED,
                EmailStatus.CLOSED)) {
            b.append("<option value=\"").append(esc(s.code())).append("\"").append(s == status ? " selected" : "").append(">")
                    .append(esc(s.words())).append("</option>");
        }
        b.append("</select></label>")
                .append("<label>Changed since <input name=\"since\" maxlength=\"40\" placeholder=\"e.g. 1h, 2d\" value=\"")
                .append(esc(input.since())).append("\"></label>")
                .append("<label>Queued more than <input name=\"olderThan\" maxlength=\"40\" placeholder=\"e.g. 30m\" value=\"")
                .append(esc(input.olderThan())).append("\"> ago</label>")
                .append("<button type=\"submit\" class=\"secondary\">Show</button></form>");
        if (page.emails().isEmpty()) {
            b.append("<p class=\"empty\">No emails here. ").append(status == EmailStatus.FAILED || status == EmailStatus.REVIEW
                    ? "Nothing needs attention." : "").append("</p>");
            return b.toString();
        }
        b.append("<table class=\"list\"><thead><tr><th>Email</th><th>Order</th><th>To</th><th>Status</th><th>Attempts</th>")
                .append("<th>Last change</th><th>Why</th><th></th></tr></thead><tbody>");
        for (EmailView e : page.emails()) {
            b.append("<tr data-key=\"").append(esc(e.key())).append("\"><td><a href=\"/console/emails/").append(esc(url(e.key())))
                    .append("\">").append(esc(e.kind())).append("</a><br><span class=\"key\">").append(esc(e.key())).append("</span></td>")
                    .append("<td><a href=\"/console/orders?orderId=").append(esc(url(e.orderId()))).append("\">").append(esc(e.orderId()))
                    .append("</a></td><td>").append(e.recipient() == null ? "<span class=\"muted\">not known</span>" : esc(e.recipient()))
                    .append("</td><td>").append(badge(e.status())).append("</td><td>").append(e.attempts()).append(" of ").append(e.maxAttempts())
                    .append("</td><td>").append(time(e.updatedAt())).append("</td><td class=\"error-text\">")
                    .append(e.lastError() == null || e.status() == EmailStatus.SENT ? "" : esc(shorten(e.lastError(), 160)))
                    .append("</td><td>").append(actions(e, viewer, back, false)).append("</td></tr>");
        }
        b.append("</tbody></table>");
        if (nextHref != null) {
            b.append("<p class=\"pager\"><a class=\"button secondary\" href=\"").append(esc(nextHref)).append("\">Next page →</a></p>");
        }
        return b.toString();
    }

    static String listTitle(EmailStatus status) {
        return switch (status) {
            case FAILED -> "Failed emails";
            case REVIEW -> "Emails that need review";
            case PENDING, SENDING -> "Emails waiting to be sent";
            case SENT -> "Sent emails";
            case CANCELLED -> "Cancelled emails";
            case CLOSED -> "Closed emails (won't send)";
        };
    }

    private static String shorten(String s, int max) {
        return s.length() <= max ? s : s.substring(0, max - 1) + "…";
    }

    // ------------------------------------------------------------------------------------- queue

    static String queuePage(QueueStats s, ControlState control, Viewer viewer) {
        StringBuilder b = new StringBuilder();
        b.append("<h1>Queue</h1>");
        boolean allPaused = control.allPaused();
        b.append("<div class=\"dispatch ").append(allPaused ? "paused" : "running").append("\" id=\"dispatch-state\">");
        if (allPaused) {
            ControlState.Switch all = control.switches().stream().filter(x -> x.scope().equals("*")).findFirst().orElseThrow();
            b.append("<strong>Sending is paused</strong> by ").append(esc(all.updatedBy())).append(" since ").append(time(all.updatedAt()));
            if (all.reason() != null) {
                b.append(": “").append(esc(all.reason())).append("”");
            }
        } else {
            b.append("<strong>Sending is running.</strong>");
            List<String> topics = control.pausedScopes();
            if (!topics.isEmpty()) {
                b.append(" Paused for: ").append(esc(String.join(", ", topics))).append(".");
            }
        }
        if (viewer.may(Role.OPERATOR)) {
            b.append("<form method=\"post\" action=\"/console/control/").append(allPaused ? "resume" : "pause").append("\" class=\"inline\">")
                    .append(csrf(viewer));
            if (!allPaused) {
                b.append("<input name=\"reason\" maxlength=\"500\" placeholder=\"Why pause? (optional)\" aria-label=\"Why pause\">");
            }
            b.append("<button type=\"submit\" class=\"").append(allPaused ? "primary" : "danger").append("\" data-action=\"")
                    .append(allPaused ? "resume" : "pause").append("\">").append(allPaused ? "Resume sending" : "Pause all sending")
                    .append("</button></form>");
        }
        b.append("</div>");

        b.append("<div class=\"tiles\">");
        tile(b, "Waiting", s.counts().getOrDefault("pending", 0L), s.pendingDue() + " due now", "pending");
        tile(b, "Sending now", s.counts().getOrDefault("sending", 0L), null, "sending");
        tile(b, "Failed", s.counts().getOrDefault("failed", 0L), "need a retry or a decision", "failed");
        tile(b, "Needs review", s.counts().getOrDefault("review", 0L), "outcome unknown", "review");
        b.append("<div class=\"tile\"><span class=\"tile-label\">Oldest waiting</span><span class=\"tile-value\">")
                .append(s.oldestPendingAgeSeconds() == null ? "–" : esc(ago(s.oldestPendingAgeSeconds()))).append("</span></div>");
        b.append("</div>");

        b.append("<table class=\"windows\"><thead><tr><th></th><th>Sent</th><th>Failed for good</th><th>Failed, will retry</th>")
                .append("<th>Parked for review</th></tr></thead><tbody>");
        window(b, "Last minute", s.lastMinute());
        window(b, "Last hour", s.lastHour());
        b.append("</tbody></table>");

        b.append("<h2>The last hour</h2>").append(chart(s.perMinute()));
        b.append("<p class=\"legend\"><span class=\"key-depth\"></span> emails waiting <span class=\"key-sent\"></span> sent per minute ")
                .append("<span class=\"key-failed\"></span> failed tries per minute</p>");

        b.append("<h2>Mail providers</h2>");
        if (!s.transportStateKnown()) {
            b.append("<p class=\"muted\" id=\"breakers\">Breaker state: unknown (this process does not run the mail transports).</p>");
        } else if (s.transports().isEmpty()) {
            b.append("<p class=\"muted\" id=\"breakers\">No mail transport is configured.</p>");
        } else {
            b.append("<table class=\"list\" id=\"breakers\"><thead><tr><th>Transport</th><th>Circuit breaker</th></tr></thead><tbody>");
            for (TransportStatus.TransportState t : s.transports()) {
                b.append("<tr><td>").append(esc(t.transport())).append("</td><td>").append(esc(breakerWords(t.breaker())))
                        .append("</td></tr>");
            }
            b.append("</tbody></table>");
        }
        b.append("<p class=\"muted\">Read at ").append(time(s.at())).append(". Reload the page for fresh numbers.</p>");
        return b.toString();
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

    private static void tile(StringBuilder b, String label, long value, String note, String status) {
        b.append("<div class=\"tile t-").append(esc(status)).append("\" data-count=\"").append(esc(status)).append("\">")
                .append("<span class=\"tile-label\">").append(esc(label)).append("</span><span class=\"tile-value\">")
                .append(value).append("</span>");
        if (note != null) {
            b.append("<span class=\"tile-note\">").append(esc(note)).append("</span>");
        }
        b.append("</div>");
    }

    private static void window(StringBuilder b, String label, QueueStats.Window w) {
        b.append("<tr><th>").append(esc(label)).append("</th><td>").append(w.sent()).append("</td><td>").append(w.failed())
                .append("</td><td>").append(w.retried()).append("</td><td>").append(w.review()).append("</td></tr>");
    }

    /**
     * Inline SVG: bars of sent (green) and failed tries (red) per minute on the left scale, the
     * number of emails waiting as a line on the right scale.
     */
    static String chart(List<QueueStats.Minute> minutes) {
        int w = 760;
        int h = 220;
        int left = 44;
        int right = 44;
        int top = 22;
        int bottom = 28;
        int plotW = w - left - right;
        int plotH = h - top - bottom;
        long maxCount = 1;
        long maxDepth = 1;
        for (QueueStats.Minute m : minutes) {
            maxCount = Math.max(maxCount, Math.max(m.sent(), m.failed()));
            maxDepth = Math.max(maxDepth, m.pendingDepth());
        }
        maxCount = niceMax(maxCount);
        maxDepth = niceMax(maxDepth);
        int n = Math.max(1, minutes.size());
        double slot = plotW / (double) n;
        double bar = Math.max(1, (slot - 2) / 2);
        StringBuilder b = new StringBuilder();
        b.append("<svg class=\"chart\" id=\"queue-chart\" viewBox=\"0 0 ").append(w).append(' ').append(h)
                .append("\" role=\"img\" aria-labelledby=\"chart-title\"><title id=\"chart-title\">Emails waiting, sent and failed per minute over the last hour</title>");
        // grid and scales
        for (int i = 0; i <= 4; i++) {
            double y = top + plotH - plotH * i / 4.0;
            b.append("<line class=\"grid\" x1=\"").append(left).append("\" x2=\"").append(left + plotW).append("\" y1=\"")
                    .append(fmt(y)).append("\" y2=\"").append(fmt(y)).append("\"/>");
            b.append("<text class=\"axis\" x=\"").append(left - 6).append("\" y=\"").append(fmt(y + 4)).append("\" text-anchor=\"end\">")
                    .append(maxCount * i / 4).append("</text>");
            b.append("<text class=\"axis depth\" x=\"").append(left + plotW + 6).append("\" y=\"").append(fmt(y + 4)).append("\">")
                    .append(maxDepth * i / 4).append("</text>");
        }
        b.append("<text class=\"axis\" x=\"").append(left).append("\" y=\"").append(top - 10)
                .append("\">sent and failed per minute</text>");
        b.append("<text class=\"axis depth\" x=\"").append(left + plotW).append("\" y=\"").append(top - 10)
                .append("\" text-anchor=\"end\">emails waiting</text>");
        for (int i = 0; i < minutes.size(); i++) {
            QueueStats.Minute m = minutes.get(i);
            double x = left + i * slot + 1;
            double hs = plotH * m.sent() / (double) maxCount;
            double hf = plotH * m.failed() / (double) maxCount;
            if (m.sent() > 0) {
                b.append("<rect class=\"sent\" x=\"").append(fmt(x)).append("\" y=\"").append(fmt(top + plotH - hs)).append("\" width=\"")
                        .append(fmt(bar)).append("\" height=\"").append(fmt(hs)).append("\"><title>").append(m.sent())
                        .append(" sent</title></rect>");
            }
            if (m.failed() > 0) {
                b.append("<rect class=\"failed\" x=\"").append(fmt(x + bar)).append("\" y=\"").append(fmt(top + plotH - hf))
                        .append("\" width=\"").append(fmt(bar)).append("\" height=\"").append(fmt(hf)).append("\"><title>")
                        .append(m.failed()).append(" failed</title></rect>");
            }
        }
        StringBuilder points = new StringBuilder();
        for (int i = 0; i < minutes.size(); i++) {
            double x = left + i * slot + slot / 2;
            double y = top + plotH - plotH * minutes.get(i).pendingDepth() / (double) maxDepth;
            points.append(i == 0 ? "" : " ").append(fmt(x)).append(',').append(fmt(y));
        }
        b.append("<polyline class=\"depth\" points=\"").append(points).append("\"/>");
        b.append("<text class=\"axis\" x=\"").append(left).append("\" y=\"").append(h - 8).append("\">60 min ago</text>");
        b.append("<text class=\"axis\" x=\"").append(left + plotW / 2).append("\" y=\"").append(h - 8).append("\" text-anchor=\"middle\">30 min ago</text>");
        b.append("<text class=\"axis\" x=\"").append(left + plotW).append("\" y=\"").append(h - 8).append("\" text-anchor=\"end\">now</text>");
        b.append("</svg>");
        return b.toString();
    }

    /** The smallest multiple of 4 at or above {@code max}, so the four grid lines carry whole numbers. */
    static long niceMax(long max) {
        long step = Math.max(1, (max + 3) / 4);
        return step * 4;
    }

    private static String fmt(double v) {
        return String.format(Locale.ROOT, "%.1f", v);
    }

    // ------------------------------------------------------------------------------------ errors

    static String error(int status, String message, String parameter) {
        StringBuilder b = new StringBuilder("<section class=\"problem\"><h1>").append(esc(title(status))).append("</h1>");
        b.append("<p class=\"form-error\" role=\"alert\">").append(esc(message)).append("</p>");
        if (parameter != null) {
            b.append("<p class=\"muted\">The field at fault: <code>").append(esc(parameter)).append("</code></p>");
        }
        b.append("<p><a href=\"/console/orders\">Back to the order lookup</a></p></section>");
        return b.toString();
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
}
