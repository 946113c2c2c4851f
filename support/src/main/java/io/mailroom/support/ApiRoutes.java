package io.mailroom.support;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import io.javalin.config.JavalinConfig;
import io.javalin.http.Context;

import java.time.Instant;
import java.util.HashMap;
import java.util.Locale;
import java.util.Map;
import java.util.Set;

/**
 * The JSON API. Reads need {@code viewer}, email actions {@code support}, pause/resume
 * {@code operator}. Every error is an {@link ApiError}; 400 names the parameter, also one the route
 * does not read ({@link #QUERY}).
 *
 * <ul>
 *   <li>{@code GET /api/emails?status=failed|review|pending|sent|cancelled|closed&since=&until=&olderThan=&cursor=&limit=}
 *       → {@link EmailPage}; {@code since}/{@code until} are ISO-8601 times or times ago ({@code 1h}),
 *       {@code olderThan} a duration ({@code 30m}); pass {@code nextCursor} as {@code cursor} for the next page</li>
 *   <li>{@code GET /api/emails/{key}} → {@link EmailView}, 404 if there is none</li>
 *   <li>{@code GET /api/emails/{key}/preview} → the stored HTML part, sandboxed ({@link HtmlPreview}); 404 without one</li>
 *   <li>{@code POST /api/emails/{key}/retry | resend | confirm-sent | cancel | close} with an optional JSON body
 *       {@code {"reason": "...", "providerMessageId": "..."}} (a reason is required for resend and close) →
 *       200 {@link ActionAnswer}; 409 {@code busy} when a dispatcher holds the email (with
 *       {@code Retry-After: 1}), 409 {@code not_allowed} when the status does not fit, 409 {@code suppressed} for a
 *       retry while the recipient's suppression is in force (lift it first), 404 when there is no such email</li>
 *   <li>{@code GET /api/about/{type}/{id}/emails} → {@link AboutEmails}: every email about one business entity
 *       ({@code /api/about/user/42/emails}), oldest first, with timelines; {@code GET /api/orders/{orderId}/emails}
 *       is the same for type {@code order}; {@code GET /api/about} → the entity types known ({@code {"types": [...]}})</li>
 *   <li>{@code GET /api/emails?recipient=&domain=&topic=&template=&tag=NAME=VALUE&status=&delivery=&key=&keyPrefix=&providerMessageId=&error=&about=TYPE:ID&since=&until=&olderThan=&cursor=&limit=}
 *       → {@link SearchPage}: a search of the whole history, any combination, newest queued first ({@code since},
 *       {@code until} and {@code olderThan} bound when it was queued). {@code status} (with its times) alone is the
 *       status list, newest change first (sent: newest queued first), as before</li>
 *   <li>{@code GET /api/emails/suggestions?field=recipient|domain|template|topic&prefix=} → {@code {"values": [...]}}</li>
 *   <li>{@code GET /api/stats} → {@link QueueStats}; {@code GET /api/control} → {@link ControlState}</li>
 *   <li>{@code GET /api/stats/topics?range=1h|24h|7d} → {@link TopicStats}: per topic and bucket sent, failed,
 *       bounced and waiting, from the rollups; another range is 400</li>
 *   <li>{@code POST /api/control/pause | resume} with an optional body {@code {"scope": "*", "reason": "..."}} → {@link ControlState}</li>
 *   <li>{@code GET /api/dispatchers} → {@link DispatcherList}: every dispatcher process (live or not), every topic with its
 *       pause switch, and {@code unservedTopics}, the topics with emails due that no live dispatcher serves</li>
 *   <li>{@code GET /api/delivery?delivery=bounced|complained&cursor=&limit=} → {@link DeliveryPage}, newest report first</li>
 *   <li>{@code GET /api/delivery/orphans?before=&limit=} (operator) → events that matched no email</li>
 *   <li>{@code GET /api/suppressions?address=&lifted=true&before=&limit=} → {@link SuppressionView}s, newest first</li>
 *   <li>{@code POST /api/suppressions} {@code {"address": "...", "reason": "..."}} (support) → 201 the entry; 409 if already suppressed by hand</li>
 *   <li>{@code POST /api/suppressions/lift} {@code {"address": "...", "reason": "..."}} (support) → the entries lifted; 409 if not suppressed</li>
 *   <li>{@code POST /api/erasures} {@code {"address": "...", "reason": "..."}} (support) → {@link ErasureResult}: the address
 *       erased from the whole history (a customer's right to erasure); 409 {@code busy} while an email to it is being sent</li>
 *   <li>{@code GET /api/me} → who the token belongs to</li>
 * </ul>
 */
final class ApiRoutes {

    /**
     * The query parameters each route reads, by "METHOD path" as registered; a route not named
     * here reads none. Any other parameter is refused with 400 before the route runs.
     */
    static final Map<String, Set<String>> QUERY = Map.of(
            "GET /api/emails", EmailSearch.PARAMETERS,
            "GET /api/emails/suggestions", Set.of("field", "prefix"),
            "GET /api/delivery", Set.of(SupportParams.DELIVERY, SupportParams.CURSOR, SupportParams.LIMIT),
            "GET /api/delivery/orphans", Set.of(SupportParams.BEFORE, SupportParams.LIMIT),
            "GET /api/stats/topics", Set.of(SupportParams.RANGE),
            "GET /api/captured", CapturedRoutes.LIST_QUERY,
            "GET /api/suppressions", Set.of(SupportParams.ADDRESS, SupportParams.LIFTED, SupportParams.BEFORE,
                    SupportParams.LIMIT));

    private final SupportService service;

    ApiRoutes(SupportService service) {
        this.service = service;
    }

    record Me(String name, String role) {
    }

    void register(JavalinConfig c) {
        c.routes.get("/api/about", ctx -> ctx.json(java.util.Map.of("types", service.aboutTypes())), Role.VIEWER);
        c.routes.get("/api/about/{type}/{id}/emails",
                ctx -> ctx.json(service.emailsAbout(ctx.pathParam("type"), ctx.pathParam("id"))), Role.VIEWER);
        c.routes.get("/api/orders/{orderId}/emails", ctx -> ctx.json(service.emailsOfOrder(ctx.pathParam("orderId"))), Role.VIEWER);
        c.routes.get("/api/emails", this::list, Role.VIEWER);
        c.routes.get("/api/emails/suggestions", ctx -> ctx.json(Map.of("values",
                service.suggestions(ctx.queryParam("field"), ctx.queryParam("prefix")))), Role.VIEWER);
        c.routes.get("/api/emails/{key}", this::one, Role.VIEWER);
        c.routes.get("/api/emails/{key}/preview", ctx -> HtmlPreview.serve(ctx, service), Role.VIEWER);
        c.routes.post("/api/emails/{key}/retry", ctx -> {
            Map<String, String> body = body(ctx, Set.of(SupportParams.REASON));
            answer(ctx, service.retry(SupportServer.actor(ctx), ctx.pathParam("key"), body.get(SupportParams.REASON)));
        }, Role.SUPPORT);
        c.routes.post("/api/emails/{key}/resend", ctx -> {
            Map<String, String> body = body(ctx, Set.of(SupportParams.REASON));
            answer(ctx, service.resend(SupportServer.actor(ctx), ctx.pathParam("key"), body.get(SupportParams.REASON)));
        }, Role.SUPPORT);
        c.routes.post("/api/emails/{key}/confirm-sent", ctx -> {
            Map<String, String> body = body(ctx, Set.of(SupportParams.REASON, SupportParams.PROVIDER_MESSAGE_ID));
            answer(ctx, service.confirmSent(SupportServer.actor(ctx), ctx.pathParam("key"),
                    body.get(SupportParams.PROVIDER_MESSAGE_ID), body.get(SupportParams.REASON)));
        }, Role.SUPPORT);
        c.routes.post("/api/emails/{key}/cancel", ctx -> {
            Map<String, String> body = body(ctx, Set.of(SupportParams.REASON));
            answer(ctx, service.cancel(SupportServer.actor(ctx), ctx.pathParam("key"), body.get(SupportParams.REASON)));
        }, Role.SUPPORT);
        c.routes.post("/api/emails/{key}/reschedule", ctx -> {
            Map<String, String> body = body(ctx, Set.of(ScheduleActions.SEND_AT, SupportParams.REASON));
            answer(ctx, service.reschedule(SupportServer.actor(ctx), ctx.pathParam("key"), body.get(ScheduleActions.SEND_AT),
                    body.get(SupportParams.REASON)));
        }, Role.SUPPORT);
        c.routes.post("/api/emails/{key}/close", ctx -> {
            Map<String, String> body = body(ctx, Set.of(SupportParams.REASON));
            answer(ctx, service.close(SupportServer.actor(ctx), ctx.pathParam("key"), body.get(SupportParams.REASON)));
        }, Role.SUPPORT);
        c.routes.get("/api/stats", ctx -> ctx.json(service.stats()), Role.VIEWER);
        c.routes.get("/api/stats/topics", ctx -> ctx.json(service.topicStats(ctx.queryParam(SupportParams.RANGE))), Role.VIEWER);
        c.routes.get("/api/control", ctx -> ctx.json(service.control()), Role.VIEWER);
        c.routes.get("/api/dispatchers", ctx -> ctx.json(service.dispatchers()), Role.VIEWER);
        c.routes.post("/api/control/pause", ctx -> {
            Map<String, String> body = body(ctx, Set.of(SupportParams.SCOPE, SupportParams.REASON));
            ctx.json(service.pause(SupportServer.actor(ctx), body.get(SupportParams.SCOPE), body.get(SupportParams.REASON)));
        }, Role.OPERATOR);
        c.routes.post("/api/control/resume", ctx -> {
            Map<String, String> body = body(ctx, Set.of(SupportParams.SCOPE, SupportParams.REASON));
            ctx.json(service.resume(SupportServer.actor(ctx), body.get(SupportParams.SCOPE), body.get(SupportParams.REASON)));
        }, Role.OPERATOR);
        c.routes.get("/api/delivery", ctx -> ctx.json(service.emailsByDelivery(ctx.queryParam(SupportParams.DELIVERY),
                ctx.queryParam(SupportParams.CURSOR), ctx.queryParam(SupportParams.LIMIT))), Role.VIEWER);
        c.routes.get("/api/delivery/orphans", ctx -> ctx.json(service.orphanEvents(SupportServer.actor(ctx),
                ctx.queryParam(SupportParams.BEFORE), ctx.queryParam(SupportParams.LIMIT))), Role.OPERATOR);
        c.routes.get("/api/suppressions", ctx -> ctx.json(service.suppressions(ctx.queryParam(SupportParams.ADDRESS),
                "true".equals(ctx.queryParam(SupportParams.LIFTED)), ctx.queryParam(SupportParams.BEFORE),
                ctx.queryParam(SupportParams.LIMIT))), Role.VIEWER);
        c.routes.post("/api/suppressions", ctx -> {
            Map<String, String> body = body(ctx, Set.of(SupportParams.ADDRESS, SupportParams.REASON));
            ctx.status(201).json(service.suppress(SupportServer.actor(ctx), body.get(SupportParams.ADDRESS), body.get(SupportParams.REASON)));
        }, Role.SUPPORT);
        c.routes.post("/api/suppressions/lift", ctx -> {
            Map<String, String> body = body(ctx, Set.of(SupportParams.ADDRESS, SupportParams.REASON));
            ctx.json(service.liftSuppression(SupportServer.actor(ctx), body.get(SupportParams.ADDRESS), body.get(SupportParams.REASON)));
        }, Role.SUPPORT);
        c.routes.post("/api/erasures", ctx -> {
            Map<String, String> body = body(ctx, Set.of(SupportParams.ADDRESS, SupportParams.REASON));
            ctx.json(service.erase(SupportServer.actor(ctx), body.get(SupportParams.ADDRESS), body.get(SupportParams.REASON)));
        }, Role.SUPPORT);
        c.routes.get("/api/me", ctx -> {
            Actor a = SupportServer.actor(ctx);
            ctx.json(new Me(a.name(), a.role().word()));
        }, Role.VIEWER);
    }

    /** The API path of an email's HTML preview. */
    static String previewPath(String key) {
        return "/api/emails/" + ConsolePages.url(key) + "/preview";
    }

    /**
     * A status alone (with its times) is the status list, newest change first (sent: newest queued first); anything else is a
     * search of the whole history, newest queued first.
     */
    private void list(Context ctx) {
        Instant now = Instant.now();
        EmailSearch search = EmailSearch.parse(ctx::queryParam, now);
        if (search.hasFilter() || search.status() == null) {
            ctx.json(service.search(search));
            return;
        }
        EmailFilter filter = Params.filter(ctx.queryParam(SupportParams.STATUS), ctx.queryParam(SupportParams.SINCE),
                ctx.queryParam(SupportParams.UNTIL), ctx.queryParam(SupportParams.OLDER_THAN),
                ctx.queryParam(SupportParams.CURSOR), ctx.queryParam(SupportParams.LIMIT), Instant.now());
        ctx.json(service.emails(filter));
    }

    private void one(Context ctx) {
        String key = ctx.pathParam("key");
        EmailView email = service.email(key)
                .orElseThrow(() -> HttpFailure.notFound("no email with key " + key, SupportParams.KEY));
        ctx.json(email);
    }

    static void answer(Context ctx, ActionResult result) {
        switch (result) {
            case ActionResult.Applied a -> ctx.json(ActionAnswer.of(a, ctx.pathParam("key")));
            case ActionResult.Busy b -> ctx.status(409).header("Retry-After", "1").json(new ApiError(b.message(), "busy", null));
            case ActionResult.NotFound n -> ctx.status(404).json(new ApiError(n.message(), "not_found", SupportParams.KEY));
            case ActionResult.NotAllowed n -> ctx.status(409).json(new ApiError(n.message(), n.code(), null, n.current().code()));
        }
    }

    /**
     * The JSON object body of an action: empty is fine; otherwise {@code application/json}, an object
     * whose fields are among {@code allowed} and are strings (or null).
     */
    static Map<String, String> body(Context ctx, Set<String> allowed) {
        String raw = ctx.body();
        Map<String, String> out = new HashMap<>();
        if (raw.isBlank()) {
            return out;
        }
        String type = ctx.header("Content-Type");
        if (type == null || !type.toLowerCase(Locale.ROOT).split(";")[0].trim().equals("application/json")) {
            throw new HttpFailure(415, "unsupported_media_type", "the body must be JSON (Content-Type: application/json)", "body");
        }
        JsonNode node;
        try {
            node = SupportJson.mapper().readTree(raw);
        } catch (JsonProcessingException e) {
            throw new InvalidParameterException("body", "the body is not valid JSON");
        }
        if (node == null || !node.isObject()) {
            throw new InvalidParameterException("body", "the body must be a JSON object");
        }
        for (Map.Entry<String, JsonNode> field : node.properties()) {
            String name = field.getKey();
            if (!allowed.contains(name)) {
                String shown = name.length() > 40 || !name.matches("^[A-Za-z][A-Za-z0-9_]*$") ? "body" : name;
                throw new InvalidParameterException(shown, "unknown field " + shown + "; expected " + String.join(", ", allowed.stream().sorted().toList()));
            }
            JsonNode value = field.getValue();
            if (value.isNull()) {
                continue;
            }
            if (!value.isTextual()) {
                throw new InvalidParameterException(name, name + " must be a string");
            }
            out.put(name, value.textValue());
        }
        return out;
    }
}
