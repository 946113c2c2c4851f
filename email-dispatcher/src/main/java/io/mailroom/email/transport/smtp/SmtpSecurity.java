package io.mailroom.email.transport.smtp;

/** How the SMTP connection is protected. */
public enum SmtpSecurity {
    /** Plain text; only for a local relay or a test server. Default port 25. */
    NONE(25),
    /** Plain connect, then STARTTLS, which is required (no silent fallback to plain text). Default port 587. */
    STARTTLS(587),
    /** TLS from the first byte ("implicit TLS", SMTPS). Default port 465. */
    TLS(465);

    private final int defaultPort;

    SmtpSecurity(int defaultPort) {
        this.defaultPort = defaultPort;
    }

    public int defaultPort() {
        return defaultPort;
    }
}
