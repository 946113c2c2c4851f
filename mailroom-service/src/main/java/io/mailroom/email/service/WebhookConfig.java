package io.mailroom.email.service;

import io.mailroom.delivery.suppression.ErasureKey;
import io.mailroom.delivery.suppression.SuppressionConfig;
import io.mailroom.delivery.webhook.NeutralEventAdapter;
import io.mailroom.delivery.webhook.ResendEventAdapter;
import io.mailroom.delivery.webhook.WebhookSecrets;
import io.mailroom.email.metrics.MetricTags;
import io.mailroom.outbox.InvalidSettingException;

import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;

/**
 * The delivery-event endpoint of the dispatcher service ({@code MAILROOM_WEBHOOKS=on}): where it
 * listens, the signing secrets of each source, and the bounds that keep a flood of requests from
 * starving the sending.
 *
 * @param secrets     per source ({@code neutral}, {@code resend}): the secrets its requests are signed with
 * @param dsnToken    bearer token of {@code POST /webhooks/dsn} (a mail server posting bounces); null: that route is off
 * @param maxInFlight requests handled at once, counted once their body is read; more are answered 429
 *                    with Retry-After, which providers retry
 * @param readTimeout how long a request's body may take to arrive, whole; a connection still sending
 *                    at the deadline is closed (so a client sending a byte every few seconds holds a
 *                    thread for this long at most, and never a slot)
 * @param metricTags  the email tags that label the delivery metrics ({@code MAILROOM_METRIC_TAGS}, {@link MetricTags})
 */
public record WebhookConfig(String host, int port, Map<String, WebhookSecrets> secrets, String dsnToken,
                            int maxBodyBytes, int maxInFlight, Duration readTimeout, MetricTags metricTags) {

    public static final int DEFAULT_PORT = 8084;
    public static final int DEFAULT_MAX_BODY_BYTES = 256 * 1024;
    public static final int DEFAULT_MAX_IN_FLIGHT = 8;
    /** A provider's 256 KiB arrives in well under a second; ten leave room for a slow network, not for a trickle. */
    public static final Duration DEFAULT_READ_TIMEOUT = Duration.ofSeconds(10);
    static final Duration MAX_READ_TIMEOUT = Duration.ofMinutes(2);
    /** The webhook server's own pool: ingestion never takes a session the dispatcher needs. */
    public static final int POOL_SIZE = 2;
    public static final Set<String> SOURCES = Set.of(NeutralEventAdapter.SOURCE, ResendEventAdapter.SOURCE);
    static final int MIN_DSN_TOKEN = 24;

    public WebhookConfig {
        secrets = Map.copyOf(secrets);
        metricTags = metricTags == null ? MetricTags.NO_TAGS : metricTags;
        if (readTimeout == null || readTimeout.isNegative() || readTimeout.isZero() || readTimeout.compareTo(MAX_READ_TIMEOUT) > 0) {
            throw new InvalidSettingException("MAILROOM_WEBHOOKS_READ_TIMEOUT", "MAILROOM_WEBHOOKS_READ_TIMEOUT must be more than 0"
                    + " and at most " + Settings.format(MAX_READ_TIMEOUT) + ", got " + (readTimeout == null ? "nothing" : Settings.format(readTimeout)));
        }
    }

    public WebhookConfig(String host, int port, Map<String, WebhookSecrets> secrets, String dsnToken, int maxBodyBytes, int maxInFlight) {
        this(host, port, secrets, dsnToken, maxBodyBytes, maxInFlight, DEFAULT_READ_TIMEOUT);
    }

    public WebhookConfig(String host, int port, Map<String, WebhookSecrets> secrets, String dsnToken, int maxBodyBytes,
                         int maxInFlight, Duration readTimeout) {
        this(host, port, secrets, dsnToken, maxBodyBytes, maxInFlight, readTimeout, MetricTags.NO_TAGS);
    }

    /** Null when {@code MAILROOM_WEBHOOKS} is off (the default). */
    static WebhookConfig fromEnv(Map<String, String> env) {
        Settings s = new Settings(env);
        String on = s.string("MAILROOM_WEBHOOKS", "off").strip().toLowerCase(Locale.ROOT);
        if (on.equals("off") || on.equals("false")) {
            return null;
        }
        if (!(on.equals("on") || on.equals("true"))) {
            throw new InvalidSettingException("MAILROOM_WEBHOOKS", "MAILROOM_WEBHOOKS must be on or off, got '" + on + "'");
        }
        int port = s.integer("MAILROOM_WEBHOOKS_PORT", DEFAULT_PORT);
        if (port < 0 || port > 65535) {
            throw new InvalidSettingException("MAILROOM_WEBHOOKS_PORT", "MAILROOM_WEBHOOKS_PORT must be 0..65535, got " + port);
        }
        int maxBody = s.integer("MAILROOM_WEBHOOKS_MAX_BODY_BYTES", DEFAULT_MAX_BODY_BYTES);
        if (maxBody < 1024 || maxBody > 10 * 1024 * 1024) {
            throw new InvalidSettingException("MAILROOM_WEBHOOKS_MAX_BODY_BYTES",
                    "MAILROOM_WEBHOOKS_MAX_BODY_BYTES must be 1024..10485760, got " + maxBody);
        }
        int inFlight = s.integer("MAILROOM_WEBHOOKS_MAX_IN_FLIGHT", DEFAULT_MAX_IN_FLIGHT);
        if (inFlight < 1 || inFlight > 256) {
            throw new InvalidSettingException("MAILROOM_WEBHOOKS_MAX_IN_FLIGHT",
                    "MAILROOM_WEBHOOKS_MAX_IN_FLIGHT must be 1..256, got " + inFlight);
        }
        String dsnToken = s.secret("MAILROOM_DSN_TOKEN");
        if (dsnToken != null && dsnToken.strip().length() < MIN_DSN_TOKEN) {
            throw new InvalidSettingException("MAILROOM_DSN_TOKEN", "MAILROOM_DSN_TOKEN must be at least " + MIN_DSN_TOKEN + " characters");
        }
        Map<String, WebhookSecrets> secrets = secrets(s.secret("MAILROOM_WEBHOOK_SECRETS"));
        if (secrets.isEmpty() && dsnToken == null) {
            throw new InvalidSettingException("MAILROOM_WEBHOOK_SECRETS", "MAILROOM_WEBHOOKS=on needs MAILROOM_WEBHOOK_SECRETS"
                    + " (source:whsec_..., sources " + SOURCES + ") or MAILROOM_DSN_TOKEN");
        }
        return new WebhookConfig(s.string("MAILROOM_WEBHOOKS_HOST", "0.0.0.0"), port, secrets,
                dsnToken == null ? null : dsnToken.strip(), maxBody, inFlight,
                s.duration("MAILROOM_WEBHOOKS_READ_TIMEOUT", DEFAULT_READ_TIMEOUT), MetricTags.parse(s.string(MetricTags.SETTING)));
    }

    /** {@code source:whsec_...,source:whsec_...}; a source may be named several times (rotation). */
    static Map<String, WebhookSecrets> secrets(String value) {
        Map<String, List<String>> bySource = new LinkedHashMap<>();
        if (value == null || value.isBlank()) {
            return Map.of();
        }
        String[] entries = value.split(",");
        for (int i = 0; i < entries.length; i++) {
            String entry = entries[i].strip();
            int colon = entry.indexOf(':');
            String source = colon < 0 ? "" : entry.substring(0, colon).strip();
            if (!SOURCES.contains(source)) {
                throw new InvalidSettingException("MAILROOM_WEBHOOK_SECRETS", "MAILROOM_WEBHOOK_SECRETS entry " + (i + 1)
                        + " must be source:whsec_... with source one of " + new java.util.TreeSet<>(SOURCES)
                        + (colon < 0 ? "" : ", got source '" + source + "'"));
            }
            bySource.computeIfAbsent(source, x -> new ArrayList<>()).add(entry.substring(colon + 1));
        }
        Map<String, WebhookSecrets> out = new LinkedHashMap<>();
        bySource.forEach((source, list) -> {
            try {
                out.put(source, WebhookSecrets.of("MAILROOM_WEBHOOK_SECRETS (" + source + ")", list));
            } catch (IllegalArgumentException e) {
                throw new InvalidSettingException("MAILROOM_WEBHOOK_SECRETS", e.getMessage());
            }
        });
        return out;
    }

    /**
     * {@code MAILROOM_SOFT_BOUNCE_LIMIT}: soft bounces in a row that suppress an address (default 3);
     * {@code MAILROOM_ERASURE_KEY}: the key an erased address's suppression is kept under (default: the
     * random key stored in the database; see {@link ErasureKey} for the difference).
     */
    static SuppressionConfig suppression(Map<String, String> env) {
        Settings settings = new Settings(env);
        int limit = settings.integer("MAILROOM_SOFT_BOUNCE_LIMIT", SuppressionConfig.DEFAULT_SOFT_BOUNCE_LIMIT);
        ErasureKey key = erasureKey(settings);
        try {
            return new SuppressionConfig(limit, key);
        } catch (IllegalArgumentException e) {
            throw new InvalidSettingException("MAILROOM_SOFT_BOUNCE_LIMIT", e.getMessage());
        }
    }

    static final String ERASURE_KEY = "MAILROOM_ERASURE_KEY";

    /** {@code MAILROOM_ERASURE_KEY}, or the key stored in the database when it is not set. */
    static ErasureKey erasureKey(Settings settings) {
        String secret = settings.secret(ERASURE_KEY);
        if (secret == null) {
            return ErasureKey.stored();
        }
        try {
            return ErasureKey.configured(ERASURE_KEY, secret);
        } catch (IllegalArgumentException e) {
            throw new InvalidSettingException(ERASURE_KEY, e.getMessage());
        }
    }

    @Override
    public String toString() {
        return "webhooks[" + host + ":" + port + ", sources=" + new java.util.TreeSet<>(secrets.keySet())
                + ", dsn=" + (dsnToken == null ? "off" : "on (token masked)") + ", maxBodyBytes=" + maxBodyBytes
                + ", maxInFlight=" + maxInFlight + ", readTimeout=" + Settings.format(readTimeout) + "]";
    }
}
