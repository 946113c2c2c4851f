package io.mailroom.email.service;

import io.mailroom.acceptance.Shop;

import java.util.HashMap;
import java.util.Map;

/** The environment the acceptance tests start a dispatcher serving the example shop with. */
final class ServiceEnv {

    private ServiceEnv() {
    }

    /**
     * A dispatcher serving the shop's templates that sends by the HTTP mail API at
     * {@code providerBaseUrl}, migrates, and serves the delivery-event endpoint on a free loopback
     * port with {@code secrets} ({@code MAILROOM_WEBHOOK_SECRETS}); a mutable map.
     */
    /** A dispatcher serving the shop's templates that sends by plain SMTP to {@code 127.0.0.1:smtpPort}; a mutable map. */
    static Map<String, String> smtp(String dbUrl, int smtpPort) {
        Map<String, String> env = new HashMap<>();
        env.put("MAILROOM_DB_URL", dbUrl);
        env.put("MAILROOM_TEMPLATES_DIR", Shop.templatesDir().toString());
        env.put("MAILROOM_SMTP_HOST", "127.0.0.1");
        env.put("MAILROOM_SMTP_PORT", String.valueOf(smtpPort));
        env.put("MAILROOM_SMTP_SECURITY", "none");
        env.put("MAILROOM_SMTP_FROM", "Shop <shop@example.com>");
        env.put("MAILROOM_DISPATCHER_PORT", "0");
        env.put("MAILROOM_DISPATCHER_HOST", "127.0.0.1");
        env.put("MAILROOM_POLL_INTERVAL", "200ms");
        return env;
    }

    static Map<String, String> httpWithWebhooks(String dbUrl, String providerBaseUrl, String secrets) {
        Map<String, String> env = new HashMap<>();
        env.put("MAILROOM_DB_URL", dbUrl);
        env.put("MAILROOM_TEMPLATES_DIR", Shop.templatesDir().toString());
        env.put("MAILROOM_SMTP_FROM", "Shop <shop@example.com>");
        env.put("MAILROOM_DISPATCHER_PORT", "0");
        env.put("MAILROOM_DISPATCHER_HOST", "127.0.0.1");
        env.put("MAILROOM_POLL_INTERVAL", "200ms");
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
}
