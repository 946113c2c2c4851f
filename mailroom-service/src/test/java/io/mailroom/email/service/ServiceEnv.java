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
}
