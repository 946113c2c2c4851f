package io.mailroom.support;

import com.fasterxml.jackson.databind.JsonNode;
import io.javalin.config.JavalinConfig;
import io.javalin.http.Context;

import java.time.Instant;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

import static io.mailroom.support.ConsolePages.url;

/**
 * Bulk actions over HTTP, API and console:
 * <ul>
 *   <li>{@code POST /api/bulk/preview} {@code {"action": "retry", "filter": {"status": "failed", "domain": "example.com"}}}
 *       (support) → how many emails it would apply to now</li>
 *   <li>{@code POST /api/bulk} {@code {"action", "filter", "confirmed": 500, "reason"}} (support) → 202 the run;
 *       409 when more emails match now than were confirmed</li>
 *   <li>{@code GET /api/bulk} → the latest runs; {@code GET /api/bulk/{id}} → one run and its progress</li>
 *   <li>console: {@code GET /console/bulk/confirm?action=&...filter} shows the count and asks for it to be confirmed,
 *       {@code POST /console/bulk} starts the run, {@code GET /console/bulk/{id}} shows its progress</li>
 * </ul>
 * The filter is a search's parameters ({@link EmailSearch}); a bulk retry or resend must name the status it
 * applies to.
 */
final class BulkRoutes {

    /** The filter fields a bulk action takes: a search's, without paging. */
    static final Set<String> FILTER = EmailSearch.PARAMETERS.stream()
            .filter(p -> !p.equals(SupportParams.CURSOR) && !p.equals(SupportParams.LIMIT))
            .collect(java.util.stream.Collectors.toUnmodifiableSet());
    static final Set<String> CONFIRM_QUERY;

    static {
        var q = new java.util.HashSet<>(FILTER);
        q.add("action");
        CONFIRM_QUERY = Set.copyOf(q);
    }

    private final SupportService service;
    private final ConsolePages pages;

    BulkRoutes(SupportService service, ConsolePages pages) {
        this.service = service;
        this.pages = pages;
    }

    void register(JavalinConfig c) {
        c.routes.post("/api/bulk/preview", ctx -> {
            Body b = body(ctx, Set.of("action", "filter"));
            ctx.json(service.previewBulk(SupportServer.actor(ctx), b.action, b.search));
        }, Role.SUPPORT);
        c.routes.post("/api/bulk", ctx -> {
            Body b = body(ctx, Set.of("action", "filter", "confirmed", "reason"));
            ctx.status(202).json(service.startBulk(SupportServer.actor(ctx), b.action, b.search, b.confirmed, b.reason));
        }, Role.SUPPORT);
        c.routes.get("/api/bulk", ctx -> ctx.json(Map.of("runs", service.bulkRuns(50))), Role.VIEWER);
        c.routes.get("/api/bulk/{id}", ctx -> ctx.json(run(ctx.pathParam("id"))), Role.VIEWER);

        c.routes.get("/console/bulk/confirm", this::confirm, Role.SUPPORT);
        c.routes.post("/console/bulk", this::start, Role.SUPPORT);
        c.routes.get("/console/bulk/{id}", ctx -> ConsoleRoutes.page(ctx, pages.bulkRunPage(viewer(ctx), flash(ctx),
                run(ctx.pathParam("id")))), Role.VIEWER);
    }

    private BulkRun run(String rawId) {
        Long id = Params.optionalId("id", rawId);
        return service.bulkRun(id == null ? 0 : id)
                .orElseThrow(() -> HttpFailure.notFound("no bulk action " + rawId, "id"));
    }

    private record Body(String action, EmailSearch search, int confirmed, String reason) {
    }

    /** The JSON body: an object of the {@code allowed} fields; the filter an object of search parameters (strings). */
    private static Body body(Context ctx, Set<String> allowed) {
        JsonNode root;
        try {
            root = SupportJson.mapper().readTree(ctx.body());
        } catch (com.fasterxml.jackson.core.JsonProcessingException e) {
            throw new InvalidParameterException("body", "the body must be a JSON object");
        }
        if (root == null || !root.isObject()) {
            throw new InvalidParameterException("body", "the body must be a JSON object");
        }
        root.fieldNames().forEachRemaining(f -> {
            if (!allowed.contains(f)) {
                throw new InvalidParameterException(f, "unknown field " + f + "; accepted: "
                        + String.join(", ", new java.util.TreeSet<>(allowed)));
            }
        });
        JsonNode filter = root.path("filter");
        if (!filter.isObject()) {
            throw new InvalidParameterException("filter", "filter must be an object of search parameters, e.g. {\"status\": \"failed\"}");
        }
        Map<String, String> params = new HashMap<>();
        filter.properties().forEach(e -> {
            if (!FILTER.contains(e.getKey())) {
                throw new InvalidParameterException("filter." + e.getKey(), "unknown filter " + e.getKey() + "; accepted: "
                        + String.join(", ", new java.util.TreeSet<>(FILTER)));
            }
            if (!e.getValue().isTextual()) {
                throw new InvalidParameterException("filter." + e.getKey(), "filter." + e.getKey() + " must be a string");
            }
            params.put(e.getKey(), e.getValue().asText());
        });
        JsonNode confirmed = root.path("confirmed");
        if (allowed.contains("confirmed") && !confirmed.canConvertToInt()) {
            throw new InvalidParameterException("confirmed", "confirmed must be the number of emails the preview showed");
        }
        JsonNode reason = root.path("reason");
        return new Body(root.path("action").asText(null), EmailSearch.parse(params::get, Instant.now()),
                confirmed.asInt(0), reason.isTextual() ? reason.asText() : null);
    }

    // ------------------------------------------------------------------------------------ console

    private static ConsolePages.Viewer viewer(Context ctx) {
        Sessions.Session s = ctx.attribute(SupportServer.SESSION);
        return new ConsolePages.Viewer(s.actor, s.csrfToken);
    }

    private static Sessions.Flash flash(Context ctx) {
        Sessions.Session s = ctx.attribute(SupportServer.SESSION);
        return s.takeFlash();
    }

    /** The count of what the action would apply to, and the form that confirms exactly that number. */
    private void confirm(Context ctx) {
        EmailSearch search = EmailSearch.parse(ctx::queryParam, Instant.now());
        BulkActions.Preview preview = service.previewBulk(SupportServer.actor(ctx), ctx.queryParam("action"), search);
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("preview", preview);
        m.put("filter", preview.filter());
        m.put("tooMany", preview.matching() > BulkActions.MAX_CONFIRMED);
        StringBuilder back = new StringBuilder("/console/emails?");
        preview.filter().forEach((k, v) -> back.append(url(k)).append('=').append(url(v)).append('&'));
        m.put("back", back.substring(0, back.length() - 1));
        ConsoleRoutes.page(ctx, pages.bulkConfirmPage(viewer(ctx), flash(ctx), m));
    }

    private void start(Context ctx) {
        Map<String, String> params = new HashMap<>();
        for (String f : FILTER) {
            String v = ctx.formParam(f);
            if (v != null && !v.isBlank()) {
                params.put(f, v);
            }
        }
        EmailSearch search = EmailSearch.parse(params::get, Instant.now());
        String confirmed = ctx.formParam("confirmed");
        if (confirmed == null || !confirmed.matches("^[0-9]{1,7}$")) {
            throw new InvalidParameterException("confirmed", "confirmed must be the number of emails shown");
        }
        BulkRun run = service.startBulk(SupportServer.actor(ctx), ctx.formParam("action"), search, Integer.parseInt(confirmed),
                ctx.formParam(SupportParams.REASON));
        throw new ConsoleRoutes.Redirect("/console/bulk/" + run.id());
    }

    static List<String> routes() {
        return List.of("GET /console/bulk/confirm");
    }
}
