package io.mailroom.support;

import io.javalin.http.Context;

import java.nio.charset.StandardCharsets;

/**
 * Serves the stored HTML part of an email as it was sent, for support to see what the customer
 * got. The HTML is the email's own (template output with customer data), so it is served verbatim
 * but inert: the CSP's {@code sandbox} (no {@code allow-scripts}, no same origin) keeps scripts,
 * forms and plugins dead and gives the document an opaque origin, {@code default-src 'none'} loads
 * nothing from anywhere (inline styles and data: images only, which is what inlined email HTML
 * uses), and only the console itself may frame it. The console embeds it as
 * {@code <iframe sandbox src=...>}, which sandboxes it a second time.
 */
final class HtmlPreview {

    static final String CSP = "default-src 'none'; style-src 'unsafe-inline'; img-src data:; sandbox; frame-ancestors 'self'";

    private HtmlPreview() {
    }

    /** {@code GET .../emails/{key}/preview}: 200 with the HTML part, or 404 when none is stored. */
    static void serve(Context ctx, SupportService service) {
        String key = ctx.pathParam("key");
        String html = service.renderedHtml(key).orElseThrow(() ->
                HttpFailure.notFound("no stored HTML rendering for email " + key, SupportParams.KEY));
        serveHtml(ctx, html);
    }

    /** Serves {@code html} inert, as above (also a captured email's HTML part). */
    static void serveHtml(Context ctx, String html) {
        // replaces the console's own headers set before every route (which forbid framing)
        ctx.header("Content-Security-Policy", CSP);
        ctx.header("X-Frame-Options", "SAMEORIGIN");
        ctx.header("X-Content-Type-Options", "nosniff");
        ctx.header("Cache-Control", "no-store");
        ctx.contentType("text/html; charset=utf-8").result(html.getBytes(StandardCharsets.UTF_8));
    }
}
