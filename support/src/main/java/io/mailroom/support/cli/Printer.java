package io.mailroom.support.cli;

import io.mailroom.support.ActionResult;
import io.mailroom.support.ControlState;
import io.mailroom.support.DispatcherList;
import io.mailroom.support.EmailPage;
import io.mailroom.support.EmailView;
import io.mailroom.support.AboutEmails;
import io.mailroom.support.QueueStats;
import io.mailroom.support.Rendering;
import io.mailroom.support.TimelineEntry;
import io.mailroom.support.TransportStatus;

import java.io.PrintWriter;
import java.time.Instant;
import java.time.ZoneId;
import java.time.format.DateTimeFormatter;
import java.util.List;
import java.util.Locale;

/** Human-readable output of the support commands: tables and short timelines, times in the local zone. */
final class Printer {

    private static final DateTimeFormatter TIME = DateTimeFormatter.ofPattern("yyyy-MM-dd HH:mm:ss z", Locale.ROOT)
            .withZone(ZoneId.systemDefault());

    private Printer() {
    }

    static String time(Instant t) {
        return t == null ? null : TIME.format(t);
    }

    /** Wide enough for "scheduled 2026-12-24 09:00:00 UTC". */
    private static final int STATUS_WIDTH = 40;

    /** The status in a table: its code, and a scheduled email's send time. */
    static String status(EmailView e) {
        return e.sendAt() == null ? e.status().code() : e.status().code() + " " + time(e.sendAt());
    }

    static void about(PrintWriter out, AboutEmails order) {
        int n = order.emails().size();
        out.println(order.about().label() + ": " + (n == 0 ? "no emails" : n == 1 ? "1 email" : n + " emails"));
        if (n == 0) {
            return;
        }
        Table t = new Table(List.of("KEY", "KIND", "STATUS", "ATTEMPTS", "TO", "SENT", "PROVIDER ID", "LAST ERROR"),
                60, 30, STATUS_WIDTH, 9, 40, 24, 40, 60);
        for (EmailView e : order.emails()) {
            t.row(e.key(), e.kind(), status(e), e.attempts() + "/" + e.maxAttempts(), e.recipient(), time(e.sentAt()),
                    e.providerMessageId(), e.status() == io.mailroom.support.EmailStatus.SENT ? null : e.lastError());
        }
        t.print(out);
        for (EmailView e : order.emails()) {
            out.println();
            if (e.rendering() != null) {
                Rendering r = e.rendering();
                out.println("Sent as " + e.key() + ": " + template(r));
                out.println("  subject: " + Table.cell(r.subject(), 200));
            }
            timeline(out, e);
        }
        if (order.truncated()) {
            out.println();
            out.println("(only the first " + n + " emails are shown)");
        }
    }

    static void email(PrintWriter out, EmailView e) {
        out.println(e.key() + "  " + e.kind() + "  about " + e.about().label());
        out.println("  status:      " + e.status().code() + " (" + e.status().words() + ")");
        out.println("  arrived?     " + Table.cell(e.arrivalText(), 300));
        out.println("  to:          " + Table.cell(e.recipient(), 200));
        if (e.recipients() != null && e.recipients().size() > 1) {
            for (var rcpt : e.recipients()) {
                out.println("    " + String.format("%-4s", rcpt.role()) + " " + Table.cell(rcpt.address(), 200) + "  "
                        + rcpt.deliveryText() + (rcpt.suppressed() && rcpt.deliveryState() != null ? "; suppressed now" : ""));
            }
        }
        if (e.tags() != null && !e.tags().isEmpty()) {
            out.println("  tags:        " + Table.cell(e.tags().entrySet().stream().map(t -> t.getKey() + "=" + t.getValue())
                    .collect(java.util.stream.Collectors.joining(" ")), 300));
        }
        if (e.suppression() != null) {
            out.println("  suppressed:  " + e.suppression().reasonText() + " since " + time(e.suppression().since())
                    + " (support suppressions " + Table.cell(e.suppression().address(), 200) + ")"
                    + (e.suppression().blocksRetry() ? "; lift it before retrying" : ""));
        }
        Rendering r = e.rendering();
        if (r != null) {
            out.println("  template:    " + template(r));
            out.println("  subject:     " + Table.cell(r.subject(), 200));
        } else if (e.subject() != null) {
            out.println("  subject:     " + Table.cell(e.subject(), 200));
        }
        out.println("  attempts:    " + e.attempts() + " of " + e.maxAttempts());
        out.println("  queued:      " + time(e.createdAt()));
        if (e.sentAt() != null) {
            out.println("  sent:        " + time(e.sentAt()));
        }
        if (e.sendAt() != null) {
            out.println("  send at:     " + time(e.sendAt()) + " (support reschedule / cancel until then)");
        } else if (e.nextAttemptAt() != null) {
            out.println("  next try:    " + time(e.nextAttemptAt()));
        }
        if (e.providerMessageId() != null) {
            out.println("  provider id: " + Table.cell(e.providerMessageId(), 200));
        }
        if (e.providerReply() != null) {
            out.println("  reply:       " + Table.cell(e.providerReply(), 200));
        }
        if (e.lastError() != null && e.status() != io.mailroom.support.EmailStatus.SENT) {
            out.println("  last error:  " + Table.cell(e.lastError(), 300));
        }
        if (e.resendOf() != null) {
            out.println("  resend of:   " + e.resendOf());
        }
        if (!e.resentAs().isEmpty()) {
            out.println("  resent as:   " + String.join(", ", e.resentAs()));
        }
        if (!e.actions().isEmpty()) {
            out.println("  can do:      " + String.join(", ", e.actions()));
        }
        out.println();
        timeline(out, e);
    }

    /** "greeting, version greeting@1f2e…, locale vi (attempt 2, 2026-12-03 10:00:00 UTC)". */
    static String template(Rendering r) {
        return Table.cell(r.templateName(), 200) + ", version " + Table.cell(r.version(), 100)
                + ", locale " + Table.cell(r.locale(), 100) + " (attempt " + r.attempt() + ", " + time(r.renderedAt()) + ")";
    }

    /** The text part as it was sent, between two rulers; control characters other than line breaks and tabs become spaces. */
    static void text(PrintWriter out, EmailView e) {
        if (e.rendering() == null) {
            out.println("(no rendering of " + e.key() + " is stored: it has not been sent yet, or was sent before renderings were kept)");
            return;
        }
        out.println("----- text part of " + e.key() + " -----");
        String text = e.rendering().text().replace("\r\n", "\n");
        StringBuilder b = new StringBuilder(text.length());
        for (int i = 0; i < text.length(); i++) {
            char c = text.charAt(i);
            b.append(c == '\n' || c == '\t' || !Character.isISOControl(c) ? c : ' ');
        }
        out.print(b);
        if (!text.endsWith("\n")) {
            out.println();
        }
        out.println("----- end of text part -----");
    }

    static void timeline(PrintWriter out, EmailView e) {
        out.println("History of " + e.key() + " (" + e.status().code() + "):");
        if (e.timeline() == null || e.timeline().isEmpty()) {
            out.println("  (no attempt yet)");
            return;
        }
        for (TimelineEntry entry : e.timeline()) {
            switch (entry) {
                case TimelineEntry.Attempt a -> {
                    StringBuilder line = new StringBuilder("  ").append(time(a.finishedAt())).append("  attempt ")
                            .append(a.attempt()).append(": ").append(a.outcomeText());
                    if (a.providerStatus() != null) {
                        line.append(" [provider ").append(Table.cell(a.providerStatus(), 40)).append(']');
                    }
                    if (a.providerMessageId() != null) {
                        line.append(" [id ").append(Table.cell(a.providerMessageId(), 120)).append(']');
                    }
                    if (a.providerReply() != null) {
                        line.append(" [reply ").append(Table.cell(a.providerReply(), 200)).append(']');
                    }
                    if (a.error() != null) {
                        line.append(" - ").append(Table.cell(a.error(), 300));
                    }
                    out.println(line);
                }
                case TimelineEntry.Action a -> {
                    StringBuilder line = new StringBuilder("  ").append(time(a.at())).append("  ").append(a.actionText());
                    if (a.reason() != null) {
                        line.append(": \"").append(Table.cell(a.reason(), 300)).append('"');
                    }
                    out.println(line);
                }
                case TimelineEntry.Delivery d -> {
                    StringBuilder line = new StringBuilder("  ").append(time(d.at())).append("  ").append(d.deliveryText())
                            .append(" [").append(Table.cell(d.source(), 40)).append(' ').append(Table.cell(d.providerEvent(), 80)).append(']');
                    if (d.diagnosticCode() != null) {
                        line.append(" - ").append(Table.cell(d.diagnosticCode(), 300));
                    }
                    out.println(line);
                }
            }
        }
    }

    static void search(PrintWriter out, io.mailroom.support.SearchPage page) {
        if (page.emails().isEmpty()) {
            out.println("No email matches" + (page.nextCursor() == null ? "." : " in the emails read so far."));
        } else {
            Table t = new Table(List.of("KEY", "ABOUT", "STATUS", "TO", "QUEUED", "LAST ERROR"), 60, 24, STATUS_WIDTH, 40, 24, 70);
            for (EmailView e : page.emails()) {
                t.row(e.key(), e.about().label(), status(e), e.recipient(), time(e.createdAt()),
                        e.status() == io.mailroom.support.EmailStatus.SENT ? null : e.lastError());
            }
            t.print(out);
        }
        if (page.nextCursor() != null) {
            out.println("More: add --cursor " + page.nextCursor());
        }
    }

    static void page(PrintWriter out, EmailPage page) {
        if (page.emails().isEmpty()) {
            out.println("No " + page.status().code() + " emails.");
            return;
        }
        Table t = new Table(List.of("KEY", "ABOUT", "STATUS", "ATTEMPTS", "TO", "CHANGED", "LAST ERROR"),
                60, 20, STATUS_WIDTH, 9, 40, 24, 70);
        for (EmailView e : page.emails()) {
            t.row(e.key(), e.about().label(), status(e), e.attempts() + "/" + e.maxAttempts(), e.recipient(),
                    time(e.updatedAt()), e.status() == io.mailroom.support.EmailStatus.SENT ? null : e.lastError());
        }
        t.print(out);
        if (page.nextCursor() != null) {
            out.println();
            out.println("More: add --cursor " + page.nextCursor());
        }
    }

    static void applied(PrintWriter out, ActionResult.Applied a, String key) {
        String k = key.strip();
        EmailView e = a.email();
        String now = e == null ? "" : "; it is now " + e.status().code() + " (" + e.status().words().toLowerCase(Locale.ROOT) + ")";
        switch (a.action()) {
            case "resend" -> out.println("Resent " + k + " as " + a.newKey() + now);
            case "retry" -> out.println("Retry of " + k + " requested" + now);
            case "confirm_sent" -> out.println("Confirmed " + k + " as sent" + now);
            case "cancel" -> out.println("Cancelled " + k + now);
            case "reschedule" -> out.println("Rescheduled " + k + now
                    + (e != null && e.sendAt() != null ? ": it goes at " + time(e.sendAt()) : ""));
            case "close" -> out.println("Closed " + k + " (won't send)" + now);
            default -> out.println(a.action() + " " + k + now);
        }
    }

    static void stats(PrintWriter out, QueueStats s) {
        out.println("Queue at " + time(s.at()));
        out.println("  waiting         " + s.counts().getOrDefault("pending", 0L) + " (" + s.pendingDue() + " due now)");
        out.println("  sending now     " + s.counts().getOrDefault("sending", 0L));
        out.println("  failed          " + s.counts().getOrDefault("failed", 0L));
        out.println("  needs review    " + s.counts().getOrDefault("review", 0L));
        out.println("  oldest waiting  " + (s.oldestPendingAgeSeconds() == null ? "-" : s.oldestPendingAgeSeconds() + " s (since "
                + time(s.oldestPendingSince()) + ")"));
        out.println();
        Table t = new Table(List.of("", "SENT", "FAILED", "RETRIED", "REVIEW"), 12, 8, 8, 8, 8);
        t.row("last minute", s.lastMinute().sent(), s.lastMinute().failed(), s.lastMinute().retried(), s.lastMinute().review());
        t.row("last hour", s.lastHour().sent(), s.lastHour().failed(), s.lastHour().retried(), s.lastHour().review());
        t.print(out);
        out.println();
        out.println("Dispatching: " + (s.paused().isEmpty() ? "running" : "PAUSED for " + String.join(", ", s.paused())));
        if (!s.transportStateKnown()) {
            out.println("Breakers: unknown (not reported by this process)");
        } else {
            for (TransportStatus.TransportState ts : s.transports()) {
                out.println("Breaker " + ts.transport() + ": " + ts.breaker());
            }
        }
    }

    static void control(PrintWriter out, ControlState state) {
        List<String> paused = state.pausedScopes();
        out.println("Dispatching: " + (paused.isEmpty() ? "running" : "PAUSED for " + String.join(", ", paused)));
        for (ControlState.Switch s : state.switches()) {
            out.println("  " + s.scope() + "  " + (s.paused() ? "paused" : "running") + "  by " + s.updatedBy() + " at "
                    + time(s.updatedAt()) + (s.reason() == null ? "" : "  \"" + Table.cell(s.reason(), 200) + "\""));
        }
    }

    /** Every dispatcher, live ones first, then the topics that are paused or that no live dispatcher serves. */
    static void dispatchers(PrintWriter out, DispatcherList list) {
        out.println("Dispatchers at " + time(list.at()) + ": " + list.liveCount() + " live of " + list.dispatchers().size());
        if (!list.dispatchers().isEmpty()) {
            Table t = new Table(List.of("WORKER", "STATE", "HOST", "VERSION", "STARTED", "LAST HEARTBEAT", "IN FLIGHT", "BREAKERS",
                    "TOPICS"), 60, 8, 40, 20, 24, 24, 9, 50, 80);
            for (DispatcherList.DispatcherView d : list.dispatchers()) {
                t.row(d.workerId(), d.live() ? "live" : "NOT LIVE", d.host(), d.version(), time(d.startedAt()), time(d.lastHeartbeatAt()),
                        d.claimsInFlight(), d.transports().isEmpty() ? null : String.join(", ", d.transports().stream()
                                .map(b -> b.transport() + " " + b.breaker()).toList()), String.join(", ", d.topics()));
            }
            t.print(out);
        }
        if (list.pausedAll() != null) {
            out.println("All sending is PAUSED by " + list.pausedAll().updatedBy() + " at " + time(list.pausedAll().updatedAt())
                    + (list.pausedAll().reason() == null ? "" : "  \"" + Table.cell(list.pausedAll().reason(), 200) + "\""));
        }
        for (DispatcherList.Topic topic : list.topics()) {
            if (topic.pause() != null) {
                out.println("Topic " + topic.topic() + " is PAUSED by " + topic.pause().updatedBy() + " at " + time(topic.pause().updatedAt())
                        + (topic.pause().reason() == null ? "" : "  \"" + Table.cell(topic.pause().reason(), 200) + "\"")
                        + "; resume it with: support resume --scope " + topic.topic());
            }
        }
        list.unservedTopics().forEach((topic, waiting) -> out.println("UNSERVED: " + waiting + " emails wait on topic " + topic
                + " and no live dispatcher serves it"));
    }
}
