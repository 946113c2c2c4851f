package io.mailroom.email.service;

import java.util.HashMap;
import java.util.Map;

/** The environment the service tests start a dispatcher with; each test adds or overrides what it is about. */
final class ServiceEnv {

    private ServiceEnv() {
    }

    /**
     * A dispatcher on {@code dbUrl} that sends by plain SMTP to {@code 127.0.0.1:smtpPort}, serves its
     * health endpoints on a free loopback port and polls every 200 ms; a mutable map.
     */
    static Map<String, String> smtp(String dbUrl, int smtpPort) {
        Map<String, String> env = new HashMap<>();
        env.put("MAILROOM_DB_URL", dbUrl);
        env.put("MAILROOM_SMTP_HOST", "127.0.0.1");
        env.put("MAILROOM_SMTP_PORT", String.valueOf(smtpPort));
        env.put("MAILROOM_SMTP_SECURITY", "none");
        env.put("MAILROOM_SMTP_FROM", "Shop <shop@example.com>");
        env.put("MAILROOM_DISPATCHER_PORT", "0");
        env.put("MAILROOM_DISPATCHER_HOST", "127.0.0.1");
        env.put("MAILROOM_POLL_INTERVAL", "200ms");
        return env;
    }

    /**
     * A dispatcher that sends by the HTTP mail API at {@code providerBaseUrl}, migrates, and serves
     * the delivery-event endpoint on a free loopback port with {@code secrets}
     * ({@code MAILROOM_WEBHOOK_SECRETS}); a mutable map.
     */
    static Map<String, String> httpWithWebhooks(String dbUrl, String providerBaseUrl, String secrets) {
        Map<String, String> env = smtp(dbUrl, 1);
        env.put("MAILROOM_MIGRATE", "true");
        env.put("MAILROOM_TRANSPORT", "http");
        env.put("MAILROOM_HTTP_BASE_URL", providerBaseUrl);
        env.put("MAILROOM_HTTP_TOKEN", "tok_test");
        env.put("MAILROOM_WEBHOOKS", "on");
        env.put("MAILROOM_WEBHOOKS_HOST", "127.0.0.1");
        env.put("MAILROOM_WEBHOOKS_PORT", "0");
        env.put("MAILROOM_WEBHOOK_SECRETS", secrets);
        return env;
    }

    /** Enqueues a shipping notice to {@code to} under {@code key} and waits until the running service has sent it. */
    static String sendShippedAndWait(org.jooq.DSLContext dsl, String key, String to) {
        dsl.transaction(c -> new io.mailroom.email.api.EmailOutbox(new io.mailroom.outbox.OutboxEnqueuer()).enqueue(c.dsl(),
                io.mailroom.email.api.OutgoingEmail.template("order_shipped").to(to, "Ann").about("order", key).idempotencyKey(key)
                        .data(Map.of("customer", Map.of("name", "Ann"), "order", Map.of("id", key),
                                "shipment", Map.of("carrier", "DHL", "trackingNumber", "1Z", "trackingUrl", "https://track.example/1Z",
                                        "shippedAt", "2026-12-03T09:15:00Z"))).build()));
        org.awaitility.Awaitility.await().atMost(java.time.Duration.ofSeconds(20)).until(() -> "done".equals(
                dsl.select(io.mailroom.db.jooq.Tables.OUTBOX_EFFECT.STATUS).from(io.mailroom.db.jooq.Tables.OUTBOX_EFFECT)
                        .where(io.mailroom.db.jooq.Tables.OUTBOX_EFFECT.IDEMPOTENCY_KEY.eq(key))
                        .fetchOne(io.mailroom.db.jooq.Tables.OUTBOX_EFFECT.STATUS)));
        return key;
    }
}
