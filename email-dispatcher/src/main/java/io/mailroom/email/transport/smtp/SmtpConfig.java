package io.mailroom.email.transport.smtp;

import io.mailroom.email.EmailAddress;
import io.mailroom.email.dkim.DkimSettings;
import io.mailroom.outbox.Checks;
import io.mailroom.outbox.InvalidSettingException;
import io.mailroom.email.config.Formats;
import io.mailroom.email.transport.TrustStore;

import java.time.Duration;
import java.util.regex.Pattern;

/**
 * Settings of the SMTP transport. {@link #toString()} masks the password.
 *
 * @param from                     envelope sender ({@code MAIL FROM}, where bounces go) and default
 *                                 Message-ID domain; the From header comes from the {@code Email}
 * @param messageIdDomain          right-hand side of generated Message-IDs
 * @param poolSize                 connections kept open and reused across sends
 * @param maxMessagesPerConnection a connection is closed after this many messages (servers limit it)
 * @param maxIdle                  an idle connection older than this is closed instead of reused
 * @param trustStore               the certificates trusted instead of the JDK's CAs
 *                                 ({@code MAILROOM_SMTP_TRUSTSTORE}), or null; the server's
 *                                 certificate must still be issued for {@code host}
 * @param verp                     a VERP return path ({@code MAILROOM_SMTP_VERP}) that replaces
 *                                 {@code from} as envelope sender and carries each email's key, or null
 * @param heloName                 the name this client gives in EHLO/HELO ({@code MAILROOM_SMTP_HELO_NAME}):
 *                                 a host name or an address literal ({@code [192.0.2.1]},
 *                                 {@code [IPv6:2001:db8::1]}); null or blank takes {@link #defaultHeloName}.
 *                                 Relays with strict HELO rules (Postfix {@code reject_non_fqdn_helo_hostname})
 *                                 refuse {@code localhost}, Angus's fallback, at every RCPT
 * @param dkim                     the DKIM keys each sender domain's mail is signed with
 *                                 ({@code MAILROOM_DKIM_KEYS}), or null to send unsigned
 */
public record SmtpConfig(String host, int port, SmtpSecurity security, String username, String password,
                         EmailAddress from, String messageIdDomain, Duration connectTimeout, Duration readTimeout,
                         Duration writeTimeout, int poolSize, int maxMessagesPerConnection, Duration maxIdle,
                         TrustStore trustStore, Verp verp, String heloName, DkimSettings dkim) {

    public static final String DEFAULT_HOST = "localhost";
    public static final SmtpSecurity DEFAULT_SECURITY = SmtpSecurity.STARTTLS;
    public static final Duration DEFAULT_CONNECT_TIMEOUT = Duration.ofSeconds(10);
    public static final Duration DEFAULT_READ_TIMEOUT = Duration.ofSeconds(30);
    public static final Duration DEFAULT_WRITE_TIMEOUT = Duration.ofSeconds(30);
    /** One connection per send the bulkhead lets through at once: a larger pool is never used, a smaller one makes sends wait. */
    public static final int DEFAULT_POOL_SIZE = io.mailroom.email.resilience.TransportPolicyConfig.BulkheadSettings.DEFAULT_MAX_CONCURRENT;
    public static final int MAX_POOL_SIZE = 64;
    public static final int DEFAULT_MAX_MESSAGES_PER_CONNECTION = 100;
    public static final Duration DEFAULT_MAX_IDLE = Duration.ofSeconds(60);

    private static final Duration MAX_TIMEOUT = Duration.ofMinutes(10);
    private static final Pattern HOST = Pattern.compile("[A-Za-z0-9.:\\[\\]_-]{1,253}");
    private static final Pattern HELO_HOST = Pattern.compile("(?i)[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?(\\.[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?)*\\.?");
    private static final Pattern HELO_LITERAL = Pattern.compile("\\[((\\d{1,3}\\.){3}\\d{1,3}|IPv6:[0-9A-Fa-f:.]{2,45})]");
    private static final Pattern DOMAIN = Pattern.compile("[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?(\\.[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?)*");

    public SmtpConfig {
        if (host == null || !HOST.matcher(host).matches()) {
            throw new InvalidSettingException("MAILROOM_SMTP_HOST", "MAILROOM_SMTP_HOST must be a host name or IP address, got '" + host + "'");
        }
        Checks.range("MAILROOM_SMTP_PORT", port, 1, 65535);
        Checks.notNull("MAILROOM_SMTP_SECURITY", security);
        if (username != null && username.isEmpty()) {
            username = null;
        }
        if (password != null && password.isEmpty()) {
            password = null;
        }
        if ((username == null) != (password == null)) {
            String missing = username == null ? "MAILROOM_SMTP_USERNAME" : "MAILROOM_SMTP_PASSWORD";
            throw new InvalidSettingException(missing, "MAILROOM_SMTP_USERNAME and MAILROOM_SMTP_PASSWORD must be set together; " + missing + " is missing");
        }
        Checks.notNull("MAILROOM_SMTP_FROM", from);
        if (messageIdDomain == null || messageIdDomain.isBlank()) {
            messageIdDomain = from.domain();
        }
        if (!DOMAIN.matcher(messageIdDomain).matches()) {
            throw new InvalidSettingException("MAILROOM_SMTP_MESSAGE_ID_DOMAIN",
                    "MAILROOM_SMTP_MESSAGE_ID_DOMAIN must be a lower-case domain name, got '" + messageIdDomain + "'");
        }
        Checks.atMost("MAILROOM_SMTP_CONNECT_TIMEOUT", Checks.positive("MAILROOM_SMTP_CONNECT_TIMEOUT", connectTimeout), MAX_TIMEOUT);
        Checks.atMost("MAILROOM_SMTP_READ_TIMEOUT", Checks.positive("MAILROOM_SMTP_READ_TIMEOUT", readTimeout), MAX_TIMEOUT);
        Checks.atMost("MAILROOM_SMTP_WRITE_TIMEOUT", Checks.positive("MAILROOM_SMTP_WRITE_TIMEOUT", writeTimeout), MAX_TIMEOUT);
        Checks.range("MAILROOM_SMTP_POOL_SIZE", poolSize, 1, MAX_POOL_SIZE);
        Checks.range("MAILROOM_SMTP_MESSAGES_PER_CONNECTION", maxMessagesPerConnection, 1, 100_000);
        Checks.positive("MAILROOM_SMTP_MAX_IDLE", maxIdle);
        if (heloName == null || heloName.isBlank()) {
            heloName = defaultHeloName(messageIdDomain);
        }
        if (heloName.length() > 253 || !(HELO_HOST.matcher(heloName).matches() || HELO_LITERAL.matcher(heloName).matches())) {
            throw new InvalidSettingException("MAILROOM_SMTP_HELO_NAME", "MAILROOM_SMTP_HELO_NAME must be a host name"
                    + " (this host's fully qualified name, e.g. mailer.shop.example) or an address literal such as"
                    + " [192.0.2.1], got '" + heloName + "'");
        }
        if (trustStore != null && security == SmtpSecurity.NONE) {
            throw new InvalidSettingException("MAILROOM_SMTP_TRUSTSTORE",
                    "MAILROOM_SMTP_TRUSTSTORE is set, but MAILROOM_SMTP_SECURITY=NONE does not use TLS");
        }
    }

    /**
     * The EHLO name when {@code MAILROOM_SMTP_HELO_NAME} is unset: this machine's fully qualified
     * name if it has one (a canonical host name with a dot, not {@code localhost.*} and not an IP
     * address), else {@code messageIdDomain} (by default the domain of {@code MAILROOM_SMTP_FROM}),
     * a name the sender owns and that strict relays accept as fully qualified.
     */
    public static String defaultHeloName(String messageIdDomain) {
        return defaultHeloName(localCanonicalName(), messageIdDomain);
    }

    static String defaultHeloName(String canonicalHostName, String messageIdDomain) {
        String name = canonicalHostName == null ? "" : canonicalHostName.strip().toLowerCase(java.util.Locale.ROOT);
        boolean fqdn = name.indexOf('.') > 0 && !name.startsWith("localhost") && !name.matches("[0-9.]+|.*:.*")
                && HELO_HOST.matcher(name).matches();
        return fqdn ? name : messageIdDomain;
    }

    private static String localCanonicalName() {
        try {
            return java.net.InetAddress.getLocalHost().getCanonicalHostName();
        } catch (java.io.IOException | RuntimeException e) {
            return null;
        }
    }

    public boolean authenticates() {
        return username != null;
    }

    public static Builder builder() {
        return new Builder();
    }

    @Override
    public String toString() {
        return "SmtpConfig[host=" + host + ", port=" + port + ", security=" + security + ", username=" + username
                + ", password=" + Formats.mask(password) + ", from=" + from.address() + ", messageIdDomain=" + messageIdDomain
                + ", connectTimeout=" + Formats.format(connectTimeout) + ", readTimeout=" + Formats.format(readTimeout)
                + ", writeTimeout=" + Formats.format(writeTimeout) + ", poolSize=" + poolSize
                + ", maxMessagesPerConnection=" + maxMessagesPerConnection + ", maxIdle=" + Formats.format(maxIdle)
                + ", trustStore=" + (trustStore == null ? "(JDK default)" : trustStore)
                + ", verp=" + (verp == null ? "(off)" : verp) + ", heloName=" + heloName
                + ", dkim=" + (dkim == null ? "(off)" : dkim) + "]";
    }

    /** Builds a config from the defaults; {@link #build()} validates. The port defaults to the security's port. */
    public static final class Builder {
        private String host = DEFAULT_HOST;
        private Integer port;
        private SmtpSecurity security = DEFAULT_SECURITY;
        private String username;
        private String password;
        private EmailAddress from;
        private String messageIdDomain;
        private Duration connectTimeout = DEFAULT_CONNECT_TIMEOUT;
        private Duration readTimeout = DEFAULT_READ_TIMEOUT;
        private Duration writeTimeout = DEFAULT_WRITE_TIMEOUT;
        private int poolSize = DEFAULT_POOL_SIZE;
        private int maxMessagesPerConnection = DEFAULT_MAX_MESSAGES_PER_CONNECTION;
        private Duration maxIdle = DEFAULT_MAX_IDLE;
        private TrustStore trustStore;
        private Verp verp;
        private String heloName;
        private DkimSettings dkim;

        private Builder() {
        }

        public Builder host(String host) { this.host = host; return this; }
        public Builder port(int port) { this.port = port; return this; }
        public Builder security(SmtpSecurity security) { this.security = security; return this; }
        public Builder credentials(String username, String password) { this.username = username; this.password = password; return this; }
        public Builder from(EmailAddress from) { this.from = from; return this; }
        public Builder messageIdDomain(String domain) { this.messageIdDomain = domain; return this; }
        public Builder connectTimeout(Duration d) { this.connectTimeout = d; return this; }
        public Builder readTimeout(Duration d) { this.readTimeout = d; return this; }
        public Builder writeTimeout(Duration d) { this.writeTimeout = d; return this; }
        public Builder poolSize(int n) { this.poolSize = n; return this; }
        public Builder maxMessagesPerConnection(int n) { this.maxMessagesPerConnection = n; return this; }
        public Builder maxIdle(Duration d) { this.maxIdle = d; return this; }
        public Builder trustStore(TrustStore t) { this.trustStore = t; return this; }
        public Builder verp(Verp v) { this.verp = v; return this; }
        public Builder heloName(String name) { this.heloName = name; return this; }
        public Builder dkim(DkimSettings d) { this.dkim = d; return this; }

        public SmtpConfig build() {
            SmtpSecurity sec = security == null ? DEFAULT_SECURITY : security;
            return new SmtpConfig(host, port == null ? sec.defaultPort() : port, security, username, password, from,
                    messageIdDomain, connectTimeout, readTimeout, writeTimeout, poolSize, maxMessagesPerConnection, maxIdle, trustStore, verp, heloName, dkim);
        }
    }
}
