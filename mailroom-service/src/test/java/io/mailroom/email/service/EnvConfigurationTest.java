package io.mailroom.email.service;

import io.mailroom.outbox.DbTimeouts;
import io.mailroom.outbox.InvalidSettingException;

import io.mailroom.email.EmailAddress;
import io.mailroom.email.config.EmailTopics;
import io.mailroom.email.config.MailSettings;
import io.mailroom.email.resilience.TransportPolicyConfig;
import io.mailroom.email.transport.http.HttpMailConfig;
import io.mailroom.email.transport.smtp.SmtpConfig;
import io.mailroom.email.transport.smtp.SmtpSecurity;
import org.junit.jupiter.api.Test;

import java.net.URI;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** Every configuration record as the service reads it from its environment: defaults, parsing, messages naming the variable, masked secrets. */
class EnvConfigurationTest {

    static Map<String, String> env(String... pairs) {
        Map<String, String> env = new HashMap<>();
        for (int i = 0; i < pairs.length; i += 2) {
            env.put(pairs[i], pairs[i + 1]);
        }
        return env;
    }

    static SmtpConfig smtp(Map<String, String> env) {
        return TransportEnv.smtp(env, SmtpConfig.DEFAULT_POOL_SIZE);
    }

    static HttpMailConfig http(Map<String, String> env) {
        return TransportEnv.http(env, HttpMailConfig.DEFAULT_POOL_SIZE);
    }

    static void assertRejected(Runnable build, String setting, String message) {
        assertThatThrownBy(build::run)
                .isInstanceOf(InvalidSettingException.class)
                .hasMessage(message)
                .extracting(e -> ((InvalidSettingException) e).setting()).isEqualTo(setting);
    }

    @Test
    void dbTimeoutsFromEnvNameTheVariable() {
        DbTimeouts t = DbTopology.timeouts(env("MAILROOM_DB_SOCKET_TIMEOUT", " 20s ", "MAILROOM_DB_ACQUIRE_TIMEOUT", "1s",
                "MAILROOM_DB_CONNECT_TIMEOUT", " ", "MAILROOM_DB_MIGRATION_SOCKET_TIMEOUT", "2h"));
        assertThat(t.socket()).isEqualTo(Duration.ofSeconds(20));
        assertThat(t.acquire()).isEqualTo(Duration.ofSeconds(1));
        assertThat(t.connect()).isEqualTo(DbTimeouts.DEFAULT_CONNECT);
        assertThat(t.migration()).isEqualTo(Duration.ofHours(2));
        assertThat(DbTopology.timeouts(Map.of())).isEqualTo(DbTimeouts.DEFAULTS);
        assertRejected(() -> DbTopology.timeouts(env("MAILROOM_DB_SOCKET_TIMEOUT", "1500ms")), "MAILROOM_DB_SOCKET_TIMEOUT",
                "MAILROOM_DB_SOCKET_TIMEOUT must be whole seconds (pgjdbc's unit), got 1500ms");
        assertRejected(() -> DbTopology.timeouts(env("MAILROOM_DB_SOCKET_TIMEOUT", "0")), "MAILROOM_DB_SOCKET_TIMEOUT",
                "MAILROOM_DB_SOCKET_TIMEOUT must be at least 1s, got 0ms");
        assertRejected(() -> DbTopology.timeouts(env("MAILROOM_DB_LOGIN_TIMEOUT", "2s")), "MAILROOM_DB_LOGIN_TIMEOUT",
                "MAILROOM_DB_LOGIN_TIMEOUT (2s) covers the connect: it must be at least MAILROOM_DB_CONNECT_TIMEOUT (5s)");
        assertRejected(() -> DbTopology.timeouts(env("MAILROOM_DB_KEEPALIVE", "10s")), "MAILROOM_DB_KEEPALIVE",
                "MAILROOM_DB_KEEPALIVE must be at least 30s, got 10s: HikariCP's smallest");
        assertRejected(() -> DbTopology.timeouts(env("MAILROOM_DB_KEEPALIVE", "40m")), "MAILROOM_DB_KEEPALIVE",
                "MAILROOM_DB_KEEPALIVE (40m) must be shorter than MAILROOM_DB_MAX_LIFETIME (30m)");
        assertRejected(() -> DbTopology.timeouts(env("MAILROOM_DB_MAX_LIFETIME", "soon")), "MAILROOM_DB_MAX_LIFETIME",
                "MAILROOM_DB_MAX_LIFETIME must be a duration like 500ms, 10s, 5m or PT10S, got 'soon'");
        assertRejected(() -> ServiceConfig.fromEnv(env("MAILROOM_DB_URL", "jdbc:postgresql://h/db?socketTimeout=x",
                "MAILROOM_SMTP_FROM", "shop@example.com")), "MAILROOM_DB_URL",
                "socketTimeout in the JDBC URL must be whole seconds, got 'x'");
    }

    @Test
    void smtpFromEnvWithDefaults() {
        SmtpConfig c = smtp(env("MAILROOM_SMTP_FROM", "Shop <bounces@Shop.Example.com>"));
        assertThat(c.host()).isEqualTo(SmtpConfig.DEFAULT_HOST);
        assertThat(c.security()).isEqualTo(SmtpSecurity.STARTTLS);
        assertThat(c.port()).isEqualTo(587);
        assertThat(c.from().address()).isEqualTo("bounces@shop.example.com");
        assertThat(c.messageIdDomain()).isEqualTo("shop.example.com");
        assertThat(c.authenticates()).isFalse();
        assertThat(c.readTimeout()).isEqualTo(SmtpConfig.DEFAULT_READ_TIMEOUT);
        assertThat(c.poolSize()).isEqualTo(SmtpConfig.DEFAULT_POOL_SIZE);
    }

    @Test
    void smtpFromEnvReadsEverySetting() {
        SmtpConfig c = smtp(env(
                "MAILROOM_SMTP_HOST", "smtp.example.net", "MAILROOM_SMTP_SECURITY", "tls", "MAILROOM_SMTP_USERNAME", "shop",
                "MAILROOM_SMTP_PASSWORD", "pa ss ", "MAILROOM_SMTP_FROM", "shop@example.com", "MAILROOM_SMTP_MESSAGE_ID_DOMAIN", "mail.example.com",
                "MAILROOM_SMTP_CONNECT_TIMEOUT", "3s", "MAILROOM_SMTP_READ_TIMEOUT", "1500ms", "MAILROOM_SMTP_WRITE_TIMEOUT", "PT20S",
                "MAILROOM_SMTP_POOL_SIZE", "2", "MAILROOM_SMTP_MESSAGES_PER_CONNECTION", "50", "MAILROOM_SMTP_MAX_IDLE", "2m"));
        assertThat(c.port()).isEqualTo(465);
        assertThat(c.password()).isEqualTo("pa ss ");
        assertThat(c.messageIdDomain()).isEqualTo("mail.example.com");
        assertThat(c.connectTimeout()).isEqualTo(Duration.ofSeconds(3));
        assertThat(c.readTimeout()).isEqualTo(Duration.ofMillis(1500));
        assertThat(c.writeTimeout()).isEqualTo(Duration.ofSeconds(20));
        assertThat(c.poolSize()).isEqualTo(2);
        assertThat(c.maxMessagesPerConnection()).isEqualTo(50);
        assertThat(c.maxIdle()).isEqualTo(Duration.ofMinutes(2));
        assertThat(c.toString()).contains("password=****").doesNotContain("pa ss");
    }

    @Test
    void smtpRejectsBadValuesNamingTheSetting() {
        assertRejected(() -> smtp(env("MAILROOM_SMTP_FROM", "s@example.com", "MAILROOM_SMTP_PORT", "0")),
                "MAILROOM_SMTP_PORT", "MAILROOM_SMTP_PORT must be 1..65535, got 0");
        assertRejected(() -> smtp(env("MAILROOM_SMTP_FROM", "s@example.com", "MAILROOM_SMTP_PORT", "smtp")),
                "MAILROOM_SMTP_PORT", "MAILROOM_SMTP_PORT must be an integer, got 'smtp'");
        assertRejected(() -> smtp(env("MAILROOM_SMTP_FROM", "s@example.com", "MAILROOM_SMTP_SECURITY", "SSL")),
                "MAILROOM_SMTP_SECURITY", "MAILROOM_SMTP_SECURITY must be one of [NONE, STARTTLS, TLS], got 'SSL'");
        assertRejected(() -> smtp(env()), "MAILROOM_SMTP_FROM", "MAILROOM_SMTP_FROM is required");
        assertRejected(() -> smtp(env("MAILROOM_SMTP_FROM", "s@example.com", "MAILROOM_SMTP_USERNAME", "shop")),
                "MAILROOM_SMTP_PASSWORD", "MAILROOM_SMTP_USERNAME and MAILROOM_SMTP_PASSWORD must be set together; MAILROOM_SMTP_PASSWORD is missing");
        assertRejected(() -> smtp(env("MAILROOM_SMTP_FROM", "s@example.com", "MAILROOM_SMTP_READ_TIMEOUT", "0s")),
                "MAILROOM_SMTP_READ_TIMEOUT", "MAILROOM_SMTP_READ_TIMEOUT must be a positive duration, got 0ms");
        assertRejected(() -> smtp(env("MAILROOM_SMTP_FROM", "s@example.com", "MAILROOM_SMTP_CONNECT_TIMEOUT", "soon")),
                "MAILROOM_SMTP_CONNECT_TIMEOUT", "MAILROOM_SMTP_CONNECT_TIMEOUT must be a duration like 500ms, 10s, 5m or PT10S, got 'soon'");
        assertRejected(() -> smtp(env("MAILROOM_SMTP_FROM", "s@example.com", "MAILROOM_SMTP_HOST", "smtp host")),
                "MAILROOM_SMTP_HOST", "MAILROOM_SMTP_HOST must be a host name or IP address, got 'smtp host'");
        assertThatThrownBy(() -> smtp(env("MAILROOM_SMTP_FROM", "not an address")))
                .isInstanceOf(InvalidSettingException.class).hasMessageStartingWith("MAILROOM_SMTP_FROM is not a valid address");
        assertRejected(() -> SmtpConfig.builder().from(EmailAddress.of("s@example.com")).poolSize(0).build(),
                "MAILROOM_SMTP_POOL_SIZE", "MAILROOM_SMTP_POOL_SIZE must be 1..64, got 0");
    }

    @Test
    void httpFromEnvMasksTheTokenAndValidatesTheUrl() {
        HttpMailConfig c = http(env("MAILROOM_HTTP_BASE_URL", "https://api.mail.example", "MAILROOM_HTTP_TOKEN", "re_abc123",
                "MAILROOM_HTTP_TIMEOUT", "20s"));
        assertThat(c.baseUrl()).isEqualTo(URI.create("https://api.mail.example"));
        assertThat(c.requestTimeout()).isEqualTo(Duration.ofSeconds(20));
        assertThat(c.connectTimeout()).isEqualTo(HttpMailConfig.DEFAULT_CONNECT_TIMEOUT);
        assertThat(c.conflictRetryAfter()).isEqualTo(HttpMailConfig.DEFAULT_CONFLICT_RETRY_AFTER);
        assertThat(c.toString()).contains("token=****").doesNotContain("re_abc123");

        assertRejected(() -> http(env("MAILROOM_HTTP_TOKEN", "t")), "MAILROOM_HTTP_BASE_URL", "MAILROOM_HTTP_BASE_URL is required");
        assertRejected(() -> http(env("MAILROOM_HTTP_BASE_URL", "https://api.mail.example")),
                "MAILROOM_HTTP_TOKEN", "MAILROOM_HTTP_TOKEN is required");
        assertRejected(() -> http(env("MAILROOM_HTTP_BASE_URL", "ftp://api.mail.example", "MAILROOM_HTTP_TOKEN", "t")),
                "MAILROOM_HTTP_BASE_URL", "MAILROOM_HTTP_BASE_URL must be an absolute http(s) URL, got 'ftp://api.mail.example'");
        assertRejected(() -> http(env("MAILROOM_HTTP_BASE_URL", "https://api.mail.example", "MAILROOM_HTTP_TOKEN", "t",
                        "MAILROOM_HTTP_TIMEOUT", "10m")),
                "MAILROOM_HTTP_TIMEOUT", "MAILROOM_HTTP_TIMEOUT must be at most 5m, got 10m");
        assertThatThrownBy(() -> http(env("MAILROOM_HTTP_BASE_URL", "https://api.mail.example", "MAILROOM_HTTP_TOKEN", "abc\ndef")))
                .isInstanceOf(InvalidSettingException.class).hasMessageNotContaining("abc");
    }

    @Test
    void httpVersionAndPoolSizeFromEnv() {
        HttpMailConfig defaults = http(env("MAILROOM_HTTP_BASE_URL", "https://api.mail.example", "MAILROOM_HTTP_TOKEN", "t"));
        assertThat(defaults.version()).isEqualTo(HttpMailConfig.Version.AUTO);
        assertThat(defaults.poolSize()).isEqualTo(HttpMailConfig.DEFAULT_POOL_SIZE);
        // a service passes its concurrency: one connection per concurrent send unless the pool size is set
        assertThat(TransportEnv.http(env("MAILROOM_HTTP_BASE_URL", "https://api.mail.example", "MAILROOM_HTTP_TOKEN", "t"), 12).poolSize())
                .isEqualTo(12);
        assertThat(TransportEnv.http(env("MAILROOM_HTTP_BASE_URL", "https://api.mail.example", "MAILROOM_HTTP_TOKEN", "t"), 10_000).poolSize())
                .isEqualTo(HttpMailConfig.MAX_POOL_SIZE);
        HttpMailConfig set = TransportEnv.http(env("MAILROOM_HTTP_BASE_URL", "https://api.mail.example", "MAILROOM_HTTP_TOKEN", "t",
                "MAILROOM_HTTP_VERSION", "1.1", "MAILROOM_HTTP_POOL_SIZE", "4"), 12);
        assertThat(set.version()).isEqualTo(HttpMailConfig.Version.HTTP_1_1);
        assertThat(set.poolSize()).isEqualTo(4);
        assertThat(set.toString()).contains("version=1.1", "poolSize=4");
        assertThat(http(env("MAILROOM_HTTP_BASE_URL", "http://127.0.0.1:8080", "MAILROOM_HTTP_TOKEN", "t",
                "MAILROOM_HTTP_VERSION", "2")).version()).isEqualTo(HttpMailConfig.Version.HTTP_2);

        assertRejected(() -> http(env("MAILROOM_HTTP_BASE_URL", "https://api.mail.example", "MAILROOM_HTTP_TOKEN", "t",
                "MAILROOM_HTTP_VERSION", "h2")), "MAILROOM_HTTP_VERSION", "MAILROOM_HTTP_VERSION must be 'auto', '1.1' or '2', got 'h2'");
        assertRejected(() -> http(env("MAILROOM_HTTP_BASE_URL", "https://api.mail.example", "MAILROOM_HTTP_TOKEN", "t",
                "MAILROOM_HTTP_POOL_SIZE", "0")), "MAILROOM_HTTP_POOL_SIZE", "MAILROOM_HTTP_POOL_SIZE must be 1..256, got 0");
    }

    @Test
    void policyFromEnv() {
        TransportPolicyConfig defaults = DispatchEnv.policies(env());
        assertThat(defaults).isEqualTo(TransportPolicyConfig.defaults());
        assertThat(defaults.rateLimit().enabled()).isFalse();

        TransportPolicyConfig c = DispatchEnv.policies(env("MAILROOM_RETRY_ATTEMPTS", "5", "MAILROOM_RETRY_WAIT", "100ms",
                "MAILROOM_RETRY_MAX_WAIT", "1s", "MAILROOM_BREAKER_WINDOW", "50", "MAILROOM_BREAKER_MIN_CALLS", "20",
                "MAILROOM_BREAKER_FAILURE_RATE", "60", "MAILROOM_BREAKER_OPEN_WAIT", "1m", "MAILROOM_BREAKER_HALF_OPEN_CALLS", "5",
                "MAILROOM_BULKHEAD_MAX_CONCURRENT", "4", "MAILROOM_BULKHEAD_MAX_WAIT", "0", "MAILROOM_RATE_LIMIT_PER_SECOND", "10"));
        assertThat(c.retry()).isEqualTo(new TransportPolicyConfig.RetrySettings(5, Duration.ofMillis(100), Duration.ofSeconds(1)));
        assertThat(c.breaker()).isEqualTo(new TransportPolicyConfig.BreakerSettings(50, 20, 60, Duration.ofMinutes(1), 5));
        assertThat(c.bulkhead()).isEqualTo(new TransportPolicyConfig.BulkheadSettings(4, Duration.ZERO));
        assertThat(c.rateLimit().enabled()).isTrue();
        assertThat(c.toString()).contains("retryAttempts=5", "breakerOpenWait=1m", "rateLimitPerSecond=10");

        assertRejected(() -> DispatchEnv.policies(env("MAILROOM_RETRY_ATTEMPTS", "0")),
                "MAILROOM_RETRY_ATTEMPTS", "MAILROOM_RETRY_ATTEMPTS must be 1..10, got 0");
        assertRejected(() -> DispatchEnv.policies(env("MAILROOM_BREAKER_WINDOW", "5", "MAILROOM_BREAKER_MIN_CALLS", "6")),
                "MAILROOM_BREAKER_MIN_CALLS", "MAILROOM_BREAKER_MIN_CALLS must be 1..5, got 6");
        assertRejected(() -> DispatchEnv.policies(env("MAILROOM_BREAKER_FAILURE_RATE", "0")),
                "MAILROOM_BREAKER_FAILURE_RATE", "MAILROOM_BREAKER_FAILURE_RATE must be 1..100, got 0");
        assertRejected(() -> DispatchEnv.policies(env("MAILROOM_RETRY_WAIT", "5s")),
                "MAILROOM_RETRY_WAIT", "MAILROOM_RETRY_WAIT (5s) must not exceed MAILROOM_RETRY_MAX_WAIT (2s)");
    }

    @Test
    void mailSettingsFallBackToTheSmtpSender() {
        MailSettings fromSmtp = DispatchEnv.mail(env("MAILROOM_SMTP_FROM", "Shop <shop@example.com>"));
        assertThat(fromSmtp.from()).isEqualTo(EmailAddress.of("shop@example.com", "Shop"));
        assertThat(fromSmtp.maxBodyBytes()).isEqualTo(MailSettings.DEFAULT_MAX_BODY_BYTES);

        MailSettings own = DispatchEnv.mail(env("MAILROOM_SMTP_FROM", "bounces@example.com", "MAILROOM_MAIL_FROM", "Orders <orders@example.com>",
                "MAILROOM_MAX_BODY_BYTES", "65536"));
        assertThat(own.from().address()).isEqualTo("orders@example.com");
        assertThat(own.maxBodyBytes()).isEqualTo(65536);

        assertRejected(() -> DispatchEnv.mail(env()), "MAILROOM_MAIL_FROM", "MAILROOM_MAIL_FROM (or MAILROOM_SMTP_FROM) is required");
        assertRejected(() -> DispatchEnv.mail(env("MAILROOM_MAIL_FROM", "o@example.com", "MAILROOM_MAX_BODY_BYTES", "10")),
                "MAILROOM_MAX_BODY_BYTES", "MAILROOM_MAX_BODY_BYTES must be 1024..20971520, got 10");
        assertThatThrownBy(() -> DispatchEnv.mail(env("MAILROOM_MAIL_FROM", "not a mailbox")))
                .isInstanceOfSatisfying(InvalidSettingException.class, e -> assertThat(e.setting()).isEqualTo("MAILROOM_MAIL_FROM"))
                .hasMessageStartingWith("MAILROOM_MAIL_FROM is not a valid mailbox");
    }

    @Test
    void everyTemplateIsServedOnItsDefaultTopicAndConfiguredLinesAddOrReplaceTopicsWithoutRemovingAny() {
        java.util.List<String> templates = java.util.List.of("order_cancelled", "order_confirmation", "order_shipped");
        assertThat(DispatchEnv.topics(env()).routesFor(templates)).containsOnlyKeys(
                "email.order_cancelled", "email.order_confirmation", "email.order_shipped");
        assertThat(DispatchEnv.topics(env()).routesFor(templates).get("email.order_shipped"))
                .isEqualTo(new EmailTopics.Route("email.order_shipped", "order_shipped", null));
        assertThat(DispatchEnv.topics(env("MAILROOM_TOPICS", "# nothing yet")).routesFor(templates)).hasSize(3);

        // a line adds a topic and leaves the defaults served: adding one cannot strand another kind's messages
        EmailTopics configured = DispatchEnv.topics(env("MAILROOM_TOPICS",
                "shop.shipped = order_shipped; email.order_confirmation = order_confirmation transport=http from=\"Shop <s@example.com>\""));
        assertThat(configured.routesFor(templates)).containsOnlyKeys(
                "email.order_cancelled", "email.order_confirmation", "email.order_shipped", "shop.shipped");
        EmailTopics.Route replaced = configured.routesFor(templates).get("email.order_confirmation");
        assertThat(replaced.transport()).isEqualTo("http");
        assertThat(replaced.from().address()).isEqualTo("s@example.com");
        assertThat(replaced.transportOr("smtp")).isEqualTo("http");
        assertThat(configured.routesFor(templates).get("email.order_shipped").transportOr("smtp")).isEqualTo("smtp");
        assertThat(configured.namedTransports()).containsExactly("http");
    }

    @Test
    void aTopicsTransportMustBeOneTheServiceKnowsAndIsGivenOnce() {
        assertRejected(() -> DispatchEnv.topics(env("MAILROOM_TOPICS", "email.x = x transport=pigeon")), "MAILROOM_TOPICS",
                "MAILROOM_TOPICS: transport of topic email.x must be one of smtp, http, capture or an ordered list of them"
                        + " such as smtp,http; got 'pigeon'");
        assertRejected(() -> DispatchEnv.topics(env("MAILROOM_TOPICS", "email.x = x transport=smtp,http,smtp")), "MAILROOM_TOPICS",
                "MAILROOM_TOPICS: transport of topic email.x names smtp twice in 'smtp,http,smtp'");
        assertRejected(() -> DispatchEnv.topics(env("MAILROOM_TOPICS", "email.x = x transport=smtp,capture")), "MAILROOM_TOPICS",
                "MAILROOM_TOPICS: transport of topic email.x capture cannot be part of a fallback list ('smtp,capture'):"
                        + " it stands alone, so staging never sends and production never captures");
        assertRejected(() -> DispatchEnv.topics(env("MAILROOM_TOPICS", "email.x = x transport=smtp,,http")), "MAILROOM_TOPICS",
                "MAILROOM_TOPICS: transport of topic email.x must be one of smtp, http, capture or an ordered list of them"
                        + " such as smtp,http; got 'smtp,,http'");
        assertRejected(() -> DispatchEnv.topics(env("MAILROOM_TOPICS", "email.x = x transport=http transport=smtp")), "MAILROOM_TOPICS",
                "MAILROOM_TOPICS: transport is given twice for topic email.x");
        assertRejected(() -> DispatchEnv.topics(env("MAILROOM_TOPICS", "email.x = x transport=")), "MAILROOM_TOPICS",
                "MAILROOM_TOPICS: unknown or empty setting 'transport=' for topic email.x (known: from=\"Name <address>\","
                        + " transport=smtp|http|capture or a list such as smtp,http, suppression=strict|allow-complained)");
    }

    @Test
    void aTopicMayNameAnOrderedListOfProvidersAndTheServiceDefaultMayBeOneToo() {
        EmailTopics topics = DispatchEnv.topics(env("MAILROOM_TOPICS", "email.x = x transport=http,smtp; email.y = y transport=capture"));
        assertThat(topics.routes().get("email.x").transport()).isEqualTo("http,smtp");
        assertThat(topics.routes().get("email.x").transportsOr("smtp")).containsExactly("http", "smtp");
        assertThat(topics.namedTransports()).containsExactly("capture", "http", "smtp");

        assertRejected(() -> ServiceConfig.fromEnv(env("MAILROOM_DB_URL", DB, "MAILROOM_TRANSPORT", "smtp,pigeon")), "MAILROOM_TRANSPORT",
                "MAILROOM_TRANSPORT must be one of smtp, http, capture or an ordered list of them such as smtp,http;"
                        + " got 'smtp,pigeon'");
        assertRejected(() -> ServiceConfig.fromEnv(env("MAILROOM_DB_URL", DB, "MAILROOM_TRANSPORT", "http,http")), "MAILROOM_TRANSPORT",
                "MAILROOM_TRANSPORT names http twice in 'http,http'");

        // a list needs each provider's settings; an unknown outcome of a list with SMTP is handled as SMTP's
        ServiceConfig both = ServiceConfig.fromEnv(env("MAILROOM_DB_URL", DB, "MAILROOM_TRANSPORT", "smtp, http",
                "MAILROOM_SMTP_FROM", "shop@example.com", "MAILROOM_HTTP_BASE_URL", "https://api.example.com", "MAILROOM_HTTP_TOKEN", "t",
                "MAILROOM_TOPICS", "email.y = y transport=capture"));
        assertThat(both.transport()).isEqualTo("smtp,http");
        assertThat(both.firstTransport()).isEqualTo("smtp");
        assertThat(both.transports()).containsExactly("smtp", "http", "capture");
        assertThat(both.ambiguity("smtp,http").mode()).isEqualTo(io.mailroom.email.dispatch.AmbiguityPolicy.Mode.REVIEW);
        assertThat(both.ambiguity("http,smtp").mode()).isEqualTo(io.mailroom.email.dispatch.AmbiguityPolicy.Mode.REVIEW);
        assertThat(both.ambiguity("http").mode()).isEqualTo(io.mailroom.email.dispatch.AmbiguityPolicy.Mode.RESEND_WITH_KEY);
        assertThat(both.ambiguity("capture").mode()).isEqualTo(io.mailroom.email.dispatch.AmbiguityPolicy.Mode.RESEND_WITH_KEY);
    }

    private static final String DB = "jdbc:postgresql://127.0.0.1:5432/mailroom?user=postgres";

    @Test
    void aTopicMayLookPastComplaints_strictByDefault_andAnUnknownPolicyIsRefusedNamingTheLine() {
        EmailTopics topics = DispatchEnv.topics(env("MAILROOM_TOPICS",
                "email.password_reset = password_reset suppression=allow-complained; shop.receipt = order_confirmation"));
        assertThat(topics.routes().get("email.password_reset").suppression())
                .isEqualTo(io.mailroom.delivery.suppression.SuppressionPolicy.ALLOW_COMPLAINED);
        assertThat(topics.routes().get("shop.receipt").suppression())
                .isEqualTo(io.mailroom.delivery.suppression.SuppressionPolicy.STRICT);
        assertThat(topics.routesFor(List.of("order_shipped")).get("email.order_shipped").suppression())
                .isEqualTo(io.mailroom.delivery.suppression.SuppressionPolicy.STRICT);
        assertRejected(() -> DispatchEnv.topics(env("MAILROOM_TOPICS", "email.x = x suppression=never")), "MAILROOM_TOPICS",
                "MAILROOM_TOPICS: topic email.x: suppression=never is not one of strict, allow-complained");
    }

    @Test
    void aTrustStoreVariableIsReadWithItsPasswordAndType_andAStrayOneIsRefusedNamingIt() {
        String setting = "MAILROOM_SMTP_TRUSTSTORE";
        assertThat(TransportEnv.trustStore(new Settings(env()), setting)).as("unset: the JDK's defaults").isNull();
        assertRejected(() -> TransportEnv.trustStore(new Settings(env(setting + "_PASSWORD", "secret")), setting),
                setting + "_PASSWORD", setting + "_PASSWORD is set but " + setting + " is not");
        assertRejected(() -> TransportEnv.trustStore(new Settings(env(setting + "_TYPE", "pem")), setting),
                setting + "_TYPE", setting + "_TYPE is set but " + setting + " is not");
        assertThatThrownBy(() -> TransportEnv.trustStore(new Settings(env(setting, "/nowhere/trust.p12", setting + "_TYPE", "p7b")), setting))
                .isInstanceOfSatisfying(InvalidSettingException.class, e -> assertThat(e.setting()).isEqualTo(setting + "_TYPE"))
                .hasMessageContaining("PKCS12");
        assertThatThrownBy(() -> TransportEnv.trustStore(new Settings(env(setting, "/nowhere/trust.p12")), setting))
                .isInstanceOfSatisfying(InvalidSettingException.class, e -> assertThat(e.setting()).isEqualTo(setting))
                .hasMessageContaining("/nowhere/trust.p12");
    }

    @Test
    void durationsAcceptSeveralSpellings() {
        assertThat(Settings.parseDuration("X", "250ms")).isEqualTo(Duration.ofMillis(250));
        assertThat(Settings.parseDuration("X", "15")).isEqualTo(Duration.ofSeconds(15));
        assertThat(Settings.parseDuration("X", "5m")).isEqualTo(Duration.ofMinutes(5));
        assertThat(Settings.parseDuration("X", "1h")).isEqualTo(Duration.ofHours(1));
        assertThat(Settings.parseDuration("X", "PT0.5S")).isEqualTo(Duration.ofMillis(500));
        assertThat(Settings.format(Duration.ofMillis(1500))).isEqualTo("1500ms");
    }
}
