package io.mailroom.email.service;

import java.util.HashMap;
import java.util.Map;

/** The environment the service tests start a dispatcher with; each test adds or overrides what it is about. */
final class ServiceEnv {

    /** The test template {@code receipt}'s default topic. */
    static final String TOPIC = "email.receipt";

    private ServiceEnv() {
    }

    /** A receipt's envelope as the email API writes it, for {@link #TOPIC}. */
    static String receipt(long id, String address, String name) {
        return """
                {"v":1,"template":"receipt","locale":"en","to":{"address":"%s","name":"%s"},"headers":{},
                 "data":{"customer":{"name":"%s"},"order":{"id":"%d","currency":"EUR","total":1.00,
                 "createdAt":"2026-12-02T10:00:00Z","lines":[{"name":"Pin","quantity":1,"amount":1.00}]}}}"""
                .formatted(address, name, name, id);
    }

    /**
     * A dispatcher on {@code dbUrl} serving the test templates ({@link #TOPIC}, {@code email.welcome})
     * that sends by plain SMTP to {@code 127.0.0.1:smtpPort}, serves its health endpoints on a free
     * loopback port and polls every 200 ms; a mutable map.
     */
    static Map<String, String> smtp(String dbUrl, int smtpPort) {
        Map<String, String> env = new HashMap<>();
        env.put("MAILROOM_DB_URL", dbUrl);
        env.put("MAILROOM_TEMPLATES_DIR", io.mailroom.testing.TestTemplates.directory().toString());
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

    /** Enqueues a welcome email to {@code to} under {@code key} and waits until the running service has sent it. */
    static String sendShippedAndWait(org.jooq.DSLContext dsl, String key, String to) {
        dsl.transaction(c -> new io.mailroom.email.api.EmailOutbox(new io.mailroom.outbox.OutboxEnqueuer()).enqueue(c.dsl(),
                io.mailroom.email.api.OutgoingEmail.template("welcome").to(to, "Ann").about("account", key).idempotencyKey(key)
                        .data(Map.of("customer", Map.of("name", "Ann"))).build()));
        org.awaitility.Awaitility.await().atMost(java.time.Duration.ofSeconds(20)).until(() -> "done".equals(
                dsl.select(io.mailroom.db.jooq.Tables.OUTBOX_EFFECT.STATUS).from(io.mailroom.db.jooq.Tables.OUTBOX_EFFECT)
                        .where(io.mailroom.db.jooq.Tables.OUTBOX_EFFECT.IDEMPOTENCY_KEY.eq(key))
                        .fetchOne(io.mailroom.db.jooq.Tables.OUTBOX_EFFECT.STATUS)));
        return key;
    }
}
