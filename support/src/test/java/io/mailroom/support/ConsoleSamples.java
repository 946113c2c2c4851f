package io.mailroom.support;

import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Made-up records for rendering the console's pages without a database: every status, every
 * action, both kinds of history entry, every optional field present, with {@code text} inside
 * every free text (a person's name, a reason, an error, a provider's reply, a subject).
 */
final class ConsoleSamples {

    static final Instant T0 = Instant.parse("2026-03-01T09:15:30Z");

    private final String text;

    ConsoleSamples(String text) {
        this.text = text;
    }

    List<TimelineEntry> timeline() {
        return List.of(
                new TimelineEntry.Attempt(1, T0, T0.plusSeconds(2), "retry", "worker " + text, "421 busy " + text,
                        "smtp", "421", "mid " + text, "421 reply " + text, null),
                new TimelineEntry.Attempt(2, T0.plusSeconds(60), T0.plusSeconds(61), "released", "w2", null,
                        null, null, null, null, "not_attempted"),
                new TimelineEntry.Action(T0.plusSeconds(120), "alice " + text, "SUPPORT", AuditActions.RESEND,
                        "reason " + text, "email-order-7-r1"),
                new TimelineEntry.Action(T0.plusSeconds(180), "bob", "OPERATOR", AuditActions.RETRY, null, null),
                new TimelineEntry.Attempt(3, T0.plusSeconds(200), T0.plusSeconds(201), "done", "w3", null,
                        "http", "202", "prov-7", "250 2.0.0 Ok: queued as Q7", null),
                new TimelineEntry.Delivery(T0.plusSeconds(260), T0.plusSeconds(262), "resend " + text, "bounced", "hard",
                        "email.bounced " + text, "smtp; 550 5.1.1 " + text, "Permanent " + text, true),
                new TimelineEntry.Delivery(T0.plusSeconds(250), T0.plusSeconds(270), "resend", "delivered", null,
                        "email.delivered", null, null, false),
                new TimelineEntry.Delivery(T0.plusSeconds(280), T0.plusSeconds(280), "resend", "unknown", null,
                        "email.opened " + text, null, null, false));
    }

    EmailView email(String key, EmailStatus status, List<String> actions, String main, boolean history) {
        return new EmailView(key, "email.order_confirmation", "Order confirmation " + text, new About("order", "7"),
                "ann@example.com", "Ann " + text, "Subject " + text, status, 3, 10, "last error " + text,
                T0, T0.plusSeconds(300), status == EmailStatus.SENT ? T0.plusSeconds(201) : null,
                status == EmailStatus.PENDING ? T0.plusSeconds(900) : null, "prov " + text, "250 reply " + text,
                "succeeded", true, "email-order-7-r0", List.of("email-order-7-r1", "email-order-7-r2"), actions, main,
                history ? timeline() : null,
                status == EmailStatus.SENT || status == EmailStatus.REVIEW ? rendering(key, status == EmailStatus.SENT) : null,
                status == EmailStatus.SENT ? new Delivery("bounced", "hard bounce: smtp; 550 " + text, T0.plusSeconds(262)) : null);
    }

    /** What the dispatcher stored for a send: hostile text in every field a template prints. */
    Rendering rendering(String key, boolean withHtml) {
        return new Rendering("order_confirmation", "order_confirmation@0123456789abcdef " + text, "vi", "Subject " + text,
                "Text part " + text + "\nsecond line", withHtml, T0.plusSeconds(200), 3,
                withHtml ? "/api/emails/" + key + "/preview" : null);
    }

    /** One email in every status, with the actions that status offers. */
    List<EmailView> everyStatus(boolean history) {
        List<EmailView> out = new ArrayList<>();
        out.add(email("email-order-7-failed", EmailStatus.FAILED, List.of(EmailView.CLOSE, EmailView.RETRY), EmailView.CLOSE, history));
        out.add(email("email-order-7-pending", EmailStatus.PENDING, List.of(EmailView.RETRY, EmailView.CANCEL), EmailView.RETRY, history));
        out.add(email("email-order-7-review", EmailStatus.REVIEW,
                List.of(EmailView.CONFIRM_SENT, EmailView.RESEND, EmailView.CLOSE), EmailView.CONFIRM_SENT, history));
        out.add(email("email-order-7-sent", EmailStatus.SENT, List.of(EmailView.RESEND), null, history));
        out.add(email("email-order-7-sending", EmailStatus.SENDING, List.of(), null, history));
        out.add(email("email-order-7-cancelled", EmailStatus.CANCELLED, List.of(), null, history));
        out.add(email("email-order-7-closed", EmailStatus.CLOSED, List.of(), null, history));
        // nothing known and nothing happened yet
        out.add(new EmailView("email-order-7-bare", "email.x", "Something", new About("user", "7"), null, null, null, EmailStatus.PENDING,
                0, 5, null, T0, T0, null, null, null, null, null, false, null, List.of(), List.of(), null, List.of(), null, null));
        return out;
    }

    OrphanEvent orphan() {
        return new OrphanEvent(9, "resend", "msg_1", T0, T0, "bounced", "hard", "email.bounced", "prov " + text,
                "x@example.com", "orphan " + text);
    }

    /** An active entry caused by a bounce and a lifted one added by hand, hostile text in every free field. */
    List<SuppressionView> suppressions() {
        return List.of(
                new SuppressionView(2, "ann@example.com", "hard_bounce", "detail " + text, 5L, T0, "event:resend", null, null, null),
                new SuppressionView(1, "bo@example.com", "manual", "asked " + text, null, T0, "alice " + text,
                        T0.plusSeconds(60), "bob " + text, "lift " + text));
    }

    QueueStats stats(boolean transportsKnown, List<TransportStatus.TransportState> transports) {
        Map<String, Long> counts = new LinkedHashMap<>();
        counts.put("pending", 12L);
        counts.put("failed", 3L);
        List<QueueStats.Minute> minutes = new ArrayList<>();
        for (int i = 0; i < 60; i++) {
            minutes.add(new QueueStats.Minute(T0.plusSeconds(60L * i), i % 7, i % 3, i % 5 == 0 ? 1 : 0));
        }
        return new QueueStats(T0, counts, 4, T0.minusSeconds(4000), 4000L, new QueueStats.Window(1, 2, 3, 4),
                new QueueStats.Window(10, 20, 30, 40), minutes, List.of(), transports, transportsKnown);
    }

    /** Two topics over a range: one busy (a hostile name), one with a gap in its samples. */
    TopicStats topics(ChartRange range) {
        Instant from = T0;
        List<TopicStats.Bucket> busy = new ArrayList<>();
        List<TopicStats.Bucket> gappy = new ArrayList<>();
        for (int i = 0; i < range.buckets(); i++) {
            Instant start = from.plus(range.step().multipliedBy(i));
            busy.add(new TopicStats.Bucket(start, i % 9, i % 4, i % 8 == 0 ? 1 : 0, i % 6 == 0 ? 2 : 0, (long) (i % 11)));
            gappy.add(new TopicStats.Bucket(start, i % 2, 0, 0, 0, i % 10 < 5 ? null : (long) i % 3));
        }
        return new TopicStats(range, from, from.plus(range.step().multipliedBy(range.buckets())), range.step().toSeconds(),
                T0, T0, List.of(new TopicStats.Topic("email.shipped " + text, 100, 20, 5, 3L, busy),
                new TopicStats.Topic("email.welcome", 30, 0, 0, null, gappy)));
    }

    ControlState paused() {
        return new ControlState(List.of(new ControlState.Switch("*", true, "pause " + text, "olga " + text, T0)));
    }

    ControlState topicPaused() {
        return new ControlState(List.of(new ControlState.Switch("*", false, null, "olga", T0),
                new ControlState.Switch("email.shipped " + text, true, null, "olga", T0)));
    }

    /** Two dispatchers (one live, one not heard from), topics running, paused and unserved; everything paused or not. */
    DispatcherList dispatchers(boolean allPaused) {
        var live = new DispatcherList.DispatcherView("worker " + text, "host " + text, "1.0 " + text, T0, T0.plusSeconds(50),
                T0.plusSeconds(110), true, 7, List.of(new TransportStatus.TransportState("smtp " + text, "closed"),
                new TransportStatus.TransportState("http", "open")), List.of("email.order_confirmation", "email.shipped " + text));
        var dead = new DispatcherList.DispatcherView("old-worker", "old-host", "0.9", T0.minusSeconds(7200), T0.minusSeconds(3600),
                T0.minusSeconds(3540), false, 0, List.of(), List.of("email.password_reset"));
        ControlState.Switch topicPause = new ControlState.Switch("email.shipped " + text, true, "pause " + text, "olga " + text, T0);
        ControlState.Switch all = allPaused ? new ControlState.Switch("*", true, "all " + text, "olga " + text, T0) : null;
        Map<String, Long> unserved = Map.of("email.password_reset", 4L);
        return new DispatcherList(T0.plusSeconds(60), List.of(live, dead), unserved, List.of(
                new DispatcherList.Topic("email.order_confirmation", 1, null, null),
                new DispatcherList.Topic("email.password_reset", 0, null, 4L),
                new DispatcherList.Topic("email.shipped " + text, 1, topicPause, null)), all);
    }
}
