package io.mailroom.email.service;

import io.mailroom.email.EmailAddress;
import io.mailroom.email.InvalidEmailException;
import io.mailroom.email.config.EmailTopics;
import io.mailroom.email.config.MailSettings;
import io.mailroom.email.resilience.TransportPolicyConfig;
import io.mailroom.outbox.InvalidSettingException;

import java.io.IOException;
import java.nio.charset.MalformedInputException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * What the dispatcher sends and how it guards the transport, as the service reads it from its
 * environment: the topics and templates ({@code MAILROOM_TOPICS}, {@code MAILROOM_TOPICS_FILE},
 * {@code MAILROOM_TEMPLATES_DIR}), the sender and body limit ({@code MAILROOM_MAIL_FROM},
 * {@code MAILROOM_MAX_BODY_BYTES}) and the transport policies ({@code MAILROOM_RETRY_*},
 * {@code MAILROOM_BREAKER_*}, {@code MAILROOM_BULKHEAD_*}, {@code MAILROOM_RATE_LIMIT_*}).
 */
final class DispatchEnv {

    static final String TOPICS = "MAILROOM_TOPICS";
    static final String TOPICS_FILE = "MAILROOM_TOPICS_FILE";
    static final String TEMPLATES_DIR = "MAILROOM_TEMPLATES_DIR";

    private DispatchEnv() {
    }

    static EmailTopics topics(Map<String, String> env) {
        Settings s = new Settings(env);
        Path dir = null;
        String d = s.string(TEMPLATES_DIR);
        if (d != null) {
            dir = Path.of(d);
            if (!Files.isDirectory(dir)) {
                throw new InvalidSettingException(TEMPLATES_DIR, TEMPLATES_DIR + " must name a directory, got '" + d + "'");
            }
        }
        Map<String, EmailTopics.Route> routes = new LinkedHashMap<>();
        String file = s.string(TOPICS_FILE);
        if (file != null) {
            List<String> lines;
            try {
                lines = Files.readAllLines(Path.of(file), StandardCharsets.UTF_8);
            } catch (MalformedInputException e) {
                throw new InvalidSettingException(TOPICS_FILE, TOPICS_FILE + " '" + file + "' is not UTF-8");
            } catch (IOException e) {
                throw new InvalidSettingException(TOPICS_FILE, TOPICS_FILE + " '" + file + "' cannot be read: " + e);
            }
            EmailTopics.parse(TOPICS_FILE + " " + file, lines, routes);
        }
        String inline = s.string(TOPICS);
        if (inline != null) {
            EmailTopics.parse(TOPICS, List.of(inline.split("[;\\n]")), routes);
        }
        return new EmailTopics(dir, routes);
    }

    static MailSettings mail(Map<String, String> env) {
        Settings s = new Settings(env);
        String fromVar = s.string("MAILROOM_MAIL_FROM") != null ? "MAILROOM_MAIL_FROM" : "MAILROOM_SMTP_FROM";
        String mailbox = s.string(fromVar);
        if (mailbox == null) {
            throw new InvalidSettingException("MAILROOM_MAIL_FROM", "MAILROOM_MAIL_FROM (or MAILROOM_SMTP_FROM) is required");
        }
        EmailAddress from;
        try {
            from = EmailAddress.parseMailbox(mailbox);
        } catch (InvalidEmailException e) {
            throw new InvalidSettingException(fromVar, fromVar + " is not a valid mailbox: " + e.getMessage());
        }
        return new MailSettings(from, s.integer("MAILROOM_MAX_BODY_BYTES", (int) MailSettings.DEFAULT_MAX_BODY_BYTES));
    }

    static TransportPolicyConfig policies(Map<String, String> env) {
        Settings s = new Settings(env);
        return new TransportPolicyConfig(
                new TransportPolicyConfig.RetrySettings(
                        s.integer("MAILROOM_RETRY_ATTEMPTS", TransportPolicyConfig.RetrySettings.DEFAULT_ATTEMPTS),
                        s.duration("MAILROOM_RETRY_WAIT", TransportPolicyConfig.RetrySettings.DEFAULT_WAIT),
                        s.duration("MAILROOM_RETRY_MAX_WAIT", TransportPolicyConfig.RetrySettings.DEFAULT_MAX_WAIT)),
                new TransportPolicyConfig.BreakerSettings(
                        s.integer("MAILROOM_BREAKER_WINDOW", TransportPolicyConfig.BreakerSettings.DEFAULT_WINDOW),
                        s.integer("MAILROOM_BREAKER_MIN_CALLS", TransportPolicyConfig.BreakerSettings.DEFAULT_MIN_CALLS),
                        s.integer("MAILROOM_BREAKER_FAILURE_RATE", TransportPolicyConfig.BreakerSettings.DEFAULT_FAILURE_RATE_PERCENT),
                        s.duration("MAILROOM_BREAKER_OPEN_WAIT", TransportPolicyConfig.BreakerSettings.DEFAULT_OPEN_WAIT),
                        s.integer("MAILROOM_BREAKER_HALF_OPEN_CALLS", TransportPolicyConfig.BreakerSettings.DEFAULT_HALF_OPEN_CALLS)),
                new TransportPolicyConfig.BulkheadSettings(
                        s.integer("MAILROOM_BULKHEAD_MAX_CONCURRENT", TransportPolicyConfig.BulkheadSettings.DEFAULT_MAX_CONCURRENT),
                        s.duration("MAILROOM_BULKHEAD_MAX_WAIT", TransportPolicyConfig.BulkheadSettings.DEFAULT_MAX_WAIT)),
                new TransportPolicyConfig.RateLimitSettings(
                        s.integer("MAILROOM_RATE_LIMIT_PER_SECOND", TransportPolicyConfig.RateLimitSettings.DEFAULT_PER_SECOND),
                        s.duration("MAILROOM_RATE_LIMIT_TIMEOUT", TransportPolicyConfig.RateLimitSettings.DEFAULT_TIMEOUT)));
    }
}
