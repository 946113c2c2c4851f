package io.mailroom.email.transport.http;

import io.mailroom.outbox.Checks;
import io.mailroom.outbox.InvalidSettingException;
import io.mailroom.email.config.Settings;
import io.mailroom.email.transport.TrustStore;

import java.net.URI;
import java.net.URISyntaxException;
import java.time.Duration;
import java.util.Map;

/**
 * Settings of the HTTP mail API transport. {@link #toString()} masks the token.
 *
 * @param baseUrl             e.g. {@code https://api.provider.example} ({@code MAILROOM_HTTP_BASE_URL});
 *                            the adapter appends its path
 * @param token               bearer token ({@code MAILROOM_HTTP_TOKEN})
 * @param connectTimeout      TCP/TLS connect limit ({@code MAILROOM_HTTP_CONNECT_TIMEOUT})
 * @param requestTimeout      limit for the response once connected ({@code MAILROOM_HTTP_TIMEOUT});
 *                            running out of it is an ambiguous outcome
 * @param conflictRetryAfter  retry hint on HTTP 409, when the provider is still working on a
 *                            request with the same idempotency key ({@code MAILROOM_HTTP_CONFLICT_RETRY_AFTER})
 * @param trustStore          the certificates trusted instead of the JDK's CAs ({@code MAILROOM_HTTP_TRUSTSTORE}),
 *                            or null; the certificate must still be issued for the base URL's host
 */
public record HttpMailConfig(URI baseUrl, String token, Duration connectTimeout, Duration requestTimeout,
                             Duration conflictRetryAfter, TrustStore trustStore) {

    public static final Duration DEFAULT_CONNECT_TIMEOUT = Duration.ofSeconds(5);
    public static final Duration DEFAULT_REQUEST_TIMEOUT = Duration.ofSeconds(15);
    public static final Duration DEFAULT_CONFLICT_RETRY_AFTER = Duration.ofSeconds(2);

    private static final Duration MAX_TIMEOUT = Duration.ofMinutes(5);

    public HttpMailConfig {
        Checks.notNull("MAILROOM_HTTP_BASE_URL", baseUrl);
        String scheme = baseUrl.getScheme();
        if (scheme == null || !(scheme.equalsIgnoreCase("https") || scheme.equalsIgnoreCase("http")) || baseUrl.getHost() == null) {
            throw new InvalidSettingException("MAILROOM_HTTP_BASE_URL", "MAILROOM_HTTP_BASE_URL must be an absolute http(s) URL, got '" + baseUrl + "'");
        }
        if (baseUrl.getRawQuery() != null || baseUrl.getRawFragment() != null || baseUrl.getRawUserInfo() != null) {
            throw new InvalidSettingException("MAILROOM_HTTP_BASE_URL", "MAILROOM_HTTP_BASE_URL must not contain user info, a query or a fragment");
        }
        Checks.notBlank("MAILROOM_HTTP_TOKEN", token);
        for (int i = 0; i < token.length(); i++) {
            char c = token.charAt(i);
            if (c < 0x21 || c > 0x7E) {
                // The message must not echo the token.
                throw new InvalidSettingException("MAILROOM_HTTP_TOKEN", "MAILROOM_HTTP_TOKEN must be printable ASCII without spaces (character at index " + i + " is not)");
            }
        }
        Checks.atMost("MAILROOM_HTTP_CONNECT_TIMEOUT", Checks.positive("MAILROOM_HTTP_CONNECT_TIMEOUT", connectTimeout), MAX_TIMEOUT);
        Checks.atMost("MAILROOM_HTTP_TIMEOUT", Checks.positive("MAILROOM_HTTP_TIMEOUT", requestTimeout), MAX_TIMEOUT);
        Checks.atMost("MAILROOM_HTTP_CONFLICT_RETRY_AFTER", Checks.positive("MAILROOM_HTTP_CONFLICT_RETRY_AFTER", conflictRetryAfter),
                Duration.ofHours(1));
        if (trustStore != null && !scheme.equalsIgnoreCase("https")) {
            throw new InvalidSettingException("MAILROOM_HTTP_TRUSTSTORE",
                    "MAILROOM_HTTP_TRUSTSTORE is set, but MAILROOM_HTTP_BASE_URL is not an https URL");
        }
    }

    public static HttpMailConfig of(URI baseUrl, String token) {
        return new HttpMailConfig(baseUrl, token, DEFAULT_CONNECT_TIMEOUT, DEFAULT_REQUEST_TIMEOUT, DEFAULT_CONFLICT_RETRY_AFTER, null);
    }

    public HttpMailConfig withTimeouts(Duration connectTimeout, Duration requestTimeout) {
        return new HttpMailConfig(baseUrl, token, connectTimeout, requestTimeout, conflictRetryAfter, trustStore);
    }

    public HttpMailConfig withConflictRetryAfter(Duration conflictRetryAfter) {
        return new HttpMailConfig(baseUrl, token, connectTimeout, requestTimeout, conflictRetryAfter, trustStore);
    }

    public HttpMailConfig withTrustStore(TrustStore trustStore) {
        return new HttpMailConfig(baseUrl, token, connectTimeout, requestTimeout, conflictRetryAfter, trustStore);
    }

    public static HttpMailConfig fromEnv(Map<String, String> env) {
        Settings s = new Settings(env);
        String url = s.string("MAILROOM_HTTP_BASE_URL");
        if (url == null) {
            throw new InvalidSettingException("MAILROOM_HTTP_BASE_URL", "MAILROOM_HTTP_BASE_URL is required");
        }
        URI uri;
        try {
            uri = new URI(url);
        } catch (URISyntaxException e) {
            throw new InvalidSettingException("MAILROOM_HTTP_BASE_URL", "MAILROOM_HTTP_BASE_URL is not a URL: '" + url + "'");
        }
        return new HttpMailConfig(uri, s.secret("MAILROOM_HTTP_TOKEN"),
                s.duration("MAILROOM_HTTP_CONNECT_TIMEOUT", DEFAULT_CONNECT_TIMEOUT),
                s.duration("MAILROOM_HTTP_TIMEOUT", DEFAULT_REQUEST_TIMEOUT),
                s.duration("MAILROOM_HTTP_CONFLICT_RETRY_AFTER", DEFAULT_CONFLICT_RETRY_AFTER),
                TrustStore.fromEnv(s, "MAILROOM_HTTP_TRUSTSTORE"));
    }

    @Override
    public String toString() {
        return "HttpMailConfig[baseUrl=" + baseUrl + ", token=" + Settings.mask(token) + ", connectTimeout=" + Settings.format(connectTimeout)
                + ", requestTimeout=" + Settings.format(requestTimeout) + ", conflictRetryAfter=" + Settings.format(conflictRetryAfter)
                + ", trustStore=" + (trustStore == null ? "(JDK default)" : trustStore) + "]";
    }
}
