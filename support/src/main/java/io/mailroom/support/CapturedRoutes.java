package io.mailroom.support;

import io.javalin.config.JavalinConfig;
import io.javalin.http.Context;

import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Set;

/**
 * The "Captured mail" page and API: what the staging transport {@code capture} stored instead of sending.
 *
 * <ul>
 *   <li>{@code GET /api/captured?before=&limit=} (viewer) → {@link CapturedViews.Page}, newest first</li>
 *   <li>{@code GET /api/captured/{key}} (viewer) → {@link CapturedViews.Captured}: headers, text and HTML; 404 if none</li>
 *   <li>{@code GET /api/captured/{key}/raw} (support) → the message as {@code message/rfc822}, a {@code .eml} download</li>
 *   <li>{@code GET /console/captured}, {@code /console/captured/{key}} (viewer): the same as pages; the HTML part is
 *       shown in a sandboxed frame from {@code /console/captured/{key}/preview}, served as {@link HtmlPreview} serves
 *       an email's rendering; {@code /console/captured/{key}/raw} (support) downloads it</li>
 * </ul>
 */
final class CapturedRoutes {

    /** The query parameters of the list routes (both read {@code before} and {@code limit}). */
    static final Set<String> LIST_QUERY = Set.of(SupportParams.BEFORE, SupportParams.LIMIT);

    private final CapturedViews captured;
    private final ConsolePages pages;
    private final ConsoleRoutes console;

    CapturedRoutes(CapturedViews captured, ConsolePages pages, ConsoleRoutes console) {
        this.captured = captured;
        this.pages = pages;
        this.console = console;
    }

    void register(JavalinConfig c) {
        c.routes.get("/api/captured", ctx -> ctx.json(list(ctx)), Role.VIEWER);
        c.routes.get("/api/captured/{key}", ctx -> ctx.json(one(ctx)), Role.VIEWER);
        c.routes.get("/api/captured/{key}/raw", this::raw, Role.SUPPORT);
        c.routes.get("/console/captured", ctx -> {
            CapturedViews.Page page = list(ctx);
            Map<String, Object> m = new LinkedHashMap<>();
            m.put("emails", page.emails());
            m.put("next", page.nextBefore() == null ? null : "/console/captured?before=" + page.nextBefore());
            ConsoleRoutes.page(ctx, pages.render("captured-list.peb", "Captured mail", console.viewer(ctx), "captured",
                    console.flash(ctx), m));
        }, Role.VIEWER);
        c.routes.get("/console/captured/{key}", ctx -> {
            CapturedViews.Captured one = one(ctx);
            Map<String, Object> m = new LinkedHashMap<>();
            m.put("c", one);
            m.put("previewUrl", one.html() == null ? null : "/console/captured/" + ConsolePages.url(one.email().key()) + "/preview");
            m.put("rawUrl", "/console/captured/" + ConsolePages.url(one.email().key()) + "/raw");
            ConsoleRoutes.page(ctx, pages.render("captured.peb", "Captured: " + one.email().subject(), console.viewer(ctx), "captured",
                    console.flash(ctx), m));
        }, Role.VIEWER);
        c.routes.get("/console/captured/{key}/preview", ctx -> {
            String html = one(ctx).html();
            if (html == null) {
                throw HttpFailure.notFound("captured email " + ctx.pathParam("key") + " has no HTML part", SupportParams.KEY);
            }
            HtmlPreview.serveHtml(ctx, html);
        }, Role.VIEWER);
        c.routes.get("/console/captured/{key}/raw", this::raw, Role.SUPPORT);
    }

    private CapturedViews.Page list(Context ctx) {
        return captured.list(ctx.queryParam(SupportParams.BEFORE), ctx.queryParam(SupportParams.LIMIT));
    }

    private CapturedViews.Captured one(Context ctx) {
        String key = ctx.pathParam("key");
        return captured.one(key).orElseThrow(() -> HttpFailure.notFound("no captured email with key " + key, SupportParams.KEY));
    }

    private void raw(Context ctx) {
        String key = ctx.pathParam("key");
        byte[] raw = captured.raw(key).orElseThrow(() -> HttpFailure.notFound("no captured email with key " + key, SupportParams.KEY));
        // the key is printable ASCII without spaces (IdempotencyKeys); quotes and backslashes are left out of the name
        String file = key.replaceAll("[\"\\\\/]", "_") + ".eml";
        ctx.header("Content-Disposition", "attachment; filename=\"" + file + "\"");
        ctx.header("X-Content-Type-Options", "nosniff");
        ctx.header("Cache-Control", "no-store");
        ctx.contentType("message/rfc822").result(raw);
    }
}
