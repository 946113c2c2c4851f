package io.mailroom.support;

import io.javalin.config.JavalinConfig;
import io.javalin.http.Context;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.io.InputStream;
import java.time.Instant;
import java.util.List;
import java.util.Locale;
import java.util.Map;

import static io.mailroom.support.ConsolePages.url;

/**
 * The web console's pages: server-rendered, behind the sign-in and form checks of
 * {@link ConsoleSecurity}. Actions follow post/redirect/get: the result is shown once, as a
 * message on the page the person came from, and a form sends the person back only to a console
 * page. Each page accepts only the query parameters {@link #QUERY} names.
 */
final class ConsoleRoutes {

    private static final Logger log = LoggerFactory.getLogger(ConsoleRoutes.class);

    static final String HOME = "/console/about";
    private static final Map<String, String> ASSETS = Map.of(
            "app.css", "text/css; charset=utf-8",
            "app.js", "text/javascript; charset=utf-8");

    /** A 303 to {@code location}, raised from a handler or the access check. */
    static final class Redirect extends RuntimeException {
        private final String location;

        Redirect(String location) {
            super(location, null, false, false);
            this.location = location;
        }

        String location() {
            return location;
        }
    }

    /**
     * The query parameters each page reads, by "METHOD path" as registered; a route not named here
     * reads none. Any other parameter is refused with an error page (400) before the page runs.
     */
    static final Map<String, java.util.Set<String>> QUERY = Map.of(
            "GET /console/login", java.util.Set.of("next"),
            "GET /console/orders", java.util.Set.of(SupportParams.ORDER_ID),
            "GET /console/about", java.util.Set.of(SupportParams.ABOUT_TYPE, SupportParams.ABOUT_ID),
            "GET /console/emails", EmailSearch.PARAMETERS,
            "GET /console/suggestions", java.util.Set.of("field", "prefix"),
            "GET /console/bulk/confirm", BulkRoutes.CONFIRM_QUERY,
            "GET /console/delivery", java.util.Set.of(SupportParams.DELIVERY, SupportParams.CURSOR, SupportParams.LIMIT),
            "GET /console/queue", java.util.Set.of(SupportParams.RANGE),
            "GET /console/captured", CapturedRoutes.LIST_QUERY,
            "GET /console/suppressions", java.util.Set.of(SupportParams.ADDRESS, SupportParams.LIFTED, SupportParams.BEFORE,
                    SupportParams.LIMIT));

    private final SupportService service;
    private final ConsolePages pages;
    private final ConsoleSecurity security;

    ConsoleRoutes(SupportService service, Authenticator auth, Sessions sessions, SupportConfig config, ConsolePages pages) {
        this.service = service;
        this.pages = pages;
        this.security = new ConsoleSecurity(auth, sessions, config, pages);
    }

    void register(JavalinConfig c) {
        c.routes.get("/", ctx -> {
            throw new Redirect(HOME);
        });
        c.routes.get("/console", ctx -> {
            throw new Redirect(HOME);
        });
        c.routes.get("/console/", ctx -> {
            throw new Redirect(HOME);
        });
        c.routes.get("/console/assets/{file}", this::asset);
        c.routes.get("/console/login", security::loginForm);
        c.routes.post("/console/login", security::login);
        c.routes.post("/console/logout", security::logout, Role.VIEWER);
        c.routes.get("/console/about", this::about, Role.VIEWER);
        c.routes.get("/console/orders", this::orders, Role.VIEWER);
        c.routes.get("/console/emails", this::list, Role.VIEWER);
        c.routes.get("/console/suggestions", this::suggestions, Role.VIEWER);
        c.routes.get("/console/emails/{key}", this::email, Role.VIEWER);
        c.routes.get("/console/emails/{key}/preview", ctx -> HtmlPreview.serve(ctx, service), Role.VIEWER);
        c.routes.post("/console/emails/{key}/{action}", this::act, Role.SUPPORT);
        c.routes.get("/console/queue", this::queue, Role.VIEWER);
        c.routes.get("/console/dispatchers", ctx -> page(ctx, pages.dispatchersPage(viewer(ctx), flash(ctx), service.dispatchers())),
                Role.VIEWER);
        c.routes.get("/console/delivery", this::delivery, Role.VIEWER);
        c.routes.get("/console/suppressions", this::suppressions, Role.VIEWER);
        c.routes.post("/console/suppressions/{action}", this::suppressionAction, Role.SUPPORT);
        c.routes.get("/console/erase", ctx -> page(ctx, pages.erasePage(viewer(ctx), flash(ctx))), Role.SUPPORT);
        c.routes.post("/console/erase", this::erase, Role.SUPPORT);
        c.routes.post("/console/control/{action}", this::control, Role.OPERATOR);
    }

    // ------------------------------------------------------------------------------- sessions

    /** The signed-in session, or: a GET goes to the sign-in page, anything else gets 401. */
    Sessions.Session requireSession(Context ctx) {
        return security.requireSession(ctx);
    }

    /** Both CSRF checks of a signed-in form post: same origin, and the session's token. */
    void checkCsrf(Context ctx, Sessions.Session session) {
        security.checkCsrf(ctx, session);
    }

    // ---------------------------------------------------------------------------------- pages

    ConsolePages.Viewer viewer(Context ctx) {
        Sessions.Session s = ctx.attribute(SupportServer.SESSION);
        return new ConsolePages.Viewer(s.actor, s.csrfToken);
    }

    /** The message for this page, taken once; a live refresh of a page ({@link #isRefresh}) leaves it for the next page. */
    Sessions.Flash flash(Context ctx) {
        Sessions.Session s = ctx.attribute(SupportServer.SESSION);
        return isRefresh(ctx) ? null : s.takeFlash();
    }

    /** The header app.js sends when it fetches the open page again to refresh its live parts. */
    static final String REFRESH_HEADER = "X-Mailroom-Refresh";

    /** A live refresh by app.js rather than a person opening the page. */
    static boolean isRefresh(Context ctx) {
        return "1".equals(ctx.header(REFRESH_HEADER));
    }

    private void about(Context ctx) {
        String type = ctx.queryParam(SupportParams.ABOUT_TYPE);
        String id = ctx.queryParam(SupportParams.ABOUT_ID);
        List<String> types = service.aboutTypes();
        if ((type == null || type.isBlank()) && (id == null || id.isBlank())) {
            page(ctx, pages.aboutPage(viewer(ctx), flash(ctx), null, null, types, null));
            return;
        }
        AboutEmails emails = service.emailsAbout(type, id);
        page(ctx, pages.aboutPage(viewer(ctx), flash(ctx), type, id, types, emails));
    }

    /** The order lookup of earlier versions (bookmarks, links in tickets): the lookup by entity of type order. */
    private void orders(Context ctx) {
        String raw = ctx.queryParam(SupportParams.ORDER_ID);
        if (raw == null || raw.isBlank()) {
            throw new Redirect(HOME + "?" + SupportParams.ABOUT_TYPE + "=" + SupportStore.ORDER);
        }
        throw new Redirect(new About(SupportStore.ORDER, Params.orderId(SupportParams.ORDER_ID, raw)).consoleUrl());
    }

    private void email(Context ctx) {
        String key = ctx.pathParam("key");
        EmailView e = service.email(key).orElseThrow(() -> HttpFailure.notFound("no email with key " + key, SupportParams.KEY));
        page(ctx, pages.emailPage(viewer(ctx), flash(ctx), e));
    }

    /** The console path of an email's HTML preview, for {@code <iframe sandbox src=...>}. */
    static String previewPath(String key) {
        return "/console/emails/" + url(key) + "/preview";
    }

    private void list(Context ctx) {
        EmailSearch search = EmailSearch.parse(ctx::queryParam, Instant.now());
        if (search.hasFilter() || search.status() == null) {
            search(ctx, search);
            return;
        }
        String status = ctx.queryParam(SupportParams.STATUS);
        String since = ctx.queryParam(SupportParams.SINCE);
        String olderThan = ctx.queryParam(SupportParams.OLDER_THAN);
        EmailFilter filter = Params.filter(status, since, ctx.queryParam(SupportParams.UNTIL), olderThan,
                ctx.queryParam(SupportParams.CURSOR), ctx.queryParam(SupportParams.LIMIT), Instant.now());
        EmailPage result = service.emails(filter);
        String base = "/console/emails?status=" + url(filter.status().code())
                + (since == null || since.isBlank() ? "" : "&since=" + url(since.trim()))
                + (olderThan == null || olderThan.isBlank() ? "" : "&olderThan=" + url(olderThan.trim()));
        String next = result.nextCursor() == null ? null : base + "&cursor=" + url(result.nextCursor());
        String back = ctx.queryString() == null ? base : "/console/emails?" + ctx.queryString();
        page(ctx, pages.listPage(viewer(ctx), flash(ctx), new ConsolePages.ListInput(status, since, olderThan), result, next,
                ConsoleSecurity.safeLocal(back, base)));
    }

    /** The search page: the form with what was typed, and a page of what matches. */
    private void search(Context ctx, EmailSearch search) {
        SearchPage result = service.search(search);
        StringBuilder base = new StringBuilder("/console/emails?");
        search.parameters().forEach((k, v) -> base.append(url(k)).append('=').append(url(v)).append('&'));
        String next = result.nextCursor() == null ? null : base + "cursor=" + url(result.nextCursor());
        String self = base.substring(0, base.length() - 1);
        String back = ctx.queryString() == null ? self : "/console/emails?" + ctx.queryString();
        page(ctx, pages.searchPage(viewer(ctx), flash(ctx), SearchModel.of(SearchModel.input(ctx::queryParam), search, result,
                service.suggestions(SupportParams.TOPIC, ""), service.suggestions(SupportParams.TEMPLATE, ""), next,
                ConsoleSecurity.safeLocal(back, self))));
    }

    /** Autocomplete for the search form (app.js): {@code {"values": [...]}}. */
    private void suggestions(Context ctx) {
        ctx.json(Map.of("values", service.suggestions(ctx.queryParam("field"), ctx.queryParam("prefix"))));
    }

    private void delivery(Context ctx) {
        String which = ctx.queryParam(SupportParams.DELIVERY);
        DeliveryPage result = service.emailsByDelivery(which, ctx.queryParam(SupportParams.CURSOR), ctx.queryParam(SupportParams.LIMIT));
        Actor actor = SupportServer.actor(ctx);
        List<OrphanEvent> orphans = actor.role().includes(Role.OPERATOR) ? service.orphanEvents(actor, null, null) : null;
        String next = result.nextCursor() == null ? null
                : "/console/delivery?delivery=" + url(result.delivery()) + "&cursor=" + url(result.nextCursor());
        page(ctx, pages.deliveryPage(viewer(ctx), flash(ctx), result, orphans, next));
    }

    private void suppressions(Context ctx) {
        String address = ctx.queryParam(SupportParams.ADDRESS);
        boolean lifted = "true".equals(ctx.queryParam(SupportParams.LIFTED));
        List<SuppressionView> entries = service.suppressions(address, lifted, ctx.queryParam(SupportParams.BEFORE),
                ctx.queryParam(SupportParams.LIMIT));
        String next = entries.size() < SupportService.DEFAULT_PAGE_SIZE ? null
                : "/console/suppressions?" + (address == null ? "" : "address=" + url(address) + "&") + (lifted ? "lifted=true&" : "")
                + "before=" + entries.getLast().id();
        page(ctx, pages.suppressionsPage(viewer(ctx), flash(ctx), entries, address, lifted, next));
    }

    private void suppressionAction(Context ctx) {
        Actor actor = SupportServer.actor(ctx);
        Sessions.Session session = ctx.attribute(SupportServer.SESSION);
        String address = ctx.formParam(SupportParams.ADDRESS);
        String reason = ctx.formParam(SupportParams.REASON);
        switch (ctx.pathParam("action")) {
            case "add" -> {
                SuppressionView added = service.suppress(actor, address, reason);
                session.flash(added.address() + " is suppressed: no email will be sent to it until the suppression is lifted.", false);
            }
            case "lift" -> {
                List<SuppressionView> lifted = service.liftSuppression(actor, address, reason);
                session.flash("Lifted " + lifted.size() + " suppression(s) of " + lifted.getFirst().address()
                        + ": the next email to it goes out.", false);
            }
            default -> throw HttpFailure.notFound("there is no such action", "action");
        }
        throw new Redirect("/console/suppressions");
    }

    /** An erasure, once the person ticked that it cannot be undone; the outcome comes back as the flash. */
    private void erase(Context ctx) {
        if (!"erase".equals(ctx.formParam("confirm"))) {
            throw new InvalidParameterException("confirm", "tick the box to confirm the erasure: it cannot be undone");
        }
        Sessions.Session session = ctx.attribute(SupportServer.SESSION);
        ErasureResult r = service.erase(SupportServer.actor(ctx), ctx.formParam(SupportParams.ADDRESS),
                ctx.formParam(SupportParams.REASON));
        session.flash(r.summary(), false);
        throw new Redirect("/console/erase");
    }

    private void queue(Context ctx) {
        QueueStats stats = service.stats();
        ControlState control = service.control();
        java.util.Map<String, Long> unserved = service.unservedTopics();
        TopicStats topics = service.topicStats(ctx.queryParam(SupportParams.RANGE));
        // the flash is taken once the page can be shown: a failure above keeps it for the next page
        page(ctx, pages.queuePage(viewer(ctx), flash(ctx), stats, control, unserved, topics));
    }

    private void act(Context ctx) {
        Actor actor = SupportServer.actor(ctx);
        Sessions.Session session = ctx.attribute(SupportServer.SESSION);
        String key = ctx.pathParam("key");
        String reason = ctx.formParam(SupportParams.REASON);
        ActionResult result = switch (ctx.pathParam("action")) {
            case EmailView.RETRY -> service.retry(actor, key, reason);
            case EmailView.RESEND -> service.resend(actor, key, reason);
            case EmailView.CONFIRM_SENT -> service.confirmSent(actor, key, ctx.formParam(SupportParams.PROVIDER_MESSAGE_ID), reason);
            case EmailView.CANCEL -> service.cancel(actor, key, reason);
            case EmailView.RESCHEDULE -> service.reschedule(actor, key, ctx.formParam(ScheduleActions.SEND_AT), reason);
            case EmailView.CLOSE -> service.close(actor, key, reason);
            default -> throw HttpFailure.notFound("there is no such action", "action");
        };
        String k = Params.key(SupportParams.KEY, key);
        switch (result) {
            case ActionResult.Applied a -> session.flash(switch (a.action()) {
                case AuditActions.RETRY -> "Retry requested for " + k + ". It goes out within a few seconds.";
                case AuditActions.RESEND -> "A new email " + a.newKey() + " was queued; it goes out within a few seconds.";
                case AuditActions.CONFIRM_SENT -> k + " is now recorded as sent.";
                case AuditActions.CANCEL -> k + " was cancelled; it will not be sent.";
                case AuditActions.RESCHEDULE -> a.email() != null && a.email().sendAt() != null
                        ? k + " was rescheduled; it goes out at " + a.email().sendAt() + "."
                        : k + " was rescheduled to now; it goes out within a few seconds.";
                case AuditActions.CLOSE -> k + " is closed; it will not be sent.";
                default -> "Done.";
            }, false);
            case ActionResult.Busy b -> session.flash("A dispatcher is working on " + k
                    + " right now, so nothing was changed. Try again in a moment.", true);
            case ActionResult.NotFound n -> session.flash(capitalize(n.message()) + ".", true);
            case ActionResult.NotAllowed n -> session.flash(capitalize(n.message()) + ".", true);
        }
        throw new Redirect(ConsoleSecurity.safeLocal(ctx.formParam("back"), "/console/emails/" + url(k)));
    }

    /**
     * Pauses or resumes sending of a scope (everything, or one topic) and goes back to the page the
     * form came from. A pause from the console needs a reason: the others see it beside the switch.
     */
    private void control(Context ctx) {
        Actor actor = SupportServer.actor(ctx);
        Sessions.Session session = ctx.attribute(SupportServer.SESSION);
        String scope = ctx.formParam(SupportParams.SCOPE);
        String reason = ctx.formParam(SupportParams.REASON);
        boolean all = scope == null || scope.isBlank() || scope.strip().equals("*");
        String what = all ? "Sending" : "Sending of " + scope.strip();
        switch (ctx.pathParam("action")) {
            case "pause" -> {
                if (reason == null || reason.isBlank()) {
                    throw new InvalidParameterException(SupportParams.REASON, "say why sending is paused: the others see the reason");
                }
                service.pause(actor, scope, reason);
                session.flash(what + " is paused. Every dispatcher stops taking new emails"
                        + (all ? "" : " of this topic") + " within a few seconds.", false);
            }
            case "resume" -> {
                service.resume(actor, scope, reason);
                session.flash(what + " is running again.", false);
            }
            default -> throw HttpFailure.notFound("there is no such action", "action");
        }
        throw new Redirect(ConsoleSecurity.safeLocal(ctx.formParam("back"), "/console/queue"));
    }

    private void asset(Context ctx) throws IOException {
        String file = ctx.pathParam("file");
        String type = ASSETS.get(file);
        if (type == null) {
            throw HttpFailure.notFound("no such file", null);
        }
        try (InputStream in = ConsoleRoutes.class.getResourceAsStream("console/" + file)) {
            if (in == null) {
                throw new IllegalStateException("console asset " + file + " is missing from the jar");
            }
            ctx.header("Cache-Control", "max-age=300").contentType(type).result(in.readAllBytes());
        }
    }

    void errorPage(Context ctx, int status, String message, String parameter) {
        Sessions.Session s = ctx.attribute(SupportServer.SESSION);
        ConsolePages.Viewer viewer = s == null ? null : new ConsolePages.Viewer(s.actor, s.csrfToken);
        page(ctx.status(status), pages.error(viewer, status, message, parameter));
    }

    private static String capitalize(String s) {
        return s.isEmpty() ? s : s.substring(0, 1).toUpperCase(Locale.ROOT) + s.substring(1);
    }

    /** A console page: HTML in UTF-8, said in the header too (not only in the page's meta tag). */
    static void page(Context ctx, String html) {
        ctx.contentType("text/html; charset=utf-8").result(html);
    }
}
