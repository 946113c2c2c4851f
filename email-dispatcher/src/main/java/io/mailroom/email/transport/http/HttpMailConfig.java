package io.mailroom.email.transport.http;

import io.mailroom.outbox.Checks;
import io.mailroom.outbox.InvalidSettingException;
import io.mailroom.email.config.Formats;
import io.mailroom.email.transport.TrustStore;

import java.net.URI;
import java.time.Duration;

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
 * @param version             which HTTP the transport speaks ({@code MAILROOM_HTTP_VERSION}), see {@link Version}
 * @param poolSize            connections to the provider kept open and reused ({@code MAILROOM_HTTP_POOL_SIZE}); a
 *                            service passes its send concurrency, so that no send waits for a connection. HTTP/2
 *                            carries concurrent sends as streams of one connection and opens more only when the
 *                            provider's stream limit is reached, never more than this
 */
public record HttpMailConfig(URI baseUrl, String token, Duration connectTimeout, Duration requestTimeout,
                             Duration conflictRetryAfter, TrustStore trustStore, Version version, int poolSize) {

    public static final Duration DEFAULT_CONNECT_TIMEOUT = Duration.ofSeconds(5);
    public static final Duration DEFAULT_REQUEST_TIMEOUT = Duration.ofSeconds(15);
    public static final Duration DEFAULT_CONFLICT_RETRY_AFTER = Duration.ofSeconds(2);
    public static final Version DEFAULT_VERSION = Version.AUTO;
    /** The dispatcher's default concurrency: one connection per concurrent send. */
    public static final int DEFAULT_POOL_SIZE = 32;
    public static final int MAX_POOL_SIZE = 256;

    private static final Duration MAX_TIMEOUT = Duration.ofMinutes(5);

    /**
     * {@code MAILROOM_HTTP_VERSION}.
     * <ul>
     *   <li>{@code auto}: over https, HTTP/2 when the provider offers it in the TLS handshake (ALPN), HTTP/1.1
     *       otherwise; over plain http, HTTP/1.1. Cleartext HTTP/2 is not tried on its own: prior knowledge fails
     *       every request to a server without it, and the {@code Upgrade: h2c} handshake (dropped by RFC 9113)
     *       is ignored by servers on a request with a body, such as every send;</li>
     *   <li>{@code 1.1}: HTTP/1.1 only, one request per connection at a time;</li>
     *   <li>{@code 2}: HTTP/2 only: offered alone by ALPN over https (a provider without it fails the handshake,
     *       {@code http-tls}), or spoken with prior knowledge over plain http (to a proxy or sidecar known to
     *       speak it).</li>
     * </ul>
     */
    public enum Version {
        AUTO("auto"), HTTP_1_1("1.1"), HTTP_2("2");

        private final String setting;

        Version(String setting) {
            this.setting = setting;
        }

        public static Version parse(String value) {
            for (Version v : values()) {
                if (v.setting.equals(value == null ? null : value.strip())) {
                    return v;
                }
            }
            throw new InvalidSettingException("MAILROOM_HTTP_VERSION",
                    "MAILROOM_HTTP_VERSION must be 'auto', '1.1' or '2', got '" + value + "'");
        }

        @Override
        public String toString() {
            return setting;
        }
    }

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
        Checks.notNull("MAILROOM_HTTP_VERSION", version);
        Checks.range("MAILROOM_HTTP_POOL_SIZE", poolSize, 1, MAX_POOL_SIZE);
    }

    public static HttpMailConfig of(URI baseUrl, String token) {
        return new HttpMailConfig(baseUrl, token, DEFAULT_CONNECT_TIMEOUT, DEFAULT_REQUEST_TIMEOUT, DEFAULT_CONFLICT_RETRY_AFTER, null,
                DEFAULT_VERSION, DEFAULT_POOL_SIZE);
    }

    public HttpMailConfig withTimeouts(Duration connectTimeout, Duration requestTimeout) {
        return new HttpMailConfig(baseUrl, token, connectTimeout, requestTimeout, conflictRetryAfter, trustStore, version, poolSize);
    }

    public HttpMailConfig withConflictRetryAfter(Duration conflictRetryAfter) {
        return new HttpMailConfig(baseUrl, token, connectTimeout, requestTimeout, conflictRetryAfter, trustStore, version, poolSize);
    }

    public HttpMailConfig withTrustStore(TrustStore trustStore) {
        return new HttpMailConfig(baseUrl, token, connectTimeout, requestTimeout, conflictRetryAfter, trustStore, version, poolSize);
    }

    public HttpMailConfig withVersion(Version version) {
        return new HttpMailConfig(baseUrl, token, connectTimeout, requestTimeout, conflictRetryAfter, trustStore, version, poolSize);
    }

    public HttpMailConfig withPoolSize(int poolSize) {
        return new HttpMailConfig(baseUrl, token, connectTimeout, requestTimeout, conflictRetryAfter, trustStore, version, poolSize);
    }

    /** Whether the base URL is https (TLS, and HTTP/2 negotiable by ALPN). */
    public boolean secure() {
        return baseUrl.getScheme().equalsIgnoreCase("https");
    }

    @Override
    public String toString() {
        return "HttpMailConfig[baseUrl=" + baseUrl + ", token=" + Formats.mask(token) + ", connectTimeout=" + Formats.format(connectTimeout)
                + ", requestTimeout=" + Formats.format(requestTimeout) + ", conflictRetryAfter=" + Formats.format(conflictRetryAfter)
                + ", trustStore=" + (trustStore == null ? "(JDK default)" : trustStore) + ", version=" + version
                + ", poolSize=" + poolSize + "]";
    }
}
