package io.mailroom.email.service;

import io.mailroom.email.EmailAddress;
import io.mailroom.email.InvalidEmailException;
import io.mailroom.email.transport.TrustStore;
import io.mailroom.email.transport.http.HttpMailConfig;
import io.mailroom.email.transport.smtp.SmtpConfig;
import io.mailroom.email.transport.smtp.SmtpSecurity;
import io.mailroom.email.transport.smtp.Verp;
import io.mailroom.outbox.InvalidSettingException;

import java.net.URI;
import java.net.URISyntaxException;
import java.nio.file.Path;
import java.util.Map;

/**
 * The transports' settings as the service reads them from its environment: {@code MAILROOM_SMTP_*},
 * {@code MAILROOM_HTTP_*} and their truststores. Unset means the record's {@code DEFAULT_*}; a value
 * that is set but wrong is refused naming the variable. The transports themselves take the records.
 */
final class TransportEnv {

    private TransportEnv() {
    }

    /**
     * From {@code MAILROOM_SMTP_*}; {@code defaultPoolSize} when {@code MAILROOM_SMTP_POOL_SIZE} is
     * unset (a service passes its send concurrency: one connection per concurrent send, so no
     * sender waits for a connection while the server would take another).
     */
    static SmtpConfig smtp(Map<String, String> env, int defaultPoolSize) {
        Settings s = new Settings(env);
        SmtpSecurity security = s.enumValue("MAILROOM_SMTP_SECURITY", SmtpSecurity.class, SmtpConfig.DEFAULT_SECURITY);
        String from = s.string("MAILROOM_SMTP_FROM");
        if (from == null) {
            throw new InvalidSettingException("MAILROOM_SMTP_FROM", "MAILROOM_SMTP_FROM is required");
        }
        EmailAddress fromAddress;
        try {
            fromAddress = EmailAddress.parseMailbox(from);
        } catch (InvalidEmailException e) {
            throw new InvalidSettingException("MAILROOM_SMTP_FROM", "MAILROOM_SMTP_FROM is not a valid address: " + e.getMessage());
        }
        return new SmtpConfig(
                s.string("MAILROOM_SMTP_HOST", SmtpConfig.DEFAULT_HOST),
                s.integer("MAILROOM_SMTP_PORT", security.defaultPort()),
                security,
                s.string("MAILROOM_SMTP_USERNAME"),
                s.secret("MAILROOM_SMTP_PASSWORD"),
                fromAddress,
                s.string("MAILROOM_SMTP_MESSAGE_ID_DOMAIN"),
                s.duration("MAILROOM_SMTP_CONNECT_TIMEOUT", SmtpConfig.DEFAULT_CONNECT_TIMEOUT),
                s.duration("MAILROOM_SMTP_READ_TIMEOUT", SmtpConfig.DEFAULT_READ_TIMEOUT),
                s.duration("MAILROOM_SMTP_WRITE_TIMEOUT", SmtpConfig.DEFAULT_WRITE_TIMEOUT),
                s.integer("MAILROOM_SMTP_POOL_SIZE", Math.max(1, Math.min(SmtpConfig.MAX_POOL_SIZE, defaultPoolSize))),
                s.integer("MAILROOM_SMTP_MESSAGES_PER_CONNECTION", SmtpConfig.DEFAULT_MAX_MESSAGES_PER_CONNECTION),
                s.duration("MAILROOM_SMTP_MAX_IDLE", SmtpConfig.DEFAULT_MAX_IDLE),
                trustStore(s, "MAILROOM_SMTP_TRUSTSTORE"),
                s.string("MAILROOM_SMTP_VERP") == null ? null : Verp.parse(s.string("MAILROOM_SMTP_VERP")),
                s.string("MAILROOM_SMTP_HELO_NAME"),
                DkimEnv.dkim(s));
    }

    /**
     * From {@code MAILROOM_HTTP_*}; {@code defaultPoolSize} when {@code MAILROOM_HTTP_POOL_SIZE} is unset (a
     * service passes its send concurrency: one connection per concurrent send, so that none waits for one).
     */
    static HttpMailConfig http(Map<String, String> env, int defaultPoolSize) {
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
                s.duration("MAILROOM_HTTP_CONNECT_TIMEOUT", HttpMailConfig.DEFAULT_CONNECT_TIMEOUT),
                s.duration("MAILROOM_HTTP_TIMEOUT", HttpMailConfig.DEFAULT_REQUEST_TIMEOUT),
                s.duration("MAILROOM_HTTP_CONFLICT_RETRY_AFTER", HttpMailConfig.DEFAULT_CONFLICT_RETRY_AFTER),
                trustStore(s, "MAILROOM_HTTP_TRUSTSTORE"),
                HttpMailConfig.Version.parse(s.string("MAILROOM_HTTP_VERSION", HttpMailConfig.DEFAULT_VERSION.toString())),
                s.integer("MAILROOM_HTTP_POOL_SIZE", Math.max(1, Math.min(HttpMailConfig.MAX_POOL_SIZE, defaultPoolSize))));
    }

    /** The truststore named by {@code setting} in the environment, or null when it is unset. */
    static TrustStore trustStore(Settings s, String setting) {
        String file = s.string(setting);
        String password = s.secret(setting + "_PASSWORD");
        TrustStore.Type type = s.enumValue(setting + "_TYPE", TrustStore.Type.class, TrustStore.DEFAULT_TYPE);
        if (file == null) {
            if (password != null || s.string(setting + "_TYPE") != null) {
                String stray = password != null ? setting + "_PASSWORD" : setting + "_TYPE";
                throw new InvalidSettingException(stray, stray + " is set but " + setting + " is not");
            }
            return null;
        }
        return TrustStore.load(setting, Path.of(file), password, type);
    }
}
